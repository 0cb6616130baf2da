package cuda

import (
	"context"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
)

// The host side of the zero-copy kernel's retunes, without the driver: the
// tags, parity and frame count a block is published with, the ring hooks
// that write them, and the order of a retune's steps (the kernels' side is
// in kernels/fir.cu and kernels/zchain.cu, the driver's in
// zc_retune_cuda.go).

// tagMask keeps the block index in an input tag; the top bit is the
// parameter parity (TAG_MASK in kernels/persistent.cuh).
const tagMask = 0x7fffffff

// zcRetune is the host side of the zero-copy kernel's retunes: a
// parameter block of two buffers in mapped host memory, and the parity of
// the buffer the next published block must use, carried in the top bit of
// that block's input tags. The kernel sees the bit flip in the same poll
// that brings the block, so a run without retunes costs no extra load,
// and loads the new taps from that block on.
//
// Ordering: a retune writes the taps into the buffer no block uses yet,
// then flips the parity under mu; the ring hooks read the parity under
// mu before they write the block's words. So the taps' stores precede, in
// the host's store order, the stores of every word that carries the new
// parity, and the kernel loads the taps only after it has seen such a word.
type zcRetune struct {
	params []float32 // mapped: 2 × (paramHdr + tcap) floats, buffer b for parity b
	tcap   int       // floats of taps per buffer, hcap padded to 4
	hcap   int       // most taps the kernel keeps history for (a chain: its parameter image's floats)

	serial sync.Mutex  // one retune at a time; Close takes it to end them
	live   atomic.Bool // the kernel runs and the parameter block is mapped
	demote bool        // demote a written buffer's lines (attach's demote)

	mu     sync.Mutex
	parity uint32   // parity of the taps the next published block uses
	unused bool     // the last flip has reached no block yet
	readAt [2]int64 // per buffer, the block at which the kernel last loads it (the first of its parity after a flip); -1: none
	frames int64    // frames of the blocks tagged so far: the stream index of the next block's first frame
	// The last block a source asked for a tag for (wordSlot), until it is
	// published: its index, tag and the frames it was counted with.
	slotted    bool
	slotIdx    uint64
	slotTag    uint32
	slotFrames int
}

// init lays the parameter block over p (mapped, paramFloats(hcap)
// floats) with taps as buffer 0, the launch's taps.
func (z *zcRetune) init(p unsafe.Pointer, hcap int, taps []float32) {
	z.hcap, z.tcap = hcap, (hcap+3)&^3
	z.params = unsafe.Slice((*float32)(p), paramFloats(hcap))
	// Buffer 0 is never loaded for the launch (the kernel starts from its
	// taps argument), only once a flip back to parity 0 reaches a block.
	z.parity, z.unused, z.readAt, z.frames, z.slotted = 0, false, [2]int64{-1, -1}, 0, false
	z.write(0, taps)
}

// write fills buffer b with taps: the count, then the taps, zero past them.
// The kernel reads the buffer over PCIe once a block brings its parity; as
// the input words, its lines are demoted out of this core's cache first,
// so that those reads need not snoop them. (On an H100 host the retuned
// block's own latency was 21.0 µs with it and 22.2 without, the chain's
// 10: the snoop is not what the retuned block waits for.)
func (z *zcRetune) write(b uint32, taps []float32) {
	buf := z.params[int(b)*(paramHdr+z.tcap):][:paramHdr+z.tcap]
	*(*uint32)(unsafe.Pointer(&buf[0])) = uint32(len(taps))
	n := copy(buf[paramHdr:], taps)
	clear(buf[paramHdr+n:])
	if z.demote {
		// paramHdr and tcap are multiples of 4 floats: whole words.
		tagged.Demote(tagged.Words(unsafe.Pointer(&buf[0]), len(buf)/2))
	}
}

// tag decides block i's input tag (its index and the parity of its taps)
// and counts its frames; under mu.
func (z *zcRetune) tag(i uint64, frames int) uint32 {
	if z.unused {
		z.unused, z.readAt[z.parity] = false, int64(i)
	}
	z.frames += int64(frames)
	return uint32(i+1)&tagMask | z.parity<<31
}

// wordSlot gives the tag of block i, which a pipeline.WordSource asks for
// once its values are ready and writes into the mapped slot before the
// block is published: the parity is decided now, and the block counted as
// full (frames frames), so that a retune from now on starts after it;
// published corrects a short last block. Asked again for the same block
// (its words were not published), it counts nothing twice.
func (z *zcRetune) wordSlot(i uint64, frames int) uint32 {
	z.mu.Lock()
	defer z.mu.Unlock()
	if !z.slotted || z.slotIdx != i {
		z.slotted, z.slotIdx, z.slotTag, z.slotFrames = true, i, z.tag(i, frames), frames
	}
	return z.slotTag
}

// published is called when block i of frames frames is published, before
// its words (or a source's block's padding) are written; it returns the
// block's tag. A block whose source asked for its tag (wordSlot) keeps the
// tag and count decided then, corrected for a short block, whichever way its
// words are written: every block is counted once, so the frame a retune
// reports is the one its parity takes effect at.
func (z *zcRetune) published(i uint64, frames int) uint32 {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.slotted && z.slotIdx == i {
		z.slotted = false
		z.frames -= int64(z.slotFrames - frames)
		return z.slotTag
	}
	return z.tag(i, frames)
}

// attach installs on ring the two ways a block reaches the kernel's input
// words in (slots of words words each, in the ring's slot order). A source
// that cannot write tagged words fills the ring's Go-memory slots, and the
// publish hook turns each block into tagged words; a pipeline.WordSource
// writes its samples into the mapped slot itself, tagged (the tag, with
// the taps' parity, decided when it asks for it, once its values are
// ready and before it writes a word), and only the padding of a short
// block and the demote are left for publish time, so no staging copy sits
// on the latency path. demote demotes the written lines (Options.NoDemote).
// stamp, when not nil, is called with the block and 0 before that write
// and 1 after it (timing).
func (z *zcRetune) attach(ring *pipeline.Ring, in []uint64, words int, demote bool, stamp func(i uint64, k int)) error {
	l := ring.Layout()
	slots, lanes, full := uint64(l.Slots), l.Channels, l.BlockSize
	z.demote = demote
	slot := func(i uint64) []uint64 {
		s := int(i%slots) * words
		return in[s : s+words]
	}
	// put writes block i's words from value from on (samples, then the
	// padding) into its slot, tagged, n values in all.
	put := func(i uint64, from int, samples []float32, n int) {
		if stamp != nil {
			stamp(i, 0)
		}
		dst := slot(i)
		tagged.Write(dst[from:], samples, z.published(i, n/lanes))
		// The kernel polls these lines over PCIe: in the shared cache rather
		// than modified in this core's, its reads need not snoop them out
		// (on the H200 host: PCIe leg -0.23 µs, host write +0.1 µs).
		if demote {
			tagged.Demote(dst)
		}
		if stamp != nil {
			stamp(i, 1)
		}
	}
	ring.SetPublishHook(func(i uint64, blk pipeline.Block) { put(i, 0, blk.Samples, len(blk.Samples)) })
	return ring.SetWordSlots(pipeline.WordSlots{
		Slot:      slot,
		Tag:       func(i uint64) uint32 { return z.wordSlot(i, full) },
		Published: func(i uint64, n int) { put(i, n, nil, n) },
	})
}

// retune makes the kernel filter with taps from the first block not yet
// tagged on and returns that block's first frame: in place of the last
// retune's taps when no block has taken them yet, else into the other
// buffer, once finished says the kernel is done with it (finished(b)
// returns when the kernel has finished block b, or why it cannot). Under
// serial.
//
// The kernel loads a buffer only at the first block of its parity after a
// flip, into shared memory. So the other buffer is free once the kernel
// has finished the block that loaded it, which is the flip before the
// last one. The last flip's block may be one a stopped source still holds
// (a WordSource takes its block's tag before it writes): waiting for it
// would last as long as the source does.
func (z *zcRetune) retune(taps []float32, finished func(block int64) error) (at int64, err error) {
	at, readAt, done := z.replaceUnused(taps)
	if done {
		return at, nil
	}
	if readAt >= 0 {
		r := trace.StartRegion(context.Background(), "retune: wait for the kernel")
		err := finished(readAt)
		r.End()
		if err != nil {
			return 0, err
		}
	}
	return z.flip(taps), nil
}

// replaceUnused puts taps in place of the last flip's when that flip has
// reached no block yet (the kernel has not read its buffer; under mu, so
// no block takes the flip half written): done, with at the first frame
// they filter. Otherwise it returns the block at which the kernel last
// loads the other buffer (-1: never), which it must finish before that
// buffer may be written.
func (z *zcRetune) replaceUnused(taps []float32) (at, readAt int64, done bool) {
	defer trace.StartRegion(context.Background(), "retune: write").End()
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.unused {
		z.write(z.parity, taps)
		return z.frames, 0, true
	}
	return 0, z.readAt[z.parity^1], false
}

// flip writes taps into the other buffer (the kernel done with it) and
// makes the next block tagged carry its parity; it returns the first frame
// they filter.
func (z *zcRetune) flip(taps []float32) (at int64) {
	defer trace.StartRegion(context.Background(), "retune: write").End()
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
