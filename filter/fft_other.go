//go:build !amd64 || purego

package filter

// fftKernel is kernelGeneric: the FFT stages run in Go.
const fftKernel = kernelGeneric

const haveFFTVec = false

func cmulSplit(xr, xi, hr, hi []float32) { cmulGeneric(xr, xi, hr, hi) }
func deinterleave(re, im, src []float32) { deinterleaveGeneric(re, im, src) }
func interleave(dst, re, im []float32)   { interleaveGeneric(dst, re, im) }

// The vector kernels are never called in this build (plans use Go).

func dif4Vec(k kernelKind, re, im, tv []float32, q int) { panic(noVec) }
func dit4Vec(k kernelKind, re, im, tv []float32, q int) { panic(noVec) }
func dif2Vec(k kernelKind, re, im, tv []float32, q int) { panic(noVec) }
func dit2Vec(k kernelKind, re, im, tv []float32, q int) { panic(noVec) }
func fftTailFwd(k kernelKind, re, im []float32)         { panic(noVec) }
func fftTailInv(k kernelKind, re, im []float32)         { panic(noVec) }
func fftTailConv(k kernelKind, re, im, hr, hi []float32) {
	panic(noVec)
}

const noVec = "filter: no vector FFT in this build"
