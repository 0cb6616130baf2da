package capture

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// NonFiniteCounter is a source of float samples that counts the NaN and
// infinite values it delivers: they cannot be filtered into anything
// meaningful (one NaN spreads over a filter's length of output), so a
// run flags them instead of passing them on silently.
type NonFiniteCounter interface {
	// NonFinite returns how many NaN or ±Inf values the source has
	// delivered so far (with blocks read several at once, read: a run
	// ended early may count some it never delivered). It is safe to call
	// from any goroutine.
	NonFinite() uint64
	// SetNonFiniteHandler sets a function called once, during Read (or
	// View, or a reserved block's taking) and possibly on a goroutine of
	// the source's, or of the backend's that a view's scan was left to
	// (Raw.LeaveScan), when the first non-finite values are delivered,
	// with their count.
	SetNonFiniteHandler(f func(total uint64))
}

// nonFinite counts the non-finite values of a float source's samples.
// The check costs a pass over the samples Read has just written (about
// 0.05 ns a value with AVX2, 0.2 with the word scan) and is skipped for
// integer formats, which cannot hold them.
type nonFinite struct {
	n  atomic.Uint64
	on func(total uint64)
}

// NonFinite implements [NonFiniteCounter].
func (c *nonFinite) NonFinite() uint64 { return c.n.Load() }

// SetNonFiniteHandler implements [NonFiniteCounter].
func (c *nonFinite) SetNonFiniteHandler(f func(total uint64)) { c.on = f }

// scan counts the non-finite values of x.
func (c *nonFinite) scan(x []float32) {
	if !anyNonFinite(x) {
		return
	}
	k := uint64(0)
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			k++
		}
	}
	if c.n.Add(k) == k && c.on != nil {
		c.on(k)
	}
}

// A float32 is NaN or ±Inf when its exponent bits are all ones: adding
// one to the exponent then carries into the sign bit. Two values at a
// time, in a uint64, the carries stay in their halves.
const (
	expMask32 = 0x7f800000
	expOne32  = 0x00800000
	sign32    = 0x80000000
)

// anyNonFiniteGeneric reports whether x holds a NaN or an infinity,
// without a branch per value. anyNonFinite uses it where no vector
// kernel runs (purego builds, other architectures, CPUs without AVX2).
func anyNonFiniteGeneric(x []float32) bool {
	var acc uint32
	for len(x) > 0 && uintptr(unsafe.Pointer(&x[0]))%8 != 0 {
		acc |= math.Float32bits(x[0])&expMask32 + expOne32
		x = x[1:]
	}
	if n := len(x) / 2; n > 0 {
		u := unsafe.Slice((*uint64)(unsafe.Pointer(&x[0])), n)
		const m, one = expMask32<<32 | expMask32, expOne32<<32 | expOne32
		var a, b, c, d uint64
		i := 0
		for ; i+4 <= n; i += 4 {
			a |= u[i]&m + one
			b |= u[i+1]&m + one
			c |= u[i+2]&m + one
			d |= u[i+3]&m + one
		}
		for ; i < n; i++ {
			a |= u[i]&m + one
		}
		a |= b | c | d
		acc |= uint32(a) | uint32(a>>32)
		x = x[2*n:]
	}
	for _, v := range x {
		acc |= math.Float32bits(v)&expMask32 + expOne32
	}
	return acc&sign32 != 0
}
