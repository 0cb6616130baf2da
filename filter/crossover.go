package filter

// Cost model for MethodAuto and for the overlap-save transform sizes,
// measured on the development machine (AMD EPYC Zen 4 with AVX-512, one
// core; the tables are in docs/data/benchmarks-cpu.md under issue 20). MethodAuto
// compares the two methods per block, so the crossover moves with the
// block size and the kernels this machine runs.

// directCost is nanoseconds per tap per real output value on kernel k;
// directFixed is the per-output cost on top (copies, loop ends).
func directCost(k kernelKind) (perTap, fixed float64) {
	switch k {
	case kernelAVX512:
		return 0.0175, 0.3 // 810 MS/s at 64 taps, 213 at 257, 51.6 at 1025
	case kernelAVX2:
		return 0.0205, 0.3 // 96.5 MS/s at 512 taps
	}
	return 0.48, 0.5 // 4.1 MS/s at 512 taps
}

// convPairNs is nanoseconds for one overlap-save transform pair of
// 2^log2n points: forward, spectrum product, inverse, and the copies in
// and out of the work arrays.
func convPairNs(log2n int, k kernelKind) float64 {
	return float64(int(1)<<log2n) * (convNsPerPoint(log2n, k) + convCopyNs)
}

// convCopyNs is the per-point cost of filling the work arrays and
// copying the outputs out.
const convCopyNs = 0.25

// convStreamNs is what the fft method loses per output value, beyond
// the transforms, when the stream comes from memory rather than from
// cache: `sigproc bench cpu` on 4 Mi samples against BenchmarkFIRMethod
// on one cached block gave 0.5–0.9 ns more per output for fft and about
// nothing for direct (64 taps: direct 665–740 MS/s either way, fft
// 950 cached but 534–610 streamed). The transforms' working set shares
// the second-level cache with the stream.
const convStreamNs = 0.6

// convNsPerPoint is BenchmarkFFTConvolve's ns/point, best of 5 on a
// shared machine, for the AVX-512 kernels, the AVX2 kernels (forced on
// the same Zen 4 machine) and the Go stages; sizes past the tables grow
// by a fixed step (out of the second-level cache).
func convNsPerPoint(log2n int, k kernelKind) float64 {
	tab, grow := convNsGo[:], 6.0
	switch {
	case log2n < 4: // no fused tail: Go
	case k == kernelAVX512:
		tab, grow = convNsAVX512[:], 0.4
	case k == kernelAVX2:
		tab, grow = convNsAVX2[:], 0.4
	}
	if log2n < len(tab) {
		return tab[log2n]
	}
	return tab[len(tab)-1] + grow*float64(log2n-len(tab)+1)
}

var (
	// n = 2^0 … 2^17
	convNsAVX512 = [...]float64{0, 0, 0, 0, 2.98, 2.38, 1.80, 1.38, 1.28, 1.36, 1.32, 1.51, 1.78, 1.96, 2.15, 2.45, 2.60, 2.97}
	convNsAVX2   = [...]float64{0, 0, 0, 0, 2.11, 2.28, 1.60, 1.80, 1.81, 1.90, 1.83, 1.90, 2.38, 3.03, 3.35, 3.61, 3.95, 4.11}
	convNsGo     = [...]float64{8.5, 8.5, 8.5, 8.5, 8.5, 8.5, 8.5, 8.5, 8.8, 12, 16.4, 19.5, 28, 33, 55, 50, 74, 79}
)
