package filter

// Cost model for MethodAuto, fitted on the development machine (AMD EPYC
// Zen 4, one core; figures in crossover_test.go's comment and
// docs/BENCHMARKS.md, issue 20).

// directCost is nanoseconds per tap per real output value on kernel k.
func directCost(k kernelKind) float64 {
	switch k {
	case kernelAVX512:
		return 0.0190
	case kernelAVX2:
		return 0.030
	}
	return 0.20
}

// fftCost is nanoseconds for one overlap-save transform pair of 2^log2n
// points: forward, multiply, inverse and the copies in and out.
func fftCost(log2n int) float64 {
	n := float64(int(1) << log2n)
	return n * (fftNsPerPointStage*float64(log2n) + fftNsPerPoint)
}

const (
	fftNsPerPointStage = 1.0
	fftNsPerPoint      = 2.0
)
