package cuda

import (
	"math"
	"testing"
)

// TestChainTile: the tiled kernel's tile fits the shared-memory limit, its
// rows hold the whole staged span plus the reads of every output of the
// tile, and a tile too big for any thread count falls back to the direct
// kernel.
func TestChainTile(t *testing.T) {
	for _, tc := range []struct {
		mp, q       int64
		elem        int
		wantThreads int
	}{
		{8, 129, 8, 128},  // complex ÷8, 129 taps
		{2, 16, 8, 256},   // complex 3/2, 48 taps
		{1, 129, 4, 256},  // real, no decimation
		{3, 2000, 8, 256}, // long filter
		{8, 2000, 8, 128}, // long filter ÷8
		{8, 4000, 8, 64},  // longer
		{1, 8000, 8, 0},   // too long: direct
		{4096, 2, 4, 0},   // huge decimation: direct
	} {
		th, tq, w, smem := chainTile(tc.mp, tc.q, tc.elem, 4)
		if th != tc.wantThreads {
			t.Errorf("mp %d q %d: %d threads, want %d", tc.mp, tc.q, th, tc.wantThreads)
		}
		if th == 0 {
			continue
		}
		span := tc.mp*tq + tc.q
		switch {
		case tq != int64(th*4):
			t.Errorf("mp %d q %d: tile %d for %d threads", tc.mp, tc.q, tq, th)
		case smem > chainSharedLimit || int64(smem) != tc.mp*w*int64(tc.elem):
			t.Errorf("mp %d q %d: %d bytes of shared memory", tc.mp, tc.q, smem)
		case tc.mp*w < span || w%2 == 0:
			t.Errorf("mp %d q %d: rows of %d do not hold the span %d (or are even)", tc.mp, tc.q, w, span)
		case tq+(tc.q-1)/tc.mp >= w: // the largest column a thread reads
			t.Errorf("mp %d q %d: column %d outside rows of %d", tc.mp, tc.q, tq+(tc.q-1)/tc.mp, w)
		}
	}
}

func TestCeilMulDiv(t *testing.T) {
	for _, tc := range []struct{ n, l, m, want int64 }{
		{0, 3, 2, 0}, {1, 3, 2, 2}, {2, 3, 2, 3}, {7, 1, 8, 1}, {8, 1, 8, 1}, {9, 1, 8, 2},
		{1 << 61, 1, 1 << 16, 1 << 45}, {1<<61 + 1, 3, 1 << 16, 3<<45 + 1}, // n·l overflows int64: the split form does not
	} {
		if got := ceilMulDiv(tc.n, tc.l, tc.m); got != tc.want {
			t.Errorf("ceil(%d·%d/%d) = %d, want %d", tc.n, tc.l, tc.m, got, tc.want)
		}
	}
}

// TestBankSplit: the split path for windows of 32 Ki samples or more at
// 16 taps a branch or more, as measured (docs/THROUGHPUT.md).
func TestBankSplit(t *testing.T) {
	for _, tc := range []struct {
		p, m  int
		split bool
	}{
		{8, 64, false}, {32, 64, false}, {32, 256, false}, {16, 1024, false}, {8, 4096, false}, {15, 4096, false},
		{32, 1024, false}, {16, 4096, false}, {32, 4096, false}, {64, 512, false}, {16, 2048, false}, {64, 2048, false},
		{64, 1024, true}, {128, 512, true}, {64, 4096, true}, {128, 2048, true}, {32, 8192, true},
	} {
		if got := bankSplit(newBankGeometry(tc.p*tc.m, tc.m, tc.m, 0)); got != tc.split {
			t.Errorf("%d taps a branch, %d channels: split %v, want %v", tc.p, tc.m, got, tc.split)
		}
	}
	// The general kernel (not critically sampled, or M no power of two),
	// and a critically sampled bank the device made general (fit).
	for _, tc := range []struct {
		p, m, d int
		split   bool
	}{
		{16, 1024, 512, false}, {32, 1024, 512, true}, {16, 4096, 2048, true}, {15, 4096, 2048, false},
		{16, 3000, 3000, true}, {8, 3000, 3000, false},
	} {
		if got := bankSplit(newBankGeometry(tc.p*tc.m, tc.m, tc.d, 0)); got != tc.split {
			t.Errorf("%d taps a branch, %d channels ÷%d: split %v, want %v", tc.p, tc.m, tc.d, got, tc.split)
		}
	}
	g := newBankGeometry(16*4096, 4096, 4096, 0)
	if err := g.fit(64 << 10); err != nil || !g.general || !bankSplit(g) {
		t.Errorf("4096 channels x 16 taps in 64 KiB: general %v, split %v (%v); want the general kernel's split", g.general, bankSplit(g), err)
	}
}

// TestBankGeometry: the filter bank's launch shape and twiddles.
func TestBankGeometry(t *testing.T) {
	for _, tc := range []struct {
		ntaps, m, d, kept int
		want              bankGeometry
	}{
		{5, 2, 2, 0, bankGeometry{m: 2, logM: 1, d: 2, p: 3, frames: 1024, kept: 2}},
		{1000, 64, 32, 3, bankGeometry{m: 64, logM: 6, d: 32, p: 16, frames: 32, kept: 3}},
		{777, 100, 50, 0, bankGeometry{m: 100, logM: -1, d: 50, p: 8, frames: 20, kept: 100}},
		{8192, 4096, 2048, 0, bankGeometry{m: 4096, logM: 12, d: 2048, p: 2, frames: 2, kept: 4096}},
		{6000, 2048, 2048, 0, bankGeometry{m: 2048, logM: 11, d: 2048, p: 3, frames: 2, kept: 2048}},
		{6000, 3000, 3000, 0, bankGeometry{m: 3000, logM: -1, d: 3000, p: 2, frames: 1, kept: 3000}},
	} {
		g := newBankGeometry(tc.ntaps, tc.m, tc.d, tc.kept)
		if g != tc.want {
			t.Errorf("%d taps, %d channels ÷%d, %d kept: %+v, want %+v", tc.ntaps, tc.m, tc.d, tc.kept, g, tc.want)
		}
		if smem := g.smemBytes(); smem > 72<<10 {
			t.Errorf("%d channels: %d bytes of shared memory > 72 KiB", tc.m, smem)
		}
	}
	tw := bankTwiddles(4) // 1, j, −1, −j
	want := []float64{1, 0, 0, 1, -1, 0, 0, -1}
	for i, w := range want {
		if math.Abs(float64(tw[i])-w) > 1e-7 {
			t.Fatalf("bankTwiddles(4) = %v, want %v", tw, want)
		}
	}
}

// TestRetuneCap: a filter keeps the history of ChainRetuneTaps for
// retunes within ChainRetuneHistoryBytes, and never less than its own.
func TestRetuneCap(t *testing.T) {
	poly := func(q int64) int64 { return q - 1 }
	bank := func(m int64) func(int64) int64 { return func(p int64) int64 { return p*m - 1 } }
	for _, tc := range []struct {
		name                  string
		own, perBranch, frame int64
		hist                  func(int64) int64
		want                  int64
	}{
		{"fir, one complex channel", 129, 1, 8, poly, ChainRetuneTaps},
		{"fir ÷ any, real", 5, 1, 4, poly, ChainRetuneTaps},
		{"resample-like branches of 3", 16, 3, 8, poly, (ChainRetuneTaps + 2) / 3},
		{"fir on 64 complex channels: 256 KiB", 33, 1, 512, poly, ChainRetuneHistoryBytes/512 + 1},
		{"fir on 1024 complex channels: its own", 129, 1, 8192, poly, 129},
		{"bank 64 channels", 16, 64, 8, bank(64), ChainRetuneTaps / 64},
		{"bank 4096 × 16: its own", 16, 4096, 8, bank(4096), 16},
		{"bank 1024 × 4, real", 4, 1024, 4, bank(1024), 8},
	} {
		got := retuneCap(tc.own, tc.perBranch, tc.frame, tc.hist)
		if got != tc.want {
			t.Errorf("%s: %d taps per branch, want %d", tc.name, got, tc.want)
		}
		if got > tc.own && tc.hist(got)*tc.frame > ChainRetuneHistoryBytes {
			t.Errorf("%s: %d taps per branch keep %d bytes of history", tc.name, got, tc.hist(got)*tc.frame)
		}
	}
}

// TestBankCompiled: the kernels compiled for M take critically sampled
// banks of 32 to 4096 channels, each with the frames a block that the
// kernel assumes (bankFrames in kernels/chain.cu: 2048 values, 4096 from
// 256 channels, at least two frames).
func TestBankCompiled(t *testing.T) {
	for _, tc := range []struct {
		m, d int
		want bool
	}{
		{64, 64, true}, {64, 32, false}, {32, 32, true}, {16, 16, false}, {4096, 4096, true},
		{128, 128, true}, {256, 256, true}, {1024, 1024, true}, {2048, 2048, true},
		{4096, 2048, false}, {100, 100, false}, {1024, 1, false}, {2, 2, false},
	} {
		g := newBankGeometry(3*tc.m, tc.m, tc.d, 0)
		if got := bankCompiled(g.m, g.logM, g.d); got != tc.want {
			t.Errorf("%d channels ÷%d: compiled %v, want %v", tc.m, tc.d, got, tc.want)
		}
		if !tc.want {
			continue
		}
		values := bankBlockValues
		if tc.m >= 256 {
			values = bankPairValues
		}
		if want := int64(max(bankMinFrames, values/tc.m)); g.frames != want {
			t.Errorf("%d channels: %d frames a block, the kernel takes %d", tc.m, g.frames, want)
		}
	}
}

// TestBankFit: a bank whose blocks need more shared memory than the
// device allows drops to the general kernel's frames (4096 channels on
// Turing's 64 KiB), and one that cannot fit at all is refused.
func TestBankFit(t *testing.T) {
	for _, tc := range []struct {
		m, d, optin     int
		frames          int64
		general, refuse bool
	}{
		{4096, 4096, 227 << 10, 2, false, false}, // H100
		{4096, 4096, 64 << 10, 1, true, false},   // Turing
		{4096, 2048, 64 << 10, 1, true, false},
		{2048, 2048, 64 << 10, 2, false, false},
		{1024, 1024, 48 << 10, 4, false, false},
		{256, 256, 48 << 10, 16, false, false},
		{64, 64, 48 << 10, 32, false, false},
		{3000, 3000, 48 << 10, 1, false, false},
		{4096, 4096, 32 << 10, 1, false, true},
	} {
		g := newBankGeometry(8*tc.m, tc.m, tc.d, 0)
		err := g.fit(tc.optin)
		general := g.general
		switch {
		case (err != nil) != tc.refuse:
			t.Errorf("%d channels ÷%d in %d KiB: error %v, want refused %v", tc.m, tc.d, tc.optin>>10, err, tc.refuse)
		case err == nil && (g.frames != tc.frames || general != tc.general || g.smemBytes() > tc.optin):
			t.Errorf("%d channels ÷%d in %d KiB: %d frames (%d B), general %v; want %d frames, general %v",
				tc.m, tc.d, tc.optin>>10, g.frames, g.smemBytes(), general, tc.frames, tc.general)
		}
	}
}
