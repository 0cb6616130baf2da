package capture

import (
	"math"
	"testing"
)

// TestAnyNonFinite checks the vector and the pure-Go branch-free tests against math.IsNaN/IsInf
// for every position of one special value in slices of every length and
// alignment up to 72, and for the finite values nearest to them.
func TestAnyNonFinite(t *testing.T) {
	values := []struct {
		v    float32
		want bool
	}{
		{float32(math.NaN()), true},
		{float32(math.Inf(1)), true},
		{float32(math.Inf(-1)), true},
		{math.Float32frombits(0xffffffff), true}, // a negative NaN
		{math.MaxFloat32, false},
		{-math.MaxFloat32, false},
		{math.SmallestNonzeroFloat32, false},
		{math.Float32frombits(0x80000000), false}, // -0
	}
	buf := make([]float32, 80)
	for _, tv := range values {
		for off := range 8 {
			for n := range 73 {
				for at := -1; at < n; at++ {
					x := buf[off : off+n]
					for i := range x {
						x[i] = float32(i) - 20
					}
					if at >= 0 {
						x[at] = tv.v
					}
					want := at >= 0 && tv.want
					if got := anyNonFinite(x); got != want {
						t.Fatalf("%v at %d of %d (offset %d): %v, want %v", tv.v, at, n, off, got, want)
					}
					if got := anyNonFiniteGeneric(x); got != want {
						t.Fatalf("generic: %v at %d of %d (offset %d): %v, want %v", tv.v, at, n, off, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkAnyNonFinite measures the scan of one 64 Ki-sample block of
// finite values (the common case: every value is read).
func BenchmarkAnyNonFinite(b *testing.B) {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(i%1000) - 500
	}
	for _, k := range []struct {
		name string
		f    func([]float32) bool
	}{{"best", anyNonFinite}, {"generic", anyNonFiniteGeneric}} {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			b.ReportAllocs()
			for b.Loop() {
				if k.f(x) {
					b.Fatal("non-finite")
				}
			}
		})
	}
}
