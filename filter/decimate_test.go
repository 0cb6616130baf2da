package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// refDecimate is the float64 reference: lfilter(h, 1, x)[::M] per channel.
func refDecimate(h, x []float32, m int, complex bool) []float32 {
	ch := channelsOf(complex)
	n := len(x) / ch
	out := make([]float32, 0, ch*((n+m-1)/m))
	for i := 0; i < n; i += m {
		for c := range ch {
			var acc float64
			for k, v := range h {
				if i-k < 0 {
					break
				}
				acc += float64(v) * float64(x[ch*(i-k)+c])
			}
			out = append(out, float32(acc))
		}
	}
	return out
}

// refUpfirdn is the float64 reference: upfirdn(h, x, L, M)[:ceil(n·L/M)]
// straight from the definition, per channel.
func refUpfirdn(h, x []float32, l, m int, complex bool) []float32 {
	ch := channelsOf(complex)
	n := len(x) / ch
	nout := (n*l + m - 1) / m
	out := make([]float32, ch*nout)
	for o := range nout {
		for c := range ch {
			var acc float64
			for k, v := range h {
				j := o*m - k // index into u
				if j < 0 {
					break
				}
				if j%l == 0 && j/l < n {
					acc += float64(v) * float64(x[ch*(j/l)+c])
				}
			}
			out[ch*o+c] = float32(acc)
		}
	}
	return out
}

// streamer is what the decimator and resampler share.
type streamer interface {
	Process(dst, src []float32) (int, error)
	MaxOut(n int) int
}

// runBlocks feeds x in the given block sizes and returns all outputs,
// checking each call's count against MaxOut.
func runBlocks(t *testing.T, s streamer, x []float32, ch int, blocks []int) []float32 {
	t.Helper()
	var out []float32
	pos := 0
	for _, b := range blocks {
		dst := make([]float32, ch*s.MaxOut(b))
		w, err := s.Process(dst, x[ch*pos:ch*(pos+b)])
		if err != nil {
			t.Fatalf("Process(%d samples): %v", b, err)
		}
		out = append(out, dst[:w]...)
		pos += b
	}
	return out
}

func TestDecimatorMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	for _, k := range availableKernels() {
		for _, cplx := range []bool{false, true} {
			for _, ntaps := range []int{1, 2, 7, 16, 129, 513, 2100, 4500} {
				for _, m := range []int{1, 2, 3, 8, 13} {
					for _, style := range []string{"one", "random", "short", "max"} {
						name := fmt.Sprintf("%v/complex=%v/taps=%d/M=%d/%s", k, cplx, ntaps, m, style)
						t.Run(name, func(t *testing.T) {
							ch := channelsOf(cplx)
							const n, maxBlock = 3001, 509 // neither a multiple of M
							h := randSlice(rng, ntaps)
							x := randSlice(rng, ch*n)
							d, err := NewDecimator(h, m, cplx, max(n, maxBlock))
							if err != nil {
								t.Fatal(err)
							}
							d.setKernel(k)
							got := runBlocks(t, d, x, ch, splits(rng, n, ntaps, maxBlock, style))
							assertClose(t, got, refDecimate(h, x, m, cplx), ntaps)
						})
					}
				}
			}
		}
	}
}

func TestResamplerMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	ratios := [][2]int{{1, 1}, {2, 1}, {1, 2}, {3, 2}, {2, 3}, {2, 2}, {4, 6}, {5, 1}, {1, 8}, {160, 147}, {7, 13}}
	for _, k := range availableKernels() {
		for _, cplx := range []bool{false, true} {
			for _, ntaps := range []int{1, 5, 48, 129} {
				for _, lm := range ratios {
					for _, style := range []string{"one", "random", "single"} {
						name := fmt.Sprintf("%v/complex=%v/taps=%d/%d_%d/%s", k, cplx, ntaps, lm[0], lm[1], style)
						t.Run(name, func(t *testing.T) {
							ch := channelsOf(cplx)
							n, maxBlock := 997, 211
							if style == "single" {
								n = 101
							}
							h := randSlice(rng, ntaps)
							x := randSlice(rng, ch*n)
							r, err := NewResampler(h, lm[0], lm[1], cplx, max(n, maxBlock))
							if err != nil {
								t.Fatal(err)
							}
							r.setKernel(k)
							got := runBlocks(t, r, x, ch, splits(rng, n, ntaps, maxBlock, style))
							assertClose(t, got, refUpfirdn(h, x, lm[0], lm[1], cplx), ntaps)
						})
					}
				}
			}
		}
	}
}

func TestDecimatorResamplerErrors(t *testing.T) {
	if _, err := NewDecimator(nil, 2, false, 10); err == nil {
		t.Error("no taps accepted")
	}
	if _, err := NewDecimator([]float32{1}, 0, false, 10); err == nil {
		t.Error("decimate 0 accepted")
	}
	if _, err := NewResampler([]float32{1}, 0, 1, false, 10); err == nil {
		t.Error("up 0 accepted")
	}
	if _, err := NewResampler([]float32{1}, 1, -1, false, 10); err == nil {
		t.Error("down -1 accepted")
	}
	d, _ := NewDecimator([]float32{1, 2}, 4, true, 8)
	if _, err := d.Process(make([]float32, 8), make([]float32, 3)); err == nil {
		t.Error("odd complex block accepted")
	}
	if _, err := d.Process(make([]float32, 8), make([]float32, 18)); err == nil {
		t.Error("block over maxBlock accepted")
	}
	if _, err := d.Process(make([]float32, 1), make([]float32, 16)); err == nil {
		t.Error("short dst accepted")
	}
	r, _ := NewResampler([]float32{1, 2}, 3, 1, false, 8)
	if _, err := r.Process(make([]float32, 5), make([]float32, 2)); err == nil {
		t.Error("short resampler dst accepted")
	}
}

func TestDecimatorResetAndAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	h, x := randSlice(rng, 129), randSlice(rng, 2*1000)
	d, _ := NewDecimator(h, 8, true, 1000)
	r, _ := NewResampler(h, 3, 2, true, 1000)
	y := make([]float32, 2*1500)
	for _, s := range []interface {
		streamer
		Reset()
	}{d, r} {
		w1, _ := s.Process(y, x[:2*999])
		first := append([]float32(nil), y[:w1]...)
		s.Reset()
		w2, _ := s.Process(y, x[:2*999])
		if w1 != w2 || MaxErrRMS(y[:w2], first) != 0 {
			t.Errorf("%T: output after Reset differs", s)
		}
		if a := testing.AllocsPerRun(20, func() { s.Process(y, x[:2*999]) }); a != 0 {
			t.Errorf("%T.Process allocates %v times", s, a)
		}
	}
}

func BenchmarkDecimator(b *testing.B) {
	for _, ntaps := range []int{16, 129, 513} {
		for _, cplx := range []bool{false, true} {
			b.Run(fmt.Sprintf("taps=%d/M=8/complex=%v", ntaps, cplx), func(b *testing.B) {
				const n = 4096
				ch := channelsOf(cplx)
				rng := rand.New(rand.NewPCG(1, 1))
				d, _ := NewDecimator(randSlice(rng, ntaps), 8, cplx, n)
				x := randSlice(rng, ch*n)
				y := make([]float32, ch*n/8)
				b.ReportAllocs()
				for b.Loop() {
					d.Process(y, x)
				}
				b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds()/1e6, "inMS/s")
			})
		}
	}
}

func BenchmarkResampler(b *testing.B) {
	for _, lm := range [][2]int{{3, 2}, {2, 3}, {1, 8}} {
		b.Run(fmt.Sprintf("taps=48/%d_%d/complex", lm[0], lm[1]), func(b *testing.B) {
			const n = 4096
			rng := rand.New(rand.NewPCG(1, 1))
			r, _ := NewResampler(randSlice(rng, 48), lm[0], lm[1], true, n)
			x := randSlice(rng, 2*n)
			y := make([]float32, 2*r.MaxOut(n))
			b.ReportAllocs()
			for b.Loop() {
				r.Process(y, x)
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds()/1e6, "inMS/s")
		})
	}
}

// The fft method (full-rate overlap-save, every M-th output kept) gives
// the reference's outputs for any split, and auto picks it only where the
// polyphase sum costs more: long filters, small M.
func TestDecimatorFFTMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	for _, cplx := range []bool{false, true} {
		for _, ntaps := range []int{1, 7, 129, 513, 2100, 4500} {
			for _, m := range []int{1, 2, 3, 8, 13} {
				for _, style := range []string{"one", "random", "short", "max"} {
					t.Run(fmt.Sprintf("complex=%v/taps=%d/M=%d/%s", cplx, ntaps, m, style), func(t *testing.T) {
						ch := channelsOf(cplx)
						const n, maxBlock = 3001, 509
						h := randSlice(rng, ntaps)
						x := randSlice(rng, ch*n)
						d, err := NewDecimatorMethod(h, m, cplx, max(n, maxBlock), MethodFFT)
						if err != nil {
							t.Fatal(err)
						}
						if d.Method() != MethodFFT || d.Kernel() != "fft" {
							t.Fatalf("method %v kernel %s, want fft", d.Method(), d.Kernel())
						}
						got := runBlocks(t, d, x, ch, splits(rng, n, ntaps, maxBlock, style))
						assertClose(t, got, refDecimate(h, x, m, cplx), ntaps)
					})
				}
			}
		}
	}
	// The middle rows are the measured AVX-512 machine's (docs/data/benchmarks-cpu.md);
	// the ends hold for any kernel.
	for _, tc := range []struct {
		ntaps, m int
		want     Method
		avx512   bool
	}{
		{4097, 2, MethodFFT, false},
		{1025, 4, MethodFFT, true},
		{129, 8, MethodDirect, true},
		{16, 2, MethodDirect, false},
	} {
		if tc.avx512 && bestKernel != kernelAVX512 {
			continue
		}
		if got := chooseDecimMethod(MethodAuto, bestKernel, tc.ntaps, tc.m, 4096, true); got != tc.want {
			t.Errorf("auto on %v, %d taps ÷%d: %v, want %v", bestKernel, tc.ntaps, tc.m, got, tc.want)
		}
	}
}

// SetHistory continues a stream on either method: the outputs after it
// equal those of a decimator fed the whole stream.
func TestDecimatorSetHistoryBothMethods(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	h := randSlice(rng, 300)
	x := randSlice(rng, 2*2000)
	want := refDecimate(h, x, 3, true)
	for _, m := range []Method{MethodDirect, MethodFFT} {
		d, err := NewDecimatorMethod(h, 3, true, 1000, m)
		if err != nil {
			t.Fatal(err)
		}
		const cut = 1001 // not a multiple of 3: the phase must follow
		d.SetHistory(x[:2*cut], cut)
		dst := make([]float32, 2*d.MaxOut(1000))
		w, err := d.Process(dst, x[2*cut:2*(cut+999)])
		if err != nil {
			t.Fatal(err)
		}
		first := (cut + 2) / 3 // outputs before the cut
		assertClose(t, dst[:w], want[2*first:2*first+w], len(h))
	}
}

func BenchmarkDecimatorMethod(b *testing.B) {
	for _, tc := range []struct{ ntaps, m int }{{129, 8}, {1025, 4}, {4097, 2}, {4097, 8}} {
		for _, m := range []Method{MethodDirect, MethodFFT} {
			b.Run(fmt.Sprintf("taps=%d/M=%d/%v", tc.ntaps, tc.m, m), func(b *testing.B) {
				const n = 4096
				rng := rand.New(rand.NewPCG(1, 1))
				d, _ := NewDecimatorMethod(randSlice(rng, tc.ntaps), tc.m, true, n, m)
				x := randSlice(rng, 2*n)
				y := make([]float32, 2*d.MaxOut(n))
				b.ReportAllocs()
				for b.Loop() {
					d.Process(y, x)
				}
				b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds()/1e6, "inMS/s")
			})
		}
	}
}
