package filter

// Cost model for MethodAuto, fitted on the development machine (AMD EPYC
// Zen 4 with AVX-512, one core; the measured table is in
// docs/BENCHMARKS.md under issue 20). MethodAuto compares these per
// block, so the crossover moves with the block size: at 65536-sample
// blocks it lies between 257 taps (direct 202 MS/s, fft 188) and 513
// (direct 106, fft 173).

// directCost is nanoseconds per tap per real output value on kernel k.
func directCost(k kernelKind) float64 {
	switch k {
	case kernelAVX512:
		return 0.0185 // 112 MS/s at 512 taps, 50.8 at 1025
	case kernelAVX2:
		return 0.0205 // 96.5 MS/s at 512 taps
	}
	return 0.48 // 4.1 MS/s at 512 taps
}

// fftCost is nanoseconds for one overlap-save transform pair of 2^log2n
// points: forward, multiply, inverse and the copies in and out, summed
// over the passes newFFTPlan would build.
func fftCost(log2n int) float64 {
	n := 1 << log2n
	ns := fftNsPerPoint
	q := n / 4
	for ; q >= 1; q /= 4 {
		switch {
		case q == 1:
			ns += fftNsUnitPass
		case q%16 == 0 && haveFFTVec:
			ns += fftNsVecPass
		default:
			ns += fftNsPass
		}
	}
	if log2n%2 == 1 {
		ns += fftNsRadix2
	}
	return float64(n) * ns
}

// Nanoseconds per point of one forward plus one inverse pass, from
// BenchmarkFFT and BenchmarkFIRMethod on the development machine.
const (
	fftNsVecPass  = 0.3 // radix-4, AVX-512 (fft_amd64.s)
	fftNsPass     = 6.0 // radix-4 with twiddles, Go
	fftNsUnitPass = 2.3 // the last radix-4 pass (no twiddles), Go
	fftNsRadix2   = 1.5 // the radix-2 pass of odd sizes, Go
	fftNsPerPoint = 1.5 // copies in and out and the spectrum product
)
