package filter

import (
	"fmt"
	"math"
	"math/bits"
)

// fftPlan is a complex float32 FFT of one power-of-two size on split
// (separate real and imaginary) arrays, for fast convolution only.
//
// forward is an in-place decimation-in-frequency transform that leaves
// the spectrum in a scrambled (digit-reversed) order; inverse is its
// exact mirror, a decimation-in-time transform that takes that order
// back to natural order. Fast convolution only multiplies spectra point
// by point, so the order never matters and no reordering pass is needed.
// inverse is unscaled: forward then inverse multiplies by n.
//
// Stages are radix 4, after one radix-2 stage first when log2 n is odd,
// so every size from 16 up ends in the same two radix-4 stages on blocks
// of 16 points: the vector kernels run those two stages (and, in
// convolve, the spectrum product and the inverse's first two stages)
// in registers, 16 points at a time. Split arrays keep every butterfly
// free of shuffles, which suits both the Go compiler and the vector
// kernels.
type fftPlan struct {
	n int
	// kern runs the stages with q a multiple of 16, and the tail, on
	// the AVX-512 or AVX2 kernels; kernelGeneric keeps them all in Go.
	kern   kernelKind
	stages []fftStage // forward order: largest blocks first
}

// fftStage is one radix-4 (or radix-2) pass over blocks of 4q (2q)
// points. w holds, for j < q, the twiddles w^j, w^2j, w^3j with
// w = exp(-2πi/4q) (radix 2: w1 only, w = exp(-2πi/2q)), as real and
// imaginary parts in separate slices.
type fftStage struct {
	radix                        int
	q                            int
	w1r, w1i, w2r, w2i, w3r, w3i []float32
	// tv is the same twiddles for the vector kernels, in chunks of 16
	// j's: w1r, w1i, w2r, w2i, w3r, w3i (radix 2: w1r, w1i); nil when q
	// is not a multiple of 16.
	tv []float32
}

// newFFTPlan returns a plan for n points; n must be a power of two >= 2.
func newFFTPlan(n int) (*fftPlan, error) {
	if n < 2 || n&(n-1) != 0 {
		return nil, fmt.Errorf("filter: fft size %d is not a power of two >= 2", n)
	}
	p := &fftPlan{n: n, kern: fftKernel}
	m := n
	if bits.TrailingZeros(uint(n))%2 == 1 {
		p.stages = append(p.stages, newFFTStage(2, n/2))
		m = n / 2
	}
	for ; m >= 4; m /= 4 {
		p.stages = append(p.stages, newFFTStage(4, m/4))
	}
	return p, nil
}

// newFFTStage computes the twiddles of one stage.
func newFFTStage(radix, q int) fftStage {
	s := fftStage{radix: radix, q: q}
	ws := []*[]float32{&s.w1r, &s.w1i, &s.w2r, &s.w2i, &s.w3r, &s.w3i}[:2*(radix-1)]
	for _, w := range ws {
		*w = make([]float32, q)
	}
	for j := range q {
		for k := range radix - 1 {
			// float64 angles rounded once keep the transform's error
			// at a few float32 ulps per stage.
			sn, cs := math.Sincos(-2 * math.Pi * float64((k+1)*j) / float64(radix*q))
			(*ws[2*k])[j], (*ws[2*k+1])[j] = float32(cs), float32(sn)
		}
	}
	if q%16 == 0 {
		s.tv = make([]float32, 0, len(ws)*q)
		for j := 0; j < q; j += 16 {
			for _, w := range ws {
				s.tv = append(s.tv, (*w)[j:j+16]...)
			}
		}
	}
	return s
}

// tail reports whether the last two stages (q = 4 and q = 1) run as the
// fused 16-point vector kernels; body is the number of stages before
// them that run one by one.
func (p *fftPlan) tail() (fused bool, body int) {
	if p.kern != kernelGeneric && p.n >= 16 {
		return true, len(p.stages) - 2
	}
	return false, len(p.stages)
}

// forward transforms (re, im) in place into the scrambled order.
func (p *fftPlan) forward(re, im []float32) {
	re, im = re[:p.n], im[:p.n]
	fused, body := p.tail()
	p.forwardStages(re, im, 0, body)
	if fused {
		fftTailFwd(p.kern, re, im)
	}
}

// inverse undoes forward (times n): scrambled order in, natural order out.
func (p *fftPlan) inverse(re, im []float32) {
	re, im = re[:p.n], im[:p.n]
	fused, body := p.tail()
	if fused {
		fftTailInv(p.kern, re, im)
	}
	p.inverseStages(re, im, 0, body)
}

// convolve sets (re, im) to the inverse transform of forward(re, im)
// times the spectrum (hr, hi), which is in forward's order. With the
// fused tail the product happens in registers between the two tails.
// (Going depth first, finishing each cache-sized block before the next,
// measured no faster on Zen 4 up to 2^17 points, so the stages sweep
// the whole array in turn.)
func (p *fftPlan) convolve(re, im, hr, hi []float32) {
	re, im, hr, hi = re[:p.n], im[:p.n], hr[:p.n], hi[:p.n]
	fused, body := p.tail()
	p.forwardStages(re, im, 0, body)
	if fused {
		fftTailConv(p.kern, re, im, hr, hi)
	} else {
		cmulSplit(re, im, hr, hi)
	}
	p.inverseStages(re, im, 0, body)
}

// forwardStages runs forward stages [from, to) on (re, im), whose
// length is a multiple of those stages' block sizes.
func (p *fftPlan) forwardStages(re, im []float32, from, to int) {
	for i := from; i < to; i++ {
		s := &p.stages[i]
		vec := p.kern != kernelGeneric && s.tv != nil
		switch {
		case s.radix == 2 && vec:
			dif2Vec(p.kern, re, im, s.tv, s.q)
		case s.radix == 2:
			dif2(re, im, s)
		case s.q == 1:
			dif4unit(re, im)
		case vec:
			dif4Vec(p.kern, re, im, s.tv, s.q)
		default:
			dif4(re, im, s)
		}
	}
}

// inverseStages undoes forwardStages(re, im, from, to).
func (p *fftPlan) inverseStages(re, im []float32, from, to int) {
	for i := to - 1; i >= from; i-- {
		s := &p.stages[i]
		vec := p.kern != kernelGeneric && s.tv != nil
		switch {
		case s.radix == 2 && vec:
			dit2Vec(p.kern, re, im, s.tv, s.q)
		case s.radix == 2:
			dit2(re, im, s)
		case s.q == 1:
			dit4unit(re, im)
		case vec:
			dit4Vec(p.kern, re, im, s.tv, s.q)
		default:
			dit4(re, im, s)
		}
	}
}

// dif2 is one forward radix-2 pass: for each block of 2q points and
// j < q, a0 + a1 to j and (a0 - a1)·w^j to j+q.
func dif2(re, im []float32, s *fftStage) {
	q := s.q
	for b := 0; b+2*q <= len(re); b += 2 * q {
		r0, r1 := re[b:b+q], re[b+q:b+2*q]
		i0, i1 := im[b:b+q], im[b+q:b+2*q]
		wr, wi := s.w1r[:q], s.w1i[:q]
		for j := range r0 {
			a0r, a0i, a1r, a1i := r0[j], i0[j], r1[j], i1[j]
			r0[j], i0[j] = a0r+a1r, a0i+a1i
			ur, ui := a0r-a1r, a0i-a1i
			r1[j], i1[j] = ur*wr[j]-ui*wi[j], ur*wi[j]+ui*wr[j]
		}
	}
}

// dit2 inverts dif2 (times 2).
func dit2(re, im []float32, s *fftStage) {
	q := s.q
	for b := 0; b+2*q <= len(re); b += 2 * q {
		r0, r1 := re[b:b+q], re[b+q:b+2*q]
		i0, i1 := im[b:b+q], im[b+q:b+2*q]
		wr, wi := s.w1r[:q], s.w1i[:q]
		for j := range r0 {
			y0r, y0i := r0[j], i0[j]
			y1r, y1i := r1[j]*wr[j]+i1[j]*wi[j], i1[j]*wr[j]-r1[j]*wi[j]
			r0[j], i0[j] = y0r+y1r, y0i+y1i
			r1[j], i1[j] = y0r-y1r, y0i-y1i
		}
	}
}

// dif4unit is a forward radix-4 pass on blocks of 4 (all twiddles 1).
func dif4unit(re, im []float32) {
	for b := 0; b+3 < len(re); b += 4 {
		r := re[b : b+4 : b+4]
		i := im[b : b+4 : b+4]
		t0r, t0i := r[0]+r[2], i[0]+i[2]
		t1r, t1i := r[0]-r[2], i[0]-i[2]
		t2r, t2i := r[1]+r[3], i[1]+i[3]
		t3r, t3i := i[1]-i[3], r[3]-r[1] // -i·(a1-a3)
		r[0], i[0] = t0r+t2r, t0i+t2i
		r[1], i[1] = t0r-t2r, t0i-t2i
		r[2], i[2] = t1r+t3r, t1i+t3i
		r[3], i[3] = t1r-t3r, t1i-t3i
	}
}

// dit4unit inverts dif4unit (times 4).
func dit4unit(re, im []float32) {
	for b := 0; b+3 < len(re); b += 4 {
		r := re[b : b+4 : b+4]
		i := im[b : b+4 : b+4]
		t0r, t0i := r[0]+r[1], i[0]+i[1]
		t2r, t2i := r[0]-r[1], i[0]-i[1]
		t1r, t1i := r[2]+r[3], i[2]+i[3]
		t3r, t3i := r[2]-r[3], i[2]-i[3]
		r[0], i[0] = t0r+t1r, t0i+t1i
		r[2], i[2] = t0r-t1r, t0i-t1i
		r[1], i[1] = t2r-t3i, t2i+t3r // t2 + i·t3
		r[3], i[3] = t2r+t3i, t2i-t3r // t2 - i·t3
	}
}

// dif4 is one forward radix-4 pass: for each block of 4q points and
// j < q, with a_k the point j+kq,
//
//	y0 = (a0+a2) + (a1+a3)
//	y1 = ((a0+a2) - (a1+a3))·w^2j
//	y2 = ((a0-a2) - i(a1-a3))·w^j
//	y3 = ((a0-a2) + i(a1-a3))·w^3j
//
// stored at j, j+q, j+2q, j+3q. Sub-FFT k of the DFT lands in quarter
// k' (bit-swapped k), which only scrambles the order.
func dif4(re, im []float32, s *fftStage) {
	q := s.q
	for b := 0; b+4*q <= len(re); b += 4 * q {
		r0, r1, r2, r3 := re[b:b+q], re[b+q:b+2*q], re[b+2*q:b+3*q], re[b+3*q:b+4*q]
		i0, i1, i2, i3 := im[b:b+q], im[b+q:b+2*q], im[b+2*q:b+3*q], im[b+3*q:b+4*q]
		w1r, w1i, w2r, w2i, w3r, w3i := s.w1r[:q], s.w1i[:q], s.w2r[:q], s.w2i[:q], s.w3r[:q], s.w3i[:q]
		for j := range r0 {
			a0r, a0i, a1r, a1i := r0[j], i0[j], r1[j], i1[j]
			a2r, a2i, a3r, a3i := r2[j], i2[j], r3[j], i3[j]
			t0r, t0i := a0r+a2r, a0i+a2i
			t1r, t1i := a0r-a2r, a0i-a2i
			t2r, t2i := a1r+a3r, a1i+a3i
			t3r, t3i := a1i-a3i, a3r-a1r // -i·(a1-a3)
			r0[j], i0[j] = t0r+t2r, t0i+t2i
			ur, ui := t0r-t2r, t0i-t2i
			r1[j], i1[j] = ur*w2r[j]-ui*w2i[j], ur*w2i[j]+ui*w2r[j]
			ur, ui = t1r+t3r, t1i+t3i
			r2[j], i2[j] = ur*w1r[j]-ui*w1i[j], ur*w1i[j]+ui*w1r[j]
			ur, ui = t1r-t3r, t1i-t3i
			r3[j], i3[j] = ur*w3r[j]-ui*w3i[j], ur*w3i[j]+ui*w3r[j]
		}
	}
}

// dit4 inverts dif4 (times 4): multiply by the conjugate twiddles, then
// the inverse radix-4 butterfly.
func dit4(re, im []float32, s *fftStage) {
	q := s.q
	for b := 0; b+4*q <= len(re); b += 4 * q {
		r0, r1, r2, r3 := re[b:b+q], re[b+q:b+2*q], re[b+2*q:b+3*q], re[b+3*q:b+4*q]
		i0, i1, i2, i3 := im[b:b+q], im[b+q:b+2*q], im[b+2*q:b+3*q], im[b+3*q:b+4*q]
		w1r, w1i, w2r, w2i, w3r, w3i := s.w1r[:q], s.w1i[:q], s.w2r[:q], s.w2i[:q], s.w3r[:q], s.w3i[:q]
		for j := range r0 {
			y0r, y0i := r0[j], i0[j]
			// conj(w)·y
			y1r, y1i := r1[j]*w2r[j]+i1[j]*w2i[j], i1[j]*w2r[j]-r1[j]*w2i[j]
			y2r, y2i := r2[j]*w1r[j]+i2[j]*w1i[j], i2[j]*w1r[j]-r2[j]*w1i[j]
			y3r, y3i := r3[j]*w3r[j]+i3[j]*w3i[j], i3[j]*w3r[j]-r3[j]*w3i[j]
			t0r, t0i := y0r+y1r, y0i+y1i // 2(a0+a2)
			t2r, t2i := y0r-y1r, y0i-y1i // 2(a1+a3)
			t1r, t1i := y2r+y3r, y2i+y3i // 2(a0-a2)
			t3r, t3i := y2r-y3r, y2i-y3i // -2i(a1-a3)
			r0[j], i0[j] = t0r+t1r, t0i+t1i
			r2[j], i2[j] = t0r-t1r, t0i-t1i
			r1[j], i1[j] = t2r-t3i, t2i+t3r
			r3[j], i3[j] = t2r+t3i, t2i-t3r
		}
	}
}
