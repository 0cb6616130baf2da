//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/stage"
)

// tagMask keeps the block index in an input tag; the top bit is the
// parameter parity (TAG_MASK in kernels/fir.cu).
const tagMask = 0x7fffffff

// zcRetune is the host side of the zero-copy kernel's retunes: a
// parameter block of two buffers in mapped host memory, and the parity of
// the buffer the next published block must use, carried in the top bit of
// that block's input tags. The kernel sees the bit flip in the same poll
// that brings the block, so a run without retunes costs no extra load,
// and loads the new taps from that block on.
//
// Ordering: a retune writes the taps into the buffer no block uses yet,
// then flips the parity under mu; the publish hook reads the parity under
// mu before it writes the block's words. So the taps' stores precede, in
// the host's store order, the stores of every word that carries the new
// parity, and the kernel loads the taps only after it has seen such a word.
type zcRetune struct {
	params []float32 // mapped: 2 × (paramHdr + tcap) floats, buffer b for parity b
	tcap   int       // floats of taps per buffer, hcap padded to 4
	hcap   int       // most taps the kernel keeps history for

	serial sync.Mutex  // one retune at a time; Close takes it to end them
	live   atomic.Bool // the kernel runs and the parameter block is mapped

	mu       sync.Mutex
	parity   uint32 // parity of the taps the next published block uses
	unused   bool   // the last flip has reached no block yet
	switchAt int64  // index of the block that carried the last flip; -1: none yet
	frames   int64  // frames of the blocks tagged so far: the stream index of the next block's first frame
	slotted  bool   // slotIdx holds the last block a source was given a tag for
	slotIdx  uint64
	slotTag  uint32
}

// init lays the parameter block over p (mapped, paramFloats(hcap)
// floats) with taps as buffer 0, the launch's taps.
func (z *zcRetune) init(p unsafe.Pointer, hcap int, taps []float32) {
	z.hcap, z.tcap = hcap, (hcap+3)&^3
	z.params = unsafe.Slice((*float32)(p), paramFloats(hcap))
	z.parity, z.unused, z.switchAt, z.frames, z.slotted = 0, false, -1, 0, false
	z.write(0, taps)
}

// write fills buffer b with taps: the count, then the taps, zero past them.
func (z *zcRetune) write(b uint32, taps []float32) {
	buf := z.params[int(b)*(paramHdr+z.tcap):][:paramHdr+z.tcap]
	*(*uint32)(unsafe.Pointer(&buf[0])) = uint32(len(taps))
	n := copy(buf[paramHdr:], taps)
	clear(buf[paramHdr+n:])
}

// publish is called by the publish hook for block i of frames frames,
// before its words are written; it returns the block's input tag.
func (z *zcRetune) publish(i uint64, frames int) uint32 {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.tag(i, frames)
}

// tag decides block i's input tag (its index and the parity of its taps)
// and counts its frames; under mu.
func (z *zcRetune) tag(i uint64, frames int) uint32 {
	if z.unused {
		z.unused, z.switchAt = false, int64(i)
	}
	z.frames += int64(frames)
	return uint32(i+1)&tagMask | z.parity<<31
}

// wordSlot gives the tag of block i, which a pipeline.WordSource writes
// into the mapped slot before the block is published: the parity is
// decided now, and the block counted as full (frames frames), so that a
// retune from now on starts after it; wordsPublished corrects a short last
// block. Asked again for the same block (its words were not published),
// it counts nothing twice.
func (z *zcRetune) wordSlot(i uint64, frames int) uint32 {
	z.mu.Lock()
	defer z.mu.Unlock()
	if !z.slotted || z.slotIdx != i {
		z.slotted, z.slotIdx, z.slotTag = true, i, z.tag(i, frames)
	}
	return z.slotTag
}

// wordsPublished is called when block i, written into its slot with
// wordSlot's tag, is published with got of the full frames; it returns
// the tag to pad the rest of the slot with.
func (z *zcRetune) wordsPublished(i uint64, got, full int) uint32 {
	z.mu.Lock()
	defer z.mu.Unlock()
	if !z.slotted || z.slotIdx != i { // never asked: tag it now
		return z.tag(i, got)
	}
	z.frames -= int64(full - got)
	return z.slotTag
}

// retuneZeroCopy makes the running persistent kernel filter with taps from
// the next block published on (the first block not yet handed to the
// device), over the same input history, and returns that block's first
// frame index in the stream (blocks the ring dropped are not counted). The
// tap count may change, up to the history the kernel keeps (chosen at
// start); more is refused with a *stage.StageError. Safe on any goroutine
// while the consumer runs; it waits, at most the watchdog, only when the
// kernel has not yet reached the previous retune's block.
func (b *backend) retuneZeroCopy(taps []float32) (at int64, err error) {
	z := &b.zr
	if !z.live.Load() {
		return 0, fmt.Errorf("%w: the zero-copy kernel is not running", stage.ErrRetuneUnsupported)
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

	z.mu.Lock()
	if z.unused {
		// The last flip has reached no block: the kernel has not read its
		// buffer, so replace its taps in place (under mu, so that no block
		// takes the flip half written).
		z.write(z.parity, taps)
		at = z.frames
		z.mu.Unlock()
		return at, nil
	}
	sw := z.switchAt
	z.mu.Unlock()

	// The other buffer was last read at the flip before block sw's (or
	// never); the kernel is done with it once it has finished block sw.
	if sw >= 0 {
		limit := b.opts.watchdog()
		t0 := time.Now()
		for int64(b.ctrlWord(ctrlHeartbeat).Load()) <= sw {
			if e := b.ctrlWord(ctrlError).Load(); e != 0 {
				return 0, fmt.Errorf("gpu: retune: kernel reported error %d", e)
			}
			if b.ctrlWord(ctrlRunning).Load() == 2 {
				return 0, fmt.Errorf("%w: the zero-copy kernel has stopped", stage.ErrRetuneUnsupported)
			}
			if time.Since(t0) > limit {
				return 0, fmt.Errorf("gpu: retune: %w in %v waiting for block %d (heartbeat %d)", ErrWatchdog, limit, sw, b.ctrlWord(ctrlHeartbeat).Load())
			}
			runtime.Gosched()
		}
	}
	z.mu.Lock()
	next := z.parity ^ 1
	z.write(next, taps) // no block uses this buffer yet
	z.parity, z.unused = next, true
	at = z.frames
	z.mu.Unlock()
	return at, nil
}

// zeroCopyRetuneRefusal is the zero-copy transport's standing refusal:
// none, the persistent kernel takes new taps (up to the history it keeps).
func (b *backend) zeroCopyRetuneRefusal() error { return nil }

// stop ends retunes before the kernel stops and the parameter block is
// freed: it waits for a retune in progress.
func (z *zcRetune) stop() {
	z.serial.Lock()
	z.live.Store(false)
	z.serial.Unlock()
}
