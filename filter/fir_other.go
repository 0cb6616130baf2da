//go:build !amd64 || purego

package filter

// bestKernel is the portable Go kernel on this platform or build.
const bestKernel = kernelGeneric

func runKernel(_ kernelKind, stride int, dst, buf, rev []float32) {
	firGeneric(dst, buf, rev, stride)
}

func availableKernels() []kernelKind { return []kernelKind{kernelGeneric} }
