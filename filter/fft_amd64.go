//go:build amd64 && !purego

package filter

import "math"

// fftKernel is the kernel the FFT stages run on: AVX-512 or AVX2 (with
// FMA) as the FIR's best kernel, else Go. Plans copy it, so tests can
// force each in turn.
var fftKernel = bestKernel

// haveFFTVec reports whether vector FFT kernels (fft_amd64.s) run here.
var haveFFTVec = fftKernel != kernelGeneric

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

//go:noescape
func dif4AVX2(re, im, tv []float32, q int)

//go:noescape
func dit4AVX2(re, im, tv []float32, q int)

//go:noescape
func dif2AVX2(re, im, tv []float32, q int)

//go:noescape
func dit2AVX2(re, im, tv []float32, q int)

//go:noescape
func tailFwdAVX2(re, im, c []float32)

//go:noescape
func tailInvAVX2(re, im, c []float32)

//go:noescape
func tailConvAVX2(re, im, hr, hi, c []float32)

//go:noescape
func deinterleaveAVX2(re, im, src []float32)

//go:noescape
func interleaveAVX2(dst, re, im []float32)

// deinterleave sets re[i], im[i] = src[2i], src[2i+1] for i < len(re).
func deinterleave(re, im, src []float32) {
	n := 0
	if fftKernel != kernelGeneric {
		n = len(re) &^ 7
		deinterleaveAVX2(re[:n], im[:n], src[:2*n])
	}
	deinterleaveGeneric(re[n:], im[n:len(re)], src[2*n:2*len(re)])
}

// interleave sets dst[2i], dst[2i+1] = re[i], im[i] for i < len(re).
func interleave(dst, re, im []float32) {
	n := 0
	if fftKernel != kernelGeneric {
		n = len(re) &^ 7
		interleaveAVX2(dst[:2*n], re[:n], im[:n])
	}
	interleaveGeneric(dst[2*n:2*len(re)], re[n:], im[n:len(re)])
}

// dif4Vec runs dif4 on kernel k (AVX-512 or AVX2); q must be a
// multiple of 16 and tv the stage's vector twiddles.
func dif4Vec(k kernelKind, re, im, tv []float32, q int) {
	if k == kernelAVX512 {
		dif4AVX512(re, im, tv, q)
	} else {
		dif4AVX2(re, im, tv, q)
	}
}

// dit4Vec runs dit4 on kernel k.
func dit4Vec(k kernelKind, re, im, tv []float32, q int) {
	if k == kernelAVX512 {
		dit4AVX512(re, im, tv, q)
	} else {
		dit4AVX2(re, im, tv, q)
	}
}

// dif2Vec runs dif2 on kernel k.
func dif2Vec(k kernelKind, re, im, tv []float32, q int) {
	if k == kernelAVX512 {
		dif2AVX512(re, im, tv, q)
	} else {
		dif2AVX2(re, im, tv, q)
	}
}

// dit2Vec runs dit2 on kernel k.
func dit2Vec(k kernelKind, re, im, tv []float32, q int) {
	if k == kernelAVX512 {
		dit2AVX512(re, im, tv, q)
	} else {
		dit2AVX2(re, im, tv, q)
	}
}

// fftTailFwd runs the last two forward stages (q = 4, then q = 1) on
// every 16-point block of (re, im), exactly as dif4 and dif4unit would.
func fftTailFwd(k kernelKind, re, im []float32) {
	if k == kernelAVX512 {
		tailFwdAVX512(re, im[:len(re)], tailConst[:])
	} else {
		tailFwdAVX2(re, im[:len(re)], tailConst2[:])
	}
}

// fftTailInv undoes fftTailFwd (times 16), as dit4unit then dit4.
func fftTailInv(k kernelKind, re, im []float32) {
	if k == kernelAVX512 {
		tailInvAVX512(re, im[:len(re)], tailConst[:])
	} else {
		tailInvAVX2(re, im[:len(re)], tailConst2[:])
	}
}

// fftTailConv is fftTailFwd, x *= h, fftTailInv, block by block in
// registers.
func fftTailConv(k kernelKind, re, im, hr, hi []float32) {
	n := len(re)
	if k == kernelAVX512 {
		tailConvAVX512(re, im[:n], hr[:n], hi[:n], tailConst[:])
	} else {
		tailConvAVX2(re, im[:n], hr[:n], hi[:n], tailConst2[:])
	}
}

// tailConst is the AVX-512 tail kernels' constant table, six vectors of
// 16: the signs of the two butterfly steps of the q = 4 stage (across
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

// tailConst2 is the same for the AVX2 tail, which holds a block in two
// registers per part (points 0-7, 8-15), so the q = 4 stage's first
// step needs no signs: seven vectors of 8, the signs of the q = 4
// stage's second step, the q = 1 stage's two, and the twiddles' real
// and imaginary parts for points 0-7, then for 8-15.
var tailConst2 = func() (c [56]float32) {
	copy(c[0:], tailConst[16:24])
	copy(c[8:], tailConst[32:40])
	copy(c[16:], tailConst[48:56])
	copy(c[24:], tailConst[64:72])
	copy(c[32:], tailConst[80:88])
	copy(c[40:], tailConst[72:80])
	copy(c[48:], tailConst[88:96])
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
	if fftKernel == kernelAVX512 {
		n = len(xr) &^ 15
		if n > 0 {
			cmulAVX512(xr[:n], xi[:n], hr[:n], hi[:n])
		}
	}
	cmulGeneric(xr[n:], xi[n:len(xr)], hr[n:len(xr)], hi[n:len(xr)])
}
