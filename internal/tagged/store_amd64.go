package tagged

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
