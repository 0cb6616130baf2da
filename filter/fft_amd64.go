//go:build amd64 && !purego

package filter

import "math"

// haveFFTVec reports whether the AVX-512 FFT kernels (fft_amd64.s) run
// here; they follow the FIR's kernel choice, so AVX2-only machines keep
// the Go passes.
var haveFFTVec = bestKernel == kernelAVX512

//go:noescape
func dif4AVX512(re, im, tv []float32, q int)

//go:noescape
func dit4AVX512(re, im, tv []float32, q int)

//go:noescape
func dif2AVX512(re, im, tv []float32, q int)

//go:noescape
func dit2AVX512(re, im, tv []float32, q int)

//go:noescape
func cmulAVX512(xr, xi, hr, hi []float32)

//go:noescape
func tailFwdAVX512(re, im, c []float32)

//go:noescape
func tailInvAVX512(re, im, c []float32)

//go:noescape
func tailConvAVX512(re, im, hr, hi, c []float32)

func dif4Vec(re, im, tv []float32, q int) { dif4AVX512(re, im, tv, q) }
func dit4Vec(re, im, tv []float32, q int) { dit4AVX512(re, im, tv, q) }
func dif2Vec(re, im, tv []float32, q int) { dif2AVX512(re, im, tv, q) }
func dit2Vec(re, im, tv []float32, q int) { dit2AVX512(re, im, tv, q) }

// fftTailFwd runs the last two forward stages (q = 4, then q = 1) on
// every 16-point block of (re, im), exactly as dif4 and dif4unit would.
func fftTailFwd(re, im []float32) { tailFwdAVX512(re, im[:len(re)], tailConst[:]) }

// fftTailInv undoes fftTailFwd (times 16), as dit4unit then dit4.
func fftTailInv(re, im []float32) { tailInvAVX512(re, im[:len(re)], tailConst[:]) }

// fftTailConv is fftTailFwd, x *= h, fftTailInv, block by block in
// registers.
func fftTailConv(re, im, hr, hi []float32) {
	n := len(re)
	tailConvAVX512(re, im[:n], hr[:n], hi[:n], tailConst[:])
}

// tailConst is the tail kernels' constant table, six vectors of 16:
// the signs of the two butterfly steps of the q = 4 stage (across
// 128-bit lanes), the same for the q = 1 stage (within lanes), and the
// q = 4 stage's twiddles (real, imaginary) in lane order 1, w^2j, w^j,
// w^3j with w = exp(-2πi/16). Written once at start-up, read only.
var tailConst = func() (c [96]float32) {
	for e := range 16 {
		lane, j := e/4, e%4
		c[e] = sign(lane < 2)       // a0+a2, a1+a3 | a0-a2, a1-a3
		c[16+e] = sign(lane%2 == 0) // t0+t2 | t0-t2 | t1+t3 | t1-t3
		c[32+e] = sign(j < 2)
		c[48+e] = sign(j%2 == 0)
		k := [4]int{0, 2, 1, 3}[lane] * j
		sn, cs := math.Sincos(-2 * math.Pi * float64(k) / 16)
		c[64+e], c[80+e] = float32(cs), float32(sn)
	}
	return c
}()

func sign(plus bool) float32 {
	if plus {
		return 1
	}
	return -1
}

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
