//go:build amd64 && !purego

package capture

import "golang.org/x/sys/cpu"

// haveAVX2 is read once at start-up and never written again.
var haveAVX2 = cpu.X86.HasAVX2

// anyNonFinite reports whether x holds a NaN or an infinity. The AVX2
// kernel tests 32 values an iteration, about 4× the pure-Go word scan:
// the scan runs over every value a float source reads, on the source's
// core, so it is part of the file source's cost per sample.
func anyNonFinite(x []float32) bool {
	if haveAVX2 {
		return anyNonFiniteAVX2(x)
	}
	return anyNonFiniteGeneric(x)
}

// anyNonFiniteAVX2 is anyNonFinite for CPUs with AVX2 (nonfinite_amd64.s).
//
//go:noescape
func anyNonFiniteAVX2(x []float32) bool
