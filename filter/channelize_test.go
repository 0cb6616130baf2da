package filter

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// refChannelize is the channelizer's definition in float64: frame n,
// channel k is Σ_i h[i]·x[nD−i]·exp(−j2πk(nD−i)/M), for the frames
// 0, D, 2D, … < len(x). The sum over i is grouped by (nD−i) mod M first,
// which only reorders the float64 additions.
func refChannelize(h []float32, x []complex128, m, d int) [][]complex128 {
	var out [][]complex128
	b := make([]complex128, m)
	for t := 0; t < len(x); t += d {
		clear(b)
		for i, hi := range h {
			if t-i < 0 {
				break
			}
			b[(t-i)%m] += complex(float64(hi), 0) * x[t-i]
		}
		y := make([]complex128, m)
		for k := range m {
			for r, v := range b {
				if v != 0 {
					y[k] += v * cmplx.Rect(1, -2*math.Pi*float64(k*r%m)/float64(m))
				}
			}
		}
		out = append(out, y)
	}
	return out
}

// The bank gives the definition's frames (float64) within a tolerance
// scaled by Σ|h|·max|x|, for M from 2 to 1024, critically sampled and 2×
// oversampled (and D = M/4, and M not a power of two), tap counts that
// are not multiples of M, real and complex input, and any split of the
// stream into blocks.
func TestChannelizerMatchesDefinition(t *testing.T) {
	// 1e-6 of Σ|h|·max|x|: float32 roundings in the polyphase sums and
	// each FFT stage. The largest error seen over these cases is 6.1e-8
	// (amd64, AVX2).
	const tol = 1e-6
	rng := rand.New(rand.NewPCG(30, 1))
	type bank struct{ m, d, taps int }
	var banks []bank
	for _, m := range []int{2, 8, 64, 1024} {
		for _, d := range []int{m, m / 2} {
			banks = append(banks, bank{m, d, 3*m + 1}, bank{m, d, 5*m - m/2 + 1})
		}
	}
	banks = append(banks, bank{64, 16, 1000}, bank{6, 3, 25}, bank{12, 4, 50}, bank{100, 50, 333}, bank{3, 1, 7}, bank{8, 8, 5}, bank{16, 8, 1},
		bank{96, 48, 16 * 96}, bank{80, 80, 700}, bank{28, 14, 100}, bank{15, 5, 61})
	for _, b := range banks {
		for _, cplx := range []bool{false, true} {
			for _, style := range []string{"one", "random", "short"} {
				name := fmt.Sprintf("M=%d/D=%d/taps=%d/complex=%v/%s", b.m, b.d, b.taps, cplx, style)
				t.Run(name, func(t *testing.T) {
					ch := channelsOf(cplx)
					n := 2*b.taps + 7*b.m + 13
					maxBlock := max(3*b.d+5, 97)
					h := randSlice(rng, b.taps)
					x := randSlice(rng, ch*n)
					xc := make([]complex128, n)
					for i := range xc {
						if cplx {
							xc[i] = complex(float64(x[2*i]), float64(x[2*i+1]))
						} else {
							xc[i] = complex(float64(x[i]), 0)
						}
					}
					c, err := NewChannelizer(h, b.m, b.d, cplx, maxBlock)
					if err != nil {
						t.Fatal(err)
					}
					var got []float32
					pos := 0
					for _, k := range splits(rng, n, b.taps, maxBlock, style) {
						dst := make([]float32, 2*b.m*c.MaxOut(k))
						w, err := c.Process(dst, x[ch*pos:ch*(pos+k)])
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, dst[:w]...)
						pos += k
					}
					want := refChannelize(h, xc, b.m, b.d)
					if len(got) != 2*b.m*len(want) {
						t.Fatalf("%d values, want %d frames of %d channels", len(got), len(want), b.m)
					}
					var hsum float64
					for _, v := range h {
						hsum += math.Abs(float64(v))
					}
					var worst float64
					for f, y := range want {
						for k, v := range y {
							g := complex(float64(got[2*(f*b.m+k)]), float64(got[2*(f*b.m+k)+1]))
							worst = max(worst, cmplx.Abs(g-v))
						}
					}
					if worst > tol*hsum {
						t.Errorf("max error %.3g of Σ|h|·max|x| = %.3g (tolerance %g)", worst/hsum, hsum, tol)
					}
				})
			}
		}
	}
}

// A tone at channel k's centre comes out of channel k alone (at the
// prototype's DC gain), and its neighbours see the stopband: the
// channel order and the sign of the shift.
func TestChannelizerToneLandsInItsChannel(t *testing.T) {
	const m, n = 16, 1 << 14
	h, err := Design(Spec{Type: Lowpass, SampleRate: m, CutoffHz: 0.5, NumTaps: 16 * m})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 3, 8, 13} { // 13: −3·fs/16
		x := make([]float32, 2*n)
		for i := range n {
			s, c := math.Sincos(2 * math.Pi * float64(k) * float64(i) / m)
			x[2*i], x[2*i+1] = float32(c), float32(s)
		}
		b, err := NewChannelizer(h, m, m, true, n)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, 2*m*b.MaxOut(n))
		w, _ := b.Process(y, x)
		last := y[w-2*m : w] // a frame long after the filter's start
		for c := range m {
			p := math.Hypot(float64(last[2*c]), float64(last[2*c+1]))
			switch {
			case c == k && math.Abs(p-1) > 0.01:
				t.Errorf("tone in channel %d: |y_%d| = %.4f, want 1", k, c, p)
			case c != k && p > 0.01:
				t.Errorf("tone in channel %d: |y_%d| = %.4f, want ~0", k, c, p)
			}
		}
	}
}

// Seek continues a stream from its history, Reset restarts it, and
// Process allocates nothing.
func TestChannelizerSeekResetAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	const m, d, n = 64, 32, 4096
	h := randSlice(rng, 16*m-3)
	x := randSlice(rng, 2*n)
	a, _ := NewChannelizer(h, m, d, true, n)
	whole := make([]float32, 2*m*a.MaxOut(n))
	w, _ := a.Process(whole, x)

	const at = 1000 // not a multiple of D: the next frame is at 1024
	b, _ := NewChannelizer(h, m, d, true, n)
	b.Seek(x[:2*at], at)
	part := make([]float32, 2*m*b.MaxOut(n))
	wp, _ := b.Process(part, x[2*at:])
	first := (at + d - 1) / d
	if wp != w-2*m*first || MaxErrRMS(part[:wp], whole[2*m*first:w]) != 0 {
		t.Errorf("after Seek: %d values, want the last %d of the whole run's", wp, w-2*m*first)
	}
	a.Reset()
	if w2, _ := a.Process(part, x); w2 != w || MaxErrRMS(part[:w2], whole[:w]) != 0 {
		t.Error("output after Reset differs")
	}
	if allocs := testing.AllocsPerRun(10, func() { a.Process(part, x) }); allocs != 0 {
		t.Errorf("Process allocates %v times", allocs)
	}
	for name, c := range map[string]struct{ dst, src int }{
		"a block over the maximum": {len(part), 2 * (n + 1)},
		"an odd complex block":     {len(part), 2*n - 1},
		"a short dst":              {2*m*(n/d) - 1, 2 * n},
	} {
		if _, err := a.Process(make([]float32, c.dst), make([]float32, c.src)); !errors.Is(err, ErrBlockLength) {
			t.Errorf("%s: %v, want ErrBlockLength", name, err)
		}
	}
}

func TestNewChannelizerErrors(t *testing.T) {
	for _, c := range []struct {
		taps    []float32
		m, d, n int
	}{
		{[]float32{1}, 1, 1, 8},
		{[]float32{1}, MaxBankChannels * 2, 1, 8},
		{[]float32{1}, 8, 3, 8},
		{[]float32{1}, 8, 0, 8},
		{nil, 8, 8, 8},
		{[]float32{1}, 8, 8, 0},
	} {
		if _, err := NewChannelizer(c.taps, c.m, c.d, true, c.n); err == nil {
			t.Errorf("NewChannelizer(%d taps, M=%d, D=%d, max %d) accepted", len(c.taps), c.m, c.d, c.n)
		}
	}
}

// BenchmarkChannelizer: input MS/s of the bank on one core, critically
// sampled, at the channel counts GNU Radio's pfb_channelizer_ccf is
// compared at (bench/channelize_vs_gnuradio.py).
func BenchmarkChannelizer(b *testing.B) {
	for _, c := range []struct{ m, d, tpc int }{{64, 64, 8}, {64, 64, 16}, {64, 64, 32}, {64, 32, 16}, {256, 256, 16}, {1024, 1024, 16}, {100, 100, 16}} {
		b.Run(fmt.Sprintf("M=%d/D=%d/taps=%dxM", c.m, c.d, c.tpc), func(b *testing.B) {
			const n = 1 << 16
			rng := rand.New(rand.NewPCG(1, 1))
			ch, _ := NewChannelizer(randSlice(rng, c.tpc*c.m), c.m, c.d, true, n)
			x := randSlice(rng, 2*n)
			y := make([]float32, 2*c.m*ch.MaxOut(n))
			b.ReportAllocs()
			for b.Loop() {
				ch.Process(y, x)
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds()/1e6, "inMS/s")
		})
	}
}
