//go:build amd64 && !purego

package filter

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/asmgen -out fir_amd64.s

// bestKernel is computed once at start-up and never written again; NewFIR
// copies it into each FIR so tests can pick a kernel per filter.
var bestKernel = detectKernel()

func detectKernel() kernelKind {
	ks := availableKernels()
	return ks[len(ks)-1]
}

// availableKernels lists the kernels this CPU can run, best last.
func availableKernels() []kernelKind {
	ks := []kernelKind{kernelGeneric}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, kernelAVX2)
		// x/sys/cpu also checks that the OS saves the ZMM state. The
		// AVX-512 kernel hands short blocks to the AVX2 one.
		if cpu.X86.HasAVX512F {
			ks = append(ks, kernelAVX512)
		}
	}
	return ks
}

// The assembly kernels (generated into fir_amd64.s) set
// dst[i] = Σ_j rev[j]·buf[i+s·j] for every i < len(dst), with s = 1 for
// real data and s = 2 for interleaved I/Q (the IQ variants). They need
// len(rev) >= 1, len(buf) >= len(dst)+s·(len(rev)-1) and len(dst) of at
// least one vector: 8 floats (AVX2) or 16 (AVX-512).

//go:noescape
func firAVX2(dst, buf, rev []float32)

//go:noescape
func firAVX2IQ(dst, buf, rev []float32)

//go:noescape
func firAVX512(dst, buf, rev []float32)

//go:noescape
func firAVX512IQ(dst, buf, rev []float32)

// runKernel computes dst from buf with kernel k at the given stride,
// using a narrower kernel where the block is too short for a wide one.
func runKernel(k kernelKind, stride int, dst, buf, rev []float32) {
	n := len(dst)
	if n == 0 || len(rev) == 0 || len(buf) < n+stride*(len(rev)-1) {
		firGeneric(dst, buf, rev, stride) // panics on a short buf like any bad slice
		return
	}
	// Widest pass first: the AVX-512 kernel's wide pass needs 128 floats,
	// AVX2's 64; below that each does one vector per pass, which is
	// latency-bound, so wider vectors win again.
	avx512, avx2 := k == kernelAVX512, k >= kernelAVX2
	iq := stride == 2
	switch {
	case avx512 && n >= 128, avx512 && n >= 16 && n < 64:
		if iq {
			firAVX512IQ(dst, buf, rev)
		} else {
			firAVX512(dst, buf, rev)
		}
	case avx2 && n >= 8:
		if iq {
			firAVX2IQ(dst, buf, rev)
		} else {
			firAVX2(dst, buf, rev)
		}
	default:
		firGeneric(dst, buf, rev, stride)
	}
}

//go:noescape
func decimAVX2(dst, buf, taps []float32, stride int)

//go:noescape
func decimIQAVX2(dst, buf, taps []float32, stride int)

// decimVec runs the AVX2 strided kernel: dst holds a multiple of 8
// outputs, taps a multiple of 8 floats, buf every window.
func decimVec(ch int, dst, buf, taps []float32, stride int) {
	if n := len(dst) / ch; n == 0 || len(taps) == 0 || len(buf) < (n-1)*stride+len(taps) {
		panic("filter: decimVec: short buffer")
	}
	if ch == 2 {
		decimIQAVX2(dst, buf, taps, stride)
	} else {
		decimAVX2(dst, buf, taps, stride)
	}
}
