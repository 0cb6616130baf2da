package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchTaps = []int{1, 16, 64, 129, 512}
var benchBlocks = []int{256, 4096, 65536}

// BenchmarkFIR measures real-input throughput on the kernel NewFIR picks.
func BenchmarkFIR(b *testing.B) {
	for _, nt := range benchTaps {
		for _, block := range benchBlocks {
			b.Run(fmt.Sprintf("taps=%d/block=%d", nt, block), func(b *testing.B) {
				benchFIR(b, bestKernel, nt, block, false)
			})
		}
	}
}

// BenchmarkFIRKernel runs every kernel this CPU supports.
func BenchmarkFIRKernel(b *testing.B) {
	for _, k := range availableKernels() {
		for _, nt := range benchTaps {
			b.Run(fmt.Sprintf("kernel=%v/taps=%d/block=4096", k, nt), func(b *testing.B) {
				benchFIR(b, k, nt, 4096, false)
			})
		}
	}
}

// BenchmarkFIRComplex measures interleaved I/Q input; MS/s counts IQ
// samples.
func BenchmarkFIRComplex(b *testing.B) {
	for _, nt := range benchTaps {
		b.Run(fmt.Sprintf("taps=%d/block=4096", nt), func(b *testing.B) {
			benchFIR(b, bestKernel, nt, 4096, true)
		})
	}
}

func benchFIR(b *testing.B, k kernelKind, nt, block int, complex bool) {
	rng := rand.New(rand.NewPCG(1, uint64(nt)))
	ch := 1
	if complex {
		ch = 2
	}
	f, err := NewFIR(randSlice(rng, nt), complex, block)
	if err != nil {
		b.Fatal(err)
	}
	f.kern = k
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
