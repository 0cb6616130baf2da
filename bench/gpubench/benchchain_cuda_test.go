//go:build cuda

package gpubench

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// chainBenchSamples is the input of every chain benchmark pass: 64 Mi
// complex samples (512 MiB), the size the CuPy anchors were measured at
// (scripts/bench_chain_cupy.py times CuPy on the same sizes).
const chainBenchSamples = 64 << 20

// lowpassTaps is a Hamming-windowed sinc of n taps with cutoff fc
// cycles/sample and DC gain g: the data do not change the speed, but
// realistic taps keep the output in range.
func lowpassTaps(n int, fc, g float64) []float32 {
	h := make([]float32, n)
	var sum float64
	for i := range h {
		t := float64(i) - float64(n-1)/2
		s := 2 * fc
		if t != 0 {
			s = math.Sin(2*math.Pi*fc*t) / (math.Pi * t)
		}
		w := 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(n-1))
		h[i] = float32(s * w)
		sum += s * w
	}
	for i := range h {
		h[i] = float32(float64(h[i]) * g / sum)
	}
	return h
}

// reportChain reports a chain benchmark's best pass: input GS/s and ms as
// metrics, and a log line naming the output (what: "out", "frames out").
func reportChain(b *testing.B, res BenchChainResult, what string) {
	b.ReportMetric(res.InGSps(), "GS/s")
	b.ReportMetric(res.Best()*1e3, "best-ms")
	b.SetBytes(int64(chainBenchSamples) * 8)
	b.Logf("chain %s on %s: %d complex samples in, %d %s, best %.3f ms, %.1f GS/s of input (%d passes)",
		res.Chain, res.Device.Name, res.Samples, res.OutSamples, what, res.Best()*1e3, res.InGSps(), len(res.Seconds))
}

// BenchmarkChainGPU times the chain kernels on data in device memory:
// input GS/s (complex samples) of shift + 129-tap FIR ÷8, the FIR ÷8
// alone, and resample 3/2 with 48 taps, on 64 Mi complex samples per
// pass. Run with -test.benchtime Nx: each b.N is one timed pass; the best
// pass is reported as GS/s.
func BenchmarkChainGPU(b *testing.B) {
	const fs = 2e6
	for _, bc := range []struct {
		name   string
		stages []stage.Stage
	}{
		{"shift+fir129/8", []stage.Stage{{Kind: stage.KindShift, FrequencyHz: -250000}, {Kind: stage.KindFIR, Taps: lowpassTaps(129, 0.05, 1), Decimate: 8}}},
		{"fir129/8", []stage.Stage{{Kind: stage.KindFIR, Taps: lowpassTaps(129, 0.05, 1), Decimate: 8}}},
		{"resample48x3/2", []stage.Stage{{Kind: stage.KindResample, Taps: lowpassTaps(48, 1.0/6, 3), Up: 3, Down: 2}}},
		{"shift", []stage.Stage{{Kind: stage.KindShift, FrequencyHz: -250000}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := BenchChainConfig{
				Chain:   stage.Chain{SampleRate: fs, Complex: true, Stages: bc.stages},
				Samples: chainBenchSamples, Seed: 1, Warmup: 2, Reps: b.N,
				PTXPath: os.Getenv("SIGPROC_CHAIN_PTX"),
			}
			res, err := BenchChain(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			reportChain(b, res, "out")
		})
	}
}

// BenchmarkChannelizeGPU times the filter bank kernel (stage channelize)
// on 64 Mi complex samples in device memory: M channels × P taps per
// channel, critically sampled (D = M, the only bank CuPy's
// channelize_poly makes; bench/channelize_cupy.py times it on the same
// sizes), plus a 2× oversampled bank and a 1024-channel bank keeping 64
// (select fused), alone and with a 129-tap fir ÷8 on each kept channel
// after it; each as the chain chooses (bank64x8), fused
// (bank64x8/fused) and split (bank64x8/split). Input GS/s of the best
// pass, as BenchmarkChainGPU.
func BenchmarkChannelizeGPU(b *testing.B) {
	type bankCase struct {
		name    string
		m, p, d int
		keep    []int
		after   []stage.Stage // stages after the select, on each kept channel
	}
	var cases []bankCase
	for _, m := range []int{64, 256, 1024, 2048, 4096} {
		for _, p := range []int{8, 16, 32} {
			cases = append(cases, bankCase{name: fmt.Sprintf("bank%dx%d", m, p), m: m, p: p, d: m})
		}
	}
	keep := make([]int, 64)
	for i := range keep {
		keep[i] = 16 * i
	}
	cases = append(cases,
		bankCase{name: "bank64x16/32", m: 64, p: 16, d: 32},
		bankCase{name: "bank1024x16+select64", m: 1024, p: 16, d: 1024, keep: keep},
		bankCase{name: "bank1024x16+select64+fir129/8", m: 1024, p: 16, d: 1024, keep: keep,
			after: []stage.Stage{{Kind: stage.KindFIR, Taps: lowpassTaps(129, 0.05, 1), Decimate: 8}}})
	for _, bc := range cases {
		for _, path := range []string{"", "fused", "split"} {
			name := bc.name
			if path != "" {
				name += "/" + path
			}
			b.Run(name, func(b *testing.B) {
				stages := []stage.Stage{stage.NewChannelize(lowpassTaps(bc.m*bc.p, 0.5/float64(bc.m), 1), bc.m, bc.d)}
				if bc.keep != nil {
					stages = append(stages, stage.NewSelect(bc.keep...))
				}
				stages = append(stages, bc.after...)
				cfg := BenchChainConfig{
					Chain:   stage.Chain{SampleRate: 1e9, Complex: true, Stages: stages},
					Samples: chainBenchSamples, Seed: 1, Warmup: 2, Reps: b.N,
					PTXPath: os.Getenv("SIGPROC_CHAIN_PTX"), BankPath: path,
				}
				res, err := BenchChain(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				reportChain(b, res, "frames out")
			})
		}
	}
}
