package tagged

import "golang.org/x/sys/cpu"

// storeTagged stores n words dst[i] = bits(src[i]) | tag<<32, each with one
// aligned MOVQ. An atomic.StoreUint64 would be an XCHG on amd64, a full
// barrier of ~20 cycles per word (about 1.7 µs for a 256-sample block);
// x86's TSO already keeps the stores in order, and the protocol needs only
// each word to be written whole.
//
//go:noescape
func storeTagged(dst *uint64, src *float32, n int, tag uint32)

// demote hints the CPU to move the n bytes at p out of this core's private
// caches (CLDEMOTE per 64-byte line; a NOP where the CPU lacks it).
//
//go:noescape
func demote(p *uint64, n int)

// copyFast: the CPU (and OS) can run copyTaggedAVX2. Set once at start-up
// and never written again.
var copyFast = cpu.X86.HasAVX2

// copyTagged copies the values of src's leading words into dst while their
// tags match, eight words per step, and returns how many it copied (0 where
// AVX2 is missing); Read finishes the rest. On the H200 host this halved the
// read of a 256-word block the GPU had just written (0.62 → 0.30 µs at p50):
// the scalar loop's instructions fill the core's out-of-order window after
// a few of the block's 32 cache lines, and with two 32-byte loads per step
// all 32 misses are in flight at once.
func copyTagged(dst []float32, src []uint64, tag uint32) int {
	if !copyFast || len(dst) < 8 || len(src) < len(dst) {
		return 0
	}
	return copyTaggedAVX2(&dst[0], &src[0], len(dst), tag)
}

// copyTaggedAVX2 copies, eight words per step, while a step's words all
// carry tag, and returns the count copied (a multiple of 8).
//
//go:noescape
func copyTaggedAVX2(dst *float32, src *uint64, n int, tag uint32) int
