package capture

import (
	"math"
	"testing"
)

// TestAnyNonFinite checks the branch-free test against math.IsNaN/IsInf
// for every position of one special value in slices of every length and
// alignment up to 40, and for the finite values nearest to them.
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
	buf := make([]float32, 48)
	for _, tv := range values {
		for off := range 8 {
			for n := range 41 {
				for at := -1; at < n; at++ {
					x := buf[off : off+n]
					for i := range x {
						x[i] = float32(i) - 20
					}
					if at >= 0 {
						x[at] = tv.v
					}
					if got, want := anyNonFinite(x), at >= 0 && tv.want; got != want {
						t.Fatalf("%v at %d of %d (offset %d): %v, want %v", tv.v, at, n, off, got, want)
					}
				}
			}
		}
	}
}
