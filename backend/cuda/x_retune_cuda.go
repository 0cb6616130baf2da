//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/stage"
)

// Retuning the explicit transport's plain fir (see package stage for the
// semantics): Retune, on any goroutine, leaves the new taps in
// explicitTune's pending slot with the index of the first input sample of
// the first block not yet handed to the device; enqueue takes them with
// that block, under the same lock that counts the block's samples, and
// from it on the kernel reads the new taps over the same input history.
// Nothing is relaunched and the ring is not drained.
//
// Tap-count changes: each block's [history | block] buffer keeps the
// history of the most taps a retune may bring (tunableBatch.hist), and the
// kernel reads only the last (ntaps−1)·lanes values of it.
//
// Double-buffered device taps: the new taps are copied into the buffer
// not in use, on the run stream, where every block's kernel goes in
// order: every kernel of an earlier block has finished by then, none
// still reads the buffer being overwritten, and every later block reads
// the new taps.
// Each device buffer is filled from a pinned staging buffer of its own
// (a pageable copy may synchronise the stream); the host rewrites a
// staging buffer only once its last copy is done (an event; it waits only
// when retunes come faster than two per blocks in flight).

// explicitTune is the pending slot between Retune and enqueue.
type explicitTune struct {
	mu      sync.Mutex
	open    bool           // the explicit transport runs a retunable filter
	closed  bool           // the explicit transport has closed
	lanes   int            // values per frame
	maxTaps int            // the most taps a retune may bring (a plain fir)
	chain   *ChainFilter   // the chain's filter, nil for a plain fir
	seen    int64          // values handed to the device so far
	pending []float32      // a plain fir's taps for the next block, nil when none
	changes []stage.Retune // a chain's changes for the next block, in order
}

// take counts a block of n values handed to the device and returns what
// to filter it with from now on: a plain fir's taps, or a chain's
// changes; nil when no retune is pending.
func (t *explicitTune) take(n int) ([]float32, []stage.Retune) {
	t.mu.Lock()
	p, c := t.pending, t.changes
	t.pending, t.changes = nil, nil
	t.seen += int64(n)
	t.mu.Unlock()
	return p, c
}

// shut refuses later retunes (the transport is closing).
func (t *explicitTune) shut() {
	t.mu.Lock()
	t.open, t.closed, t.pending, t.changes = false, true, nil, nil
	t.mu.Unlock()
}

// retuneStages schedules a chain's changes (checked by stage.CheckRetune)
// for the first block not yet handed to the device and returns that
// block's first input frame. Changes that come before that block join
// those already waiting, after them, at the same frame. (The chain filter
// keeps its own chain: c is not needed.)
func (x *explicit) retuneStages(_ stage.Chain, changes []stage.Retune) (int64, error) {
	t := &x.tune
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.open || t.chain == nil {
		return 0, fmt.Errorf("%w: the explicit transport is not running a chain", stage.ErrRetuneUnsupported)
	}
	at := t.seen / int64(t.lanes)
	if err := t.chain.AcceptRetune(changes, at); err != nil {
		return 0, err
	}
	t.changes = append(t.changes, changes...)
	return at, nil
}

// chainRetunable opens the pending slot for the chain filter f.
func (x *explicit) chainRetunable(f *ChainFilter) {
	x.tune.mu.Lock()
	x.tune.open, x.tune.lanes, x.tune.chain, x.tune.seen, x.tune.changes = true, f.inCh, f, 0, nil
	x.tune.mu.Unlock()
}

// retune schedules taps for the first block not yet handed to the device
// and returns that block's first input sample (frame). A retune that
// comes before that block replaces this one, at the same index.
func (x *explicit) retune(taps []float32) (int64, error) {
	if err := CheckBatchTaps(taps); err != nil {
		return 0, fmt.Errorf("%w: %w", stage.ErrRetuneUnsupported, err)
	}
	t := &x.tune
	p := slices.Clone(taps) // the caller may reuse its slice
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.chain != nil:
		return 0, ErrRetune // a chain: retuneStages
	case !t.open && !t.closed:
		return 0, errOLSRetune // running, with a filter that is not the retunable batch
	case !t.open:
		return 0, fmt.Errorf("%w: the explicit transport is not running", stage.ErrRetuneUnsupported)
	case len(taps) > t.maxTaps:
		return 0, fmt.Errorf("%w: %d taps; the explicit transport retunes this stream (%d values per frame) to at most %d taps (shared memory per block)",
			stage.ErrRetuneUnsupported, len(taps), t.lanes, t.maxTaps)
	}
	t.pending = p
	return t.seen / int64(t.lanes), nil
}

// tunableBatch is the explicit transport's blockFilter for a plain fir:
// the BatchFIR, with a history long enough for any tap count a retune may
// bring and two device tap buffers.
type tunableBatch struct {
	*BatchFIR
	hist   int                // history values kept before each block
	bufs   [2]cudrv.DevicePtr // device taps, maxTaps floats each
	stage  [2][]float32       // pinned staging of each, maxTaps floats
	copied [2]cudrv.Event     // the last copy from stage[i] is done
	used   [2]bool            // copied[i] has been recorded
	cur    int                // the buffer launches read
	lanes  int
}

// retunable makes x's filter the retunable one and opens the pending slot.
// The history holds the most taps that fit shared memory (at most
// BatchMaxTaps), rounded so that the initial taps' kernel input stays
// 16-byte aligned, as it was without retuning.
func (x *explicit) retunable(fir *BatchFIR) error {
	lanes := fir.Channels()
	maxTaps := max(fir.NTaps(), fir.maxTapsFor())
	if _, err := fir.sharedFor(maxTaps, fir.Threads()); err != nil { // raise the kernel's limit once
		return err
	}
	h0 := fir.HistoryValues()
	hist := (maxTaps - 1) * lanes
	hist += ((h0-hist)%4 + 4) % 4
	t := &tunableBatch{BatchFIR: fir, hist: hist, lanes: lanes, cur: 1}
	x.filt = t // closes the BatchFIR and the events from now on
	for i := range t.bufs {
		var err error
		if t.bufs[i], err = x.b.alloc(int64(maxTaps) * 4); err != nil {
			return err
		}
		h, err := x.b.pin(int64(maxTaps)*4, false, false)
		if err != nil {
			return err
		}
		t.stage[i] = unsafe.Slice((*float32)(h.Ptr()), maxTaps)
		if t.copied[i], err = cudrv.NewEvent(cudrv.EventDisableTiming); err != nil {
			return fmt.Errorf("gpu: create event: %w", err)
		}
	}
	// The initial taps into buffer 0, on the run stream ahead of every block.
	if err := x.loadTaps(x.streams[sRun], x.b.taps); err != nil {
		return fmt.Errorf("gpu: taps: %w", err)
	}
	x.tune.mu.Lock()
	x.tune.open, x.tune.lanes, x.tune.maxTaps, x.tune.seen, x.tune.pending = true, lanes, maxTaps, 0, nil
	x.tune.mu.Unlock()
	return nil
}

func (t *tunableBatch) HistoryValues() int     { return t.hist }
func (t *tunableBatch) MaxOutValues(n int) int { return n }

// Launch filters the block with the taps in force, reading the last
// (ntaps−1)·lanes values of the history.
func (t *tunableBatch) Launch(st cudrv.Stream, in, out cudrv.DevicePtr, n int) (int, error) {
	skip := t.hist - t.BatchFIR.HistoryValues()
	return n, t.BatchFIR.Launch(st, in+cudrv.DevicePtr(4*skip), out, n/t.lanes)
}

// loadTaps copies taps into the spare device buffer on st and launches
// read them from now on (see the top of this file for why no launch still
// reads that buffer). It runs on the consumer's goroutine, between the
// block's wait for its history and its launch.
func (x *explicit) loadTaps(st cudrv.Stream, taps []float32) error {
	t, ok := x.filt.(*tunableBatch)
	if !ok {
		return ErrRetune
	}
	spare := 1 - t.cur
	if t.used[spare] {
		if err := t.copied[spare].Synchronize(); err != nil {
			return fmt.Errorf("wait for the taps' staging buffer: %w", err)
		}
	}
	copy(t.stage[spare], taps)
	if err := st.CopyHtoD(t.bufs[spare], unsafe.Pointer(&t.stage[spare][0]), int64(len(taps))*4); err != nil {
		return fmt.Errorf("copy taps: %w", err)
	}
	if err := t.copied[spare].Record(st); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	t.used[spare] = true
	if err := t.useTaps(t.bufs[spare], len(taps)); err != nil {
		return err
	}
	t.cur = spare
	return nil
}

// Close frees the events and the BatchFIR; the buffers are the backend's.
func (t *tunableBatch) Close() error {
	return errors.Join(cudrv.DestroyEvents(t.copied[:]), t.BatchFIR.Close())
}
