package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkFFT times one forward plus one inverse transform of n points;
// ns/op divided by n·log2(n) is the fftNsPerPointStage of crossover.go.
func BenchmarkFFT(b *testing.B) {
	for _, k := range []int{10, 12, 13, 14, 15, 16, 17} {
		n := 1 << k
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			p, err := newFFTPlan(n)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			re, im := randSlice(rng, n), randSlice(rng, n)
			b.ReportAllocs()
			for range b.N {
				p.forward(re, im)
				p.inverse(re, im)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*k), "ns/point/stage")
		})
	}
}

// BenchmarkFFTConvolve times one overlap-save transform pair (forward,
// spectrum product, inverse; fused in the vector tail) on each FFT
// kernel: its ns/point is the convNs tables of crossover.go.
func BenchmarkFFTConvolve(b *testing.B) {
	for _, kern := range fftKernels() {
		for _, k := range []int{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17} {
			n := 1 << k
			b.Run(fmt.Sprintf("%v/n=%d", kern, n), func(b *testing.B) {
				p, err := newFFTPlan(n)
				if err != nil {
					b.Fatal(err)
				}
				p.kern = kern
				rng := rand.New(rand.NewPCG(1, 2))
				re, im := randSlice(rng, n), randSlice(rng, n)
				hr, hi := randSlice(rng, n), randSlice(rng, n)
				for i := range hr { // keep the values bounded across iterations
					hr[i], hi[i] = hr[i]/float32(n), hi[i]/float32(n)
				}
				b.ReportAllocs()
				for range b.N {
					p.convolve(re, im, hr, hi)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
			})
		}
	}
}

// BenchmarkFIRMethod compares the two methods at the tap counts
// on 64 Ki-sample blocks (real and complex).
func BenchmarkFIRMethod(b *testing.B) {
	for _, complex := range []bool{false, true} {
		for _, nt := range []int{16, 64, 129, 257, 513, 1025, 2049, 4097, 8193} {
			for _, m := range []Method{MethodDirect, MethodFFT} {
				b.Run(fmt.Sprintf("complex=%v/taps=%d/%v", complex, nt, m), func(b *testing.B) {
					benchMethod(b, m, nt, 65536, complex)
				})
			}
		}
	}
}

func benchMethod(b *testing.B, m Method, nt, block int, complex bool) {
	rng := rand.New(rand.NewPCG(1, uint64(nt)))
	ch := 1
	if complex {
		ch = 2
	}
	f, err := NewFIRMethod(randSlice(rng, nt), complex, block, m)
	if err != nil {
		b.Fatal(err)
	}
	src := randSlice(rng, block*ch)
	dst := make([]float32, block*ch)
	b.SetBytes(int64(block * ch * 4))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := f.Process(dst, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(block)/b.Elapsed().Seconds()/1e6, "MS/s")
}
