//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/stage"
)

// Retuning a chain on the device (package stage has the semantics): the
// explicit transport takes the accepted changes with the first block it
// has not yet handed to the device, and ChainFilter.Retune applies them
// on that block's stream, after the block's wait for the block before it
// and before its launch. Every earlier launch has finished by then (each
// block's stream waits for the one before), so the new taps are copied
// over the op's one tap buffer in stream order, and every later launch
// reads them. That launch is where the stage's input reaches K: a fir's
// first output there is the first with m·M ≥ K, a bank's first frame the
// first with n·D ≥ K, and a shift's phase is resumed at K from the old
// frequency's phase there.
//
// The history each op keeps is its filter's (Q−1 samples, P·M−1 for a
// bank), so a retune may bring at most the running tap count, rounded up
// to whole branches; shorter filters are zero-padded.

// maxTaps is the most taps a retune of op's filter or bank may bring.
func (op *chainOp) maxTaps() int {
	if op.kind == opBank {
		return int(op.bp * op.bm)
	}
	return int(op.q * op.l)
}

// retuneOp returns the op that the change r retunes: nil, with no error,
// for a select (the bank's kernel writes the channels it keeps, and a
// retune cannot change them).
func (f *ChainFilter) retuneOp(r stage.Retune) (*chainOp, error) {
	for i := range f.ops {
		op := &f.ops[i]
		switch {
		case op.shiftAt == r.Index:
			return op, nil
		case op.at != r.Index:
		case !op.tune:
			return nil, fmt.Errorf("%w: %s stages cannot be retuned on cuda yet (stage %d)", stage.ErrRetuneUnsupported, r.Stage.Kind, r.Index)
		case len(r.Stage.Taps) > op.maxTaps():
			return nil, &stage.StageError{Index: r.Index, Field: "taps", Msg: fmt.Sprintf(
				"%d taps: a running %s stage on cuda keeps the history for at most %d (its own taps, in whole branches)", len(r.Stage.Taps), r.Stage.Kind, op.maxTaps())}
		default:
			return op, nil
		}
	}
	if chainKernels[r.Stage.Kind] == kernelSelect {
		return nil, nil
	}
	return nil, fmt.Errorf("%w: stage %d (%s) has nothing to retune on cuda", stage.ErrRetuneUnsupported, r.Index, r.Stage.Kind)
}

// CheckRetune reports whether Retune can apply the changes, each checked
// by stage.CheckRetune against the chain: a shift, or a fir or channelize
// stage whose new taps fit the history its op keeps (see above). It reads
// only what NewChainFilter fixed, so it may run on any goroutine.
func (f *ChainFilter) CheckRetune(changes []stage.Retune) error {
	for _, r := range changes {
		if _, err := f.retuneOp(r); err != nil {
			return err
		}
	}
	return nil
}

// Retune applies the changes (see CheckRetune) from the next Launch on:
// the new taps' copies are enqueued on st, which must be ordered after
// every earlier launch, with the next Launch on st or after it. A later
// retune of the same op waits for the previous one's copy (its host
// buffer must stay valid until then).
func (f *ChainFilter) Retune(st cudrv.Stream, changes []stage.Retune) error {
	for _, r := range changes {
		op, err := f.retuneOp(r)
		if err != nil || op == nil {
			return err
		}
		if op.shiftAt == r.Index {
			sh, cps, err := newShifter(r.Stage, op.rate, op.inCplx)
			if err != nil {
				return fmt.Errorf("gpu: chain stage %d (shift): %w", r.Index, err)
			}
			sh.Resume(op.t, op.shift.Phase(op.t))
			op.shift, op.cps = sh, cps
			continue
		}
		var taps []float32
		if op.kind == opBank {
			padded := make([]float32, op.maxTaps())
			copy(padded, r.Stage.Taps)
			taps = filter.BankTaps(padded, int(op.bm))
		} else {
			taps = polyBranches(r.Stage.Taps, op.l, op.q)
		}
		if err := f.stageTaps(st, op, taps); err != nil {
			return fmt.Errorf("gpu: chain stage %d (%s): %w", r.Index, r.Stage.Kind, err)
		}
	}
	return nil
}

// stageTaps enqueues the copy of taps over op's tap buffer on st.
func (f *ChainFilter) stageTaps(st cudrv.Stream, op *chainOp, taps []float32) error {
	if op.copied == (cudrv.Event{}) {
		e, err := cudrv.NewEvent(cudrv.EventDisableTiming)
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		op.copied = e
		f.events = append(f.events, e)
	} else if err := op.copied.Synchronize(); err != nil {
		return fmt.Errorf("wait for the previous retune's copy: %w", err)
	}
	op.staged = taps
	if err := st.CopyHtoD(op.branches, unsafe.Pointer(&taps[0]), int64(len(taps))*4); err != nil {
		return fmt.Errorf("copy taps: %w", err)
	}
	if err := op.copied.Record(st); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}
