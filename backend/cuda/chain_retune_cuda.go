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
// on the run stream, where the kernels go in block order, before that
// block's launch. Every earlier launch has finished by then, so the new
// taps are copied
// over the op's one tap buffer in stream order, and every later launch
// reads them. That launch is where the stage's input reaches K: a fir's
// first output there is the first with m·M ≥ K, a bank's first frame the
// first with n·D ≥ K, and a shift's phase is resumed at K from the old
// frequency's phase there.
//
// Each retunable op keeps the history of ChainRetuneTaps taps, or of its
// own if it started with more (in whole branches), so a retune may bring
// any tap count up to that: the launches after it take the new count of
// taps per branch (a polyphase op its tile too) and read the end of the
// history they need. A bank keeps the path (fused or split) it started on.
//
// A shift fused into the filter after it: the kernel shifts the filter's
// input as it reads it, the history before the last shift retune with the
// shift before it (one kept), so every filter output must see at most the
// last two. A shift retunes again once the filter in force from then on
// has left the last retune behind (Q−1 of its input samples), and a filter
// grows to Q' taps per branch only where its window, Q'−1 samples back,
// does not reach the shift retune before the last.

// maxTaps is the most taps a retune of op's filter or bank may bring.
func (op *chainOp) maxTaps() int {
	if op.kind == opBank {
		return int(op.pcap * op.bm)
	}
	return int(op.qcap * op.l)
}

// branchesFor is the taps per branch of a filter of n taps in op.
func (op *chainOp) branchesFor(n int) int64 {
	if op.kind == opBank {
		return (int64(n) + op.bm - 1) / op.bm
	}
	return (int64(n) + op.l - 1) / op.l
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
				"%d taps: a running %s stage on cuda keeps the history for at most %d (its own taps, or up to %d in %d KiB of history a block; in whole branches)",
				len(r.Stage.Taps), r.Stage.Kind, op.maxTaps(), ChainRetuneTaps, ChainRetuneHistoryBytes>>10)}
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
// frame at, and records them, with the rules for a shift fused into the
// filter after it (above). Calls must be serialised (the explicit
// transport's retune lock); several at the same input sample of the shift
// are one retune.
func (f *ChainFilter) AcceptRetune(changes []stage.Retune, at int64) error {
	if err := f.CheckRetune(changes); err != nil {
		return err
	}
	for i := range f.ops {
		if err := f.checkFused(&f.ops[i], changes, at); err != nil {
			return err
		}
	}
	for i := range f.ops {
		op := &f.ops[i]
		if op.kind != opPoly {
			continue
		}
		for _, r := range changes {
			switch r.Index {
			case op.shiftAt:
				if op.lastShiftAt >= 0 && f.chain.InputAt(r.Index, at) != f.chain.InputAt(r.Index, op.lastShiftAt) {
					op.shiftAtBack = op.lastShiftAt
				}
				op.lastShiftAt = at
			case op.at:
				op.acceptQ = op.branchesFor(len(r.Stage.Taps))
			}
		}
	}
	return nil
}

// checkFused applies the rules for a shift fused into op's filter (above)
// to changes at chain frame at, against the retunes accepted before.
func (f *ChainFilter) checkFused(op *chainOp, changes []stage.Retune, at int64) error {
	if op.kind != opPoly || op.shift == nil {
		return nil
	}
	q, taps, shifted := op.acceptQ, 0, false
	for _, r := range changes {
		switch r.Index {
		case op.shiftAt:
			shifted = true
		case op.at:
			q, taps = op.branchesFor(len(r.Stage.Taps)), len(r.Stage.Taps)
		}
	}
	in := func(frame int64) int64 { return f.chain.InputAt(op.shiftAt, frame) }
	back := op.shiftAtBack
	if shifted && op.lastShiftAt >= 0 {
		// 0: the same input sample (one retune, as at the same frame).
		hist := q - 1 // the filter from at on: a change in this set applies there too
		gap := in(at) - in(op.lastShiftAt)
		if gap > 0 && gap < hist {
			return fmt.Errorf("%w: stage %d (shift) runs fused into the filter after it on cuda, and retunes again once that filter's history (%d samples) is past its last retune: %d samples later here",
				stage.ErrRetuneUnsupported, op.shiftAt, hist, gap)
		}
		if gap > 0 {
			back = op.lastShiftAt
		}
	}
	if q > op.acceptQ && back >= 0 && in(at)-(q-1) < in(back) {
		return fmt.Errorf("%w: stage %d (fir, %d taps) would read %d samples back, past the shift retune before the last (%d samples back); on cuda the shift fused into it keeps the last two",
			stage.ErrRetuneUnsupported, op.at, taps, q-1, in(at)-in(back))
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
		nb := op.branchesFor(len(r.Stage.Taps))
		if op.kind == opBank {
			padded := make([]float32, nb*op.bm)
			copy(padded, r.Stage.Taps)
			taps = filter.BankTaps(padded, int(op.bm))
		} else {
			taps = polyBranches(r.Stage.Taps, op.l, nb)
		}
		if err := f.stageTaps(st, op, taps); err != nil {
			return fmt.Errorf("gpu: chain stage %d (%s): %w", r.Index, r.Stage.Kind, err)
		}
		// The launches after this copy (on st or later) take the new count.
		if op.kind == opBank {
			op.bp = nb
		} else {
			op.q = nb
			op.retile(f.perThr)
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
		h, err := cudrv.AllocHost(int64(op.maxTaps())*4, false, false)
		if err != nil {
			return fmt.Errorf("pin the taps' staging: %w", err)
		}
		f.host = append(f.host, h)
		op.copied, op.staged = e, unsafe.Slice((*float32)(h.Ptr()), op.maxTaps())
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
