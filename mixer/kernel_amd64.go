//go:build amd64 && !purego

package mixer

import (
	"math"

	"golang.org/x/sys/cpu"
)

// kernelKind selects the rotation loop: 0 portable Go, 1 AVX2 + FMA.
type kernelKind int

const (
	kernelGeneric kernelKind = iota
	kernelAVX2
)

// bestKernel is fixed at start-up; New copies it into each Shifter so
// tests can force every kernel.
var bestKernel = availableKernels()[len(availableKernels())-1]

// availableKernels lists the kernels this CPU runs, best last.
func availableKernels() []kernelKind {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return []kernelKind{kernelGeneric, kernelAVX2}
	}
	return []kernelKind{kernelGeneric}
}

// The assembly (mixer_amd64.s) handles whole vectors of four complex
// outputs; c is (re, im) packed in one word, low half first.

//go:noescape
func mulIQAVX2(dst, src, tab []float32, c uint64)

//go:noescape
func mulRealAVX2(dst, src, tab []float32, c uint64)

func pack(c [2]float32) uint64 {
	return uint64(math.Float32bits(c[0])) | uint64(math.Float32bits(c[1]))<<32
}

func mulIQ(k kernelKind, dst, src, tab []float32, c [2]float32) {
	v := 0
	if k == kernelAVX2 {
		v = len(dst) &^ 7
		src, tab = src[:len(dst)], tab[:len(dst)] // bounds for the assembly
		mulIQAVX2(dst[:v], src[:v], tab[:v], pack(c))
	}
	mulIQGeneric(dst[v:], src[v:], tab[v:], c)
}

func mulReal(k kernelKind, dst, src, tab []float32, c [2]float32) {
	v := 0
	if k == kernelAVX2 {
		v = len(dst) &^ 7
		src, tab = src[:len(dst)/2], tab[:len(dst)]
		mulRealAVX2(dst[:v], src[:v/2], tab[:v], pack(c))
	}
	mulRealGeneric(dst[v:], src[v/2:], tab[v:], c)
}
