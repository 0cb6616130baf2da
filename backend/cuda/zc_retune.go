package cuda

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The host side of the zero-copy kernel's retunes, without the driver: the
// tags, parity and frame count a block is published with (the kernel's
// side is in kernels/fir.cu, the retune itself in zc_retune_cuda.go).

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

// replaceUnused puts taps in place of the last flip's when that flip has
// reached no block yet (the kernel has not read its buffer; under mu, so
// no block takes the flip half written): done, with at the first frame
// they filter. Otherwise it returns the index of the block that carried
// the last flip (-1: none), which the kernel must finish before the other
// buffer may be written.
func (z *zcRetune) replaceUnused(taps []float32) (at, switchAt int64, done bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.unused {
		z.write(z.parity, taps)
		return z.frames, 0, true
	}
	return 0, z.switchAt, false
}

// flip writes taps into the buffer no block uses and makes the next block
// tagged carry its parity; it returns the first frame they filter.
func (z *zcRetune) flip(taps []float32) (at int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	next := z.parity ^ 1
	z.write(next, taps)
	z.parity, z.unused = next, true
	return z.frames
}

// stop ends retunes before the kernel stops and the parameter block is
// freed: it waits for a retune in progress.
func (z *zcRetune) stop() {
	z.serial.Lock()
	z.live.Store(false)
	z.serial.Unlock()
}
