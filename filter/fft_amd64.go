//go:build amd64 && !purego

package filter

// haveFFTVec reports whether the AVX-512 FFT passes (fft_amd64.s) run
// here; they follow the FIR's kernel choice, so AVX2-only machines keep
// the Go passes.
var haveFFTVec = bestKernel == kernelAVX512

//go:noescape
func dif4AVX512(re, im, tv []float32, q int)

//go:noescape
func dit4AVX512(re, im, tv []float32, q int)

//go:noescape
func cmulAVX512(xr, xi, hr, hi []float32)

func dif4Vec(re, im, tv []float32, q int) { dif4AVX512(re, im, tv, q) }
func dit4Vec(re, im, tv []float32, q int) { dit4AVX512(re, im, tv, q) }

// cmulSplit sets x[i] *= h[i] (split complex), 16 at a time on AVX-512.
func cmulSplit(xr, xi, hr, hi []float32) {
	n := 0
	if haveFFTVec {
		n = len(xr) &^ 15
		if n > 0 {
			cmulAVX512(xr[:n], xi[:n], hr[:n], hi[:n])
		}
	}
	cmulGeneric(xr[n:], xi[n:len(xr)], hr[n:len(xr)], hi[n:len(xr)])
}
