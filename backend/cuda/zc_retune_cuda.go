//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/trace"
	"time"

	"github.com/sigproc/sigproc/stage"
)

// retune makes the running persistent kernel filter with taps from
// the next block published on (the first block not yet handed to the
// device), over the same input history, and returns that block's first
// frame index in the stream (blocks the ring dropped are not counted). The
// tap count may change, up to the history the kernel keeps (chosen at
// start); more is refused with a *stage.StageError. Safe on any goroutine
// while the consumer runs; it waits, at most the watchdog, only when the
// kernel has not yet finished the block of the retune before the previous
// one (see zcRetune.retune).
func (zc *zeroCopy) retune(taps []float32) (at int64, err error) {
	z := &zc.zr
	if !z.live.Load() || zc.chain != nil {
		return 0, fmt.Errorf("%w: the zero-copy kernel is not running a plain fir", stage.ErrRetuneUnsupported)
	}
	if len(taps) == 0 {
		return 0, &stage.StageError{Index: 0, Field: "taps", Msg: "no taps"}
	}
	if len(taps) > z.hcap {
		return 0, &stage.StageError{Index: 0, Field: "taps", Msg: fmt.Sprintf(
			"%d taps: the running zero-copy kernel keeps the history for at most %d (the larger of its start taps and %d, as shared memory allows); restart with the longer filter",
			len(taps), z.hcap, zcRetuneTaps)}
	}
	for i, t := range taps {
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return 0, &stage.StageError{Index: 0, Field: "taps", Msg: fmt.Sprintf("tap %d is %v", i, t)}
		}
	}
	z.serial.Lock()
	defer z.serial.Unlock()
	if !z.live.Load() {
		return 0, fmt.Errorf("%w: the zero-copy kernel is not running", stage.ErrRetuneUnsupported)
	}

	return z.retune(taps, zc.finished)
}

// finished returns once the kernel has finished block sw, or why it
// cannot: the kernel stopped, failed, or the watchdog ran out.
func (zc *zeroCopy) finished(sw int64) error {
	limit := zc.b.opts.watchdog()
	t0 := time.Now()
	for int64(zc.ctrlWord(ctrlHeartbeat).Load()) <= sw {
		if e := zc.ctrlWord(ctrlError).Load(); e != 0 {
			return fmt.Errorf("gpu: retune: kernel reported error %d", e)
		}
		if zc.ctrlWord(ctrlRunning).Load() == 2 {
			return fmt.Errorf("%w: the zero-copy kernel has stopped", stage.ErrRetuneUnsupported)
		}
		if time.Since(t0) > limit {
			return fmt.Errorf("gpu: retune: %w in %v waiting for block %d (heartbeat %d)", ErrWatchdog, limit, sw, zc.ctrlWord(ctrlHeartbeat).Load())
		}
		runtime.Gosched()
	}
	return nil
}

// retuneStages makes the running persistent chain kernel take a chain's
// changes (checked by stage.CheckRetune), which make it c, from the next
// block published on, and returns that block's first frame (see retune):
// the image of every op's parameters in c (zcChain.image) goes into the
// parameter buffer the kernel does not read, and the next block's tags
// carry its parity. Changes before that block join those waiting (c has
// them all: chainBackend keeps the chain and serializes its retunes).
func (zc *zeroCopy) retuneStages(c stage.Chain, changes []stage.Retune) (int64, error) {
	z := &zc.zr
	if zc.chain == nil || !z.live.Load() {
		return 0, fmt.Errorf("%w: the zero-copy kernel is not running a chain", stage.ErrRetuneUnsupported)
	}
	z.serial.Lock()
	defer z.serial.Unlock()
	if !z.live.Load() {
		return 0, fmt.Errorf("%w: the zero-copy kernel is not running", stage.ErrRetuneUnsupported)
	}
	r := trace.StartRegion(context.Background(), "retune: image")
	img, err := zc.chain.image(c, changes)
	r.End()
	if err != nil {
		return 0, err
	}
	return z.retune(img, zc.finished)
}
