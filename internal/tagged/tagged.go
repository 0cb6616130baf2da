// Package tagged reads and writes the zero-copy rings' tagged words:
// {float32 value in the low half, uint32 tag in the high half}, each written
// with one aligned 8-byte store so value and tag always arrive together.
package tagged

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// Tagged words: {float32 value in the low half, uint32 tag in the high
// half}, the unit of the zero-copy rings.

// Pack returns the tagged word for v.
func Pack(v float32, tag uint32) uint64 {
	return uint64(math.Float32bits(v)) | uint64(tag)<<32
}

// Write writes src as tagged words into dst and pads dst's remaining
// words with zero samples of the same tag, so the kernel always sees a full
// block. Every word is one aligned 8-byte store (see storeTagged).
func Write(dst []uint64, src []float32, tag uint32) {
	if len(src) > 0 {
		storeTagged(&dst[0], &src[0], len(src), tag)
	}
	for i := len(src); i < len(dst); i++ {
		atomic.StoreUint64(&dst[i], uint64(tag)<<32)
	}
}

// Read waits until every word of src carries tag, then copies the
// values into dst. spin is called between polls of a word that is not ready
// yet; a non-nil error from it aborts the wait.
//
// It waits for the last word first. The writer (the GPU) stores a block's
// words in no fixed order but all at once; reading the other lines while
// they are still arriving pulls each into this core's cache just before the
// writer's store has to invalidate it again (on the H200 host this cost
// ~0.1 µs per 256-word block). Then it copies eight words per step with
// AVX2 where the CPU has it, each word's tag checked as in the scalar loop,
// which finishes whatever that step left.
func Read(dst []float32, src []uint64, tag uint32, spin func() error) error {
	if n := len(dst); n > 1 {
		for uint32(atomic.LoadUint64(&src[n-1])>>32) != tag {
			if err := spin(); err != nil {
				return err
			}
		}
	}
	for i := copyTagged(dst, src, tag); i < len(dst); i++ {
		w := atomic.LoadUint64(&src[i])
		for uint32(w>>32) != tag {
			if err := spin(); err != nil {
				return err
			}
			w = atomic.LoadUint64(&src[i])
		}
		dst[i] = math.Float32frombits(uint32(w))
	}
	return nil
}

// Demote hints the CPU to move words' cache lines out of this core's
// private caches into the shared last-level cache (CLDEMOTE on amd64; a
// no-op where the instruction or the architecture lacks it). Mapped ring
// lines are accessed by the GPU over PCIe: a line that sits modified in one
// core's L1/L2 has to be snooped out of it first, and for a line the GPU
// writes, every core copy has to be invalidated. Demoting the input lines
// the host has just written moves the snoop off the latency path (demoting
// the output lines after reading them measured no gain on the H200 host).
// It changes no data.
func Demote(words []uint64) {
	if len(words) > 0 {
		demote(&words[0], len(words)*8)
	}
}

// Words views n uint64 words at p.
func Words(p unsafe.Pointer, n int) []uint64 { return unsafe.Slice((*uint64)(p), n) }
