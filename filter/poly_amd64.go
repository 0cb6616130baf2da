//go:build amd64 && !purego

package filter

// polySumAVX2 sets v[j] = Σ_{q<p} h[q·m+j]·x[q·m+j] for j < len(v), a
// multiple of 8; p >= 1 and h, x hold p rows of m.
//
//go:noescape
func polySumAVX2(v, h, x []float32, m, p int)

// polySumVec runs polySum's vector part on the AVX2 kernel, where the
// CPU has one, and returns how many of v's entries it set.
func polySumVec(v, h, x []float32, p int) int {
	m := len(v)
	n := m &^ 7
	if bestKernel == kernelGeneric || n == 0 || p < 1 {
		return 0
	}
	_, _ = h[p*m-1], x[p*m-1] // the kernel reads p rows of both
	polySumAVX2(v[:n], h, x, m, p)
	return n
}
