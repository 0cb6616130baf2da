//go:build !amd64 || purego

package mixer

type kernelKind int

const bestKernel kernelKind = 0

func mulIQ(_ kernelKind, dst, src, tab []float32, c [2]float32) { mulIQGeneric(dst, src, tab, c) }

func mulReal(_ kernelKind, dst, src, tab []float32, c [2]float32) { mulRealGeneric(dst, src, tab, c) }

func availableKernels() []kernelKind { return []kernelKind{0} }
