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

// retuneOp returns the op that the change r retunes. A select has none
// (it is fused into the bank) and is refused, as on the CPU.
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
	return nil, fmt.Errorf("%w: %s stages cannot be retuned on cuda (stage %d)", stage.ErrRetuneUnsupported, r.Stage.Kind, r.Index)
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

// AcceptRetune is CheckRetune for changes that apply from chain input
// frame at, and records them: a shift fused into the filter after it
// retunes again only once its last retune has left that filter's history
// (Q−1 of its input samples), as the kernel keeps one earlier shift for
// the history. Calls must be serialised (the explicit transport's retune
// lock); several at the same input sample of the shift are one retune.
func (f *ChainFilter) AcceptRetune(changes []stage.Retune, at int64) error {
	if err := f.CheckRetune(changes); err != nil {
		return err
	}
	for _, r := range changes {
		op, _ := f.retuneOp(r)
		if op.kind != opPoly || op.shiftAt != r.Index || op.lastShiftAt < 0 {
			continue
		}
		// 0: the same input sample (one retune, as at the same frame).
		if gap := f.chain.InputAt(r.Index, at) - f.chain.InputAt(r.Index, op.lastShiftAt); gap > 0 && gap < int64(op.hist) {
			return fmt.Errorf("%w: stage %d (shift) runs fused into the filter after it on cuda, and retunes again once that filter's history (%d samples) is past its last retune: %d samples later here",
				stage.ErrRetuneUnsupported, r.Index, op.hist, gap)
		}
	}
	for _, r := range changes {
		if op, _ := f.retuneOp(r); op.shiftAt == r.Index {
			op.lastShiftAt = at
		}
	}
	return nil
}

// Retune applies the changes (see CheckRetune) from the next Launch on:
// the new taps' copies are enqueued on st, which must be ordered after
// every earlier launch, with the next Launch on st or after it. The
// copies come from each op's pinned staging buffer (a pageable copy would
// wait for the stream); a later retune of the same op waits for the
// previous one's copy before it rewrites that buffer.
func (f *ChainFilter) Retune(st cudrv.Stream, changes []stage.Retune) error {
	for _, r := range changes {
		op, err := f.retuneOp(r)
		if err != nil {
			return err
		}
		if op.shiftAt == r.Index {
			sh, cps, err := newShifter(r.Stage, op.rate, op.inCplx)
			if err != nil {
				return fmt.Errorf("gpu: chain stage %d (shift): %w", r.Index, err)
			}
			sh.Resume(op.t, op.shift.Phase(op.t))
			if op.kind == opPoly && (op.prev == nil || op.shiftK != op.t) {
				// Fused: the history keeps the shift it had (a second
				// retune at the same sample keeps the first's prev).
				op.prev, op.prevCps, op.shiftK = op.shift, op.cps, op.t
			}
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

// stageTaps enqueues the copy of taps over op's tap buffer on st, through
// op's pinned staging buffer (made at the op's first retune).
func (f *ChainFilter) stageTaps(st cudrv.Stream, op *chainOp, taps []float32) error {
	if op.staged == nil {
		e, err := cudrv.NewEvent(cudrv.EventDisableTiming)
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		f.events = append(f.events, e)
		h, err := cudrv.AllocHost(int64(len(taps))*4, false, false)
		if err != nil {
			return fmt.Errorf("pin the taps' staging: %w", err)
		}
		f.host = append(f.host, h)
		op.copied, op.staged = e, unsafe.Slice((*float32)(h.Ptr()), len(taps))
	} else if err := op.copied.Synchronize(); err != nil {
		return fmt.Errorf("wait for the previous retune's copy: %w", err)
	}
	copy(op.staged, taps)
	if err := st.CopyHtoD(op.branches, unsafe.Pointer(&op.staged[0]), int64(len(taps))*4); err != nil {
		return fmt.Errorf("copy taps: %w", err)
	}
	if err := op.copied.Record(st); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}
