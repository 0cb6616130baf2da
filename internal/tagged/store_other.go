//go:build !amd64

package tagged

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// storeTagged stores n tagged words. atomic.StoreUint64 is one aligned
// 8-byte store by contract (STLR on arm64, a release store that costs little
// more than STR), which is what the protocol needs.
func storeTagged(dst *uint64, src *float32, n int, tag uint32) {
	d := unsafe.Slice(dst, n)
	s := unsafe.Slice(src, n)
	for i, v := range s {
		atomic.StoreUint64(&d[i], uint64(math.Float32bits(v))|uint64(tag)<<32)
	}
}

// demote is a no-op here: only amd64 has a user-level demote hint.
func demote(p *uint64, n int) {}

// copyTagged copies nothing here; Read's loop does the whole block.
func copyTagged(dst []float32, src []uint64, tag uint32) int { return 0 }
