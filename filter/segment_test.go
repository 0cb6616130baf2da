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

// TestCutBalanced: the fft method's segments each start within half a
// transform's outputs of j·n/k (so that goroutines taking them in turn
// share the block evenly), are at least minSeg long and start at
// multiples of align, and every start is one of the whole block's
// transforms.
func TestCutBalanced(t *testing.T) {
	for _, tc := range []struct {
		taps, n, k, minSeg, align int
		complex                   bool
		want                      int // segments
	}{
		{129, 1 << 16, 8, 6144, 1, true, 8}, // 7 before: each cut the first transform past j·n/k
		{129, 1 << 16, 8, 8192, 1, true, 7}, // 8 Ki segments can't be cut from 896-sample transforms
		{129, 1 << 18, 8, 6144, 1, false, 8},
		{129, 1 << 21, 128, 6144, 1, true, 128},
		{1025, 1 << 20, 32, 8192, 8, true, 32},
		{129, 40000, 8, 6144, 1, true, 6},
		{4097, 1 << 20, 16, 8192, 1, true, 16},
		{129, 1 << 16, 8, 6144, 3, true, 8}, // a target on a transform start that is no multiple of 3
	} {
		taps := make([]float32, tc.taps)
		taps[0] = 1
		f, err := NewFIRMethod(taps, tc.complex, tc.n, MethodFFT)
		if err != nil {
			t.Fatal(err)
		}
		per := 2
		if tc.complex {
			per = 1
		}
		grain := per * slices.Max(f.fc.segs)
		starts := f.Cut(tc.n, tc.k, tc.minSeg, tc.align, nil)
		if len(starts) != tc.want {
			t.Errorf("%+v: %d segments %v, want %d", tc, len(starts), starts, tc.want)
		}
		cover := map[int]bool{}
		for p := 0; p < tc.n; p += f.fc.piece(tc.n-p, per) {
			cover[p] = true
		}
		ends := append(slices.Clone(starts), tc.n)
		for j, s := range starts {
			if !cover[s] || s%tc.align != 0 || ends[j+1]-s < tc.minSeg {
				t.Errorf("%+v: segment %d [%d, %d) not a transform start, unaligned or short", tc, j, s, ends[j+1])
			}
			if j > 0 && !f.fc.sameCover(starts[j-1], s, tc.n, per) {
				t.Errorf("%+v: segment %d's own cover from %d differs from the block's", tc, j-1, starts[j-1])
			}
			if len(starts) == tc.k && tc.align == 1 && 2*abs(s-j*tc.n/tc.k) > grain {
				t.Errorf("%+v: segment %d starts at %d, more than %d from %d", tc, j, s, grain/2, j*tc.n/tc.k)
			}
		}
	}
}
