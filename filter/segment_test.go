package filter

import (
	"slices"
	"testing"
)

// TestCutRemembers: Cut on a filter that has cut other blocks before
// (the memo of the last arguments) gives what a fresh filter gives, and
// appends after what starts already holds.
func TestCutRemembers(t *testing.T) {
	taps := make([]float32, 129)
	taps[0] = 1
	const max = 1 << 21
	f, err := NewFIR(taps, true, max)
	if err != nil {
		t.Fatal(err)
	}
	if f.fc == nil {
		t.Fatal("129 taps on 2 Mi samples: want the fft method")
	}
	for i, tc := range []struct{ n, k, minSeg, align int }{
		{max, 64, 8192, 1}, {max, 64, 8192, 1}, {max - 12345, 64, 8192, 1}, {max, 64, 8192, 1},
		{max, 16, 8192, 1}, {max, 16, 8192, 8}, {max, 16, 65536, 8}, {1 << 16, 8, 8192, 1}, {1 << 16, 8, 8192, 1},
	} {
		fresh, err := NewFIR(taps, true, max)
		if err != nil {
			t.Fatal(err)
		}
		want := fresh.Cut(tc.n, tc.k, tc.minSeg, tc.align, nil)
		got := f.Cut(tc.n, tc.k, tc.minSeg, tc.align, []int{-1})
		if got[0] != -1 || !slices.Equal(got[1:], want) {
			t.Errorf("call %d %+v: %v, want -1 then %v", i, tc, got, want)
		}
		if len(want) < 2 && tc.n == max {
			t.Errorf("call %d %+v: %v, want segments", i, tc, want)
		}
	}
}
