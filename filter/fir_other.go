//go:build !amd64 || purego

package filter

// bestKernel is the portable Go kernel on this platform or build.
const bestKernel = kernelGeneric

func runKernel(_ kernelKind, stride int, dst, buf, rev []float32) {
	firGeneric(dst, buf, rev, stride)
}

func availableKernels() []kernelKind { return []kernelKind{kernelGeneric} }

// decimVec is never called without the assembly kernels (the kernel is
// always generic here).
func decimVec(int, []float32, []float32, []float32, int) { panic("filter: no vector kernel") }
