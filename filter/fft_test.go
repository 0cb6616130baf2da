package filter

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestFFTRoundTrip checks inverse(forward(x)) = n·x.
func TestFFTRoundTrip(t *testing.T) {
	for k := 1; k <= 14; k++ {
		n := 1 << k
		p, err := newFFTPlan(n)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, uint64(k)))
		xr, xi := randSlice(rng, n), randSlice(rng, n)
		re, im := append([]float32(nil), xr...), append([]float32(nil), xi...)
		p.forward(re, im)
		p.inverse(re, im)
		for i := range re {
			gr, gi := float64(re[i])/float64(n), float64(im[i])/float64(n)
			if d := math.Hypot(gr-float64(xr[i]), gi-float64(xi[i])); d > 1e-5 {
				t.Fatalf("n=%d: point %d = (%g,%g), want (%g,%g)", n, i, gr, gi, xr[i], xi[i])
			}
		}
	}
}

// TestFFTCircularConvolution checks the one property fast convolution
// needs: forward, a pointwise product and inverse give n times the
// circular convolution (so forward is the DFT up to one fixed order).
func TestFFTCircularConvolution(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 5, 8, 11} {
		n := 1 << k
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, err := newFFTPlan(n)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(12, uint64(k)))
			ar, ai, br, bi := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
			// float64 reference: circular convolution of a and b.
			want := make([]complex128, n)
			for i := range n {
				for j := range n {
					want[(i+j)%n] += complex(float64(ar[i]), float64(ai[i])) * complex(float64(br[j]), float64(bi[j]))
				}
			}
			xr, xi := append([]float32(nil), ar...), append([]float32(nil), ai...)
			hr, hi := append([]float32(nil), br...), append([]float32(nil), bi...)
			p.forward(xr, xi)
			p.forward(hr, hi)
			cmulSplit(xr, xi, hr, hi)
			p.inverse(xr, xi)
			for i := range n {
				got := complex(float64(xr[i]), float64(xi[i])) / complex(float64(n), 0)
				if d := cmplx.Abs(got - want[i]); d > 1e-5*math.Sqrt(float64(n)) {
					t.Fatalf("point %d = %v, want %v", i, got, want[i])
				}
			}
		})
	}
}

func TestFFTPlanErrors(t *testing.T) {
	for _, n := range []int{-4, 0, 1, 3, 12} {
		if _, err := newFFTPlan(n); err == nil {
			t.Errorf("newFFTPlan(%d) = nil error", n)
		}
	}
}

func TestCmulSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 0))
	for n := 0; n <= 70; n++ {
		xr, xi, hr, hi := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
		gr, gi := append([]float32(nil), xr...), append([]float32(nil), xi...)
		cmulSplit(gr, gi, hr, hi)
		for i := range n {
			w := complex(float64(xr[i]), float64(xi[i])) * complex(float64(hr[i]), float64(hi[i]))
			if d := cmplx.Abs(complex(float64(gr[i]), float64(gi[i])) - w); d > 1e-6 {
				t.Fatalf("n=%d: x[%d] = (%g,%g), want %v", n, i, gr[i], gi[i], w)
			}
		}
	}
}

// fftKernels lists the FFT kernels this machine and build run: Go,
// then AVX2 and AVX-512 where available.
func fftKernels() []kernelKind {
	if !haveFFTVec {
		return []kernelKind{kernelGeneric}
	}
	return availableKernels()
}

// TestFFTVectorMatchesGo forces the Go stages and each vector kernel
// (AVX2, AVX-512: the passes and the fused 16-point tail) in turn on the
// same data: forward must give the same spectrum in the same order,
// inverse the same signal, and convolve the same as forward, product
// and inverse in Go.
func TestFFTVectorMatchesGo(t *testing.T) {
	kernels := fftKernels()[1:]
	if len(kernels) == 0 {
		t.Skip("no vector FFT kernels on this machine or build")
	}
	for _, kern := range kernels {
		for k := 1; k <= 15; k++ {
			n := 1 << k
			t.Run(fmt.Sprintf("%v/%d", kern, n), func(t *testing.T) {
				goPlan, err := newFFTPlan(n)
				if err != nil {
					t.Fatal(err)
				}
				goPlan.kern = kernelGeneric
				vecPlan, _ := newFFTPlan(n)
				vecPlan.kern = kern
				rng := rand.New(rand.NewPCG(14, uint64(k)))
				xr, xi := randSlice(rng, n), randSlice(rng, n)
				hr, hi := randSlice(rng, n), randSlice(rng, n)
				// A few float32 ulps per stage, relative to the output RMS.
				tol := 2e-7 * float64(k)
				run := func(p *fftPlan, f func(p *fftPlan, re, im []float32)) ([]float32, []float32) {
					re, im := append([]float32(nil), xr...), append([]float32(nil), xi...)
					f(p, re, im)
					return re, im
				}
				for _, tc := range []struct {
					name string
					f    func(p *fftPlan, re, im []float32)
				}{
					{"forward", func(p *fftPlan, re, im []float32) { p.forward(re, im) }},
					{"inverse", func(p *fftPlan, re, im []float32) { p.inverse(re, im) }},
					{"convolve", func(p *fftPlan, re, im []float32) { p.convolve(re, im, hr, hi) }},
				} {
					gr, gi := run(goPlan, tc.f)
					vr, vi := run(vecPlan, tc.f)
					e := max(MaxErrRMS(vr, gr), MaxErrRMS(vi, gi))
					if !(e <= tol) {
						t.Errorf("%s: vector against Go: max error %.3g of RMS > %.3g", tc.name, e, tol)
					}
				}
			})
		}
	}
}

func TestInterleave(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 0))
	for n := 0; n <= 40; n++ {
		src := randSlice(rng, 2*n)
		re, im := make([]float32, n), make([]float32, n)
		deinterleave(re, im, src)
		for i := range n {
			if re[i] != src[2*i] || im[i] != src[2*i+1] {
				t.Fatalf("n=%d: deinterleave point %d = (%g,%g), want (%g,%g)", n, i, re[i], im[i], src[2*i], src[2*i+1])
			}
		}
		dst := make([]float32, 2*n)
		interleave(dst, re, im)
		for i := range dst {
			if dst[i] != src[i] {
				t.Fatalf("n=%d: interleave value %d = %g, want %g", n, i, dst[i], src[i])
			}
		}
	}
}
