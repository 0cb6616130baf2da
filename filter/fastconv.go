package filter

import "fmt"

// fastConv is the overlap-save engine behind FIR's fft method. For a
// segment of up to seg outputs it transforms the seg+ntaps-1 inputs that
// feed them (history included, zero-padded to n points), multiplies by
// the taps' spectrum and transforms back; output i of the segment is
// point ntaps-1+i of the circular result, which no wrap-around reaches.
//
// Real streams fill both halves of the complex transform: two segments
// go in as the real and imaginary parts, and because the taps are real
// the two filtered segments come back the same way. Interleaved I/Q
// streams are complex already and take one segment per transform.
//
// It keeps several transform sizes: a block is covered by the size that
// is cheapest per output (pickSize), and what is left at its end, when
// shorter than that size's segments, by a smaller one, so a 65536-sample
// block with 8193 taps costs one 32768-point and one 16384-point
// transform rather than two 32768-point ones.
type fastConv struct {
	ntaps  int
	sizes  []convSize // ascending
	cost   []float64  // estimated ns of one transform pair of sizes[i], for pickSize
	segs   []int      // sizes[i].seg, for pickSize
	re, im []float32  // work arrays, as long as the largest size
}

// convSize is one transform size of a fastConv.
type convSize struct {
	plan   *fftPlan
	seg    int       // outputs per segment: n - ntaps + 1
	hr, hi []float32 // taps spectrum, scrambled order, scaled by 1/n
}

// maxFFTLog2 caps the transform at 2^21 points (16 MiB of work arrays),
// enough for MaxTaps.
const maxFFTLog2 = 21

// newFastConv builds the transform sizes 2^lo … 2^hi for taps.
func newFastConv(taps []float32, lo, hi int) (*fastConv, error) {
	if 1<<lo < len(taps) || hi < lo || hi > maxFFTLog2 {
		return nil, fmt.Errorf("filter: fft sizes 2^%d…2^%d do not fit %d taps", lo, hi, len(taps))
	}
	c := &fastConv{
		ntaps: len(taps),
		re:    make([]float32, 1<<hi),
		im:    make([]float32, 1<<hi),
	}
	for k := lo; k <= hi; k++ {
		n := 1 << k
		p, err := newFFTPlan(n)
		if err != nil {
			return nil, err
		}
		s := convSize{plan: p, seg: n - len(taps) + 1, hr: make([]float32, n), hi: make([]float32, n)}
		// The spectrum comes from the same float32 transform as the data so
		// both share its scrambled order; 1/n folds in the inverse's scale.
		copy(s.hr, taps)
		p.forward(s.hr, s.hi)
		scale := 1 / float32(n)
		for i := range s.hr {
			s.hr[i] *= scale
			s.hi[i] *= scale
		}
		c.sizes = append(c.sizes, s)
		c.cost = append(c.cost, convPairNs(k, p.kern))
		c.segs = append(c.segs, s.seg)
	}
	return c, nil
}

// input is a stream's values as the transforms read them: the history,
// then the block where it lies, so that the block is not copied behind
// the history first.
type input struct{ head, block []float32 }

// span returns values [lo, hi) when they lie in one of the two parts, and
// ok false when they straddle both.
func (in input) span(lo, hi int) (v []float32, ok bool) {
	switch h := len(in.head); {
	case hi <= h:
		return in.head[lo:hi], true
	case lo >= h:
		return in.block[lo-h : hi-h], true
	}
	return nil, false
}

// fill copies values [lo, hi) to the front of dst and zeroes the rest.
func (in input) fill(dst []float32, lo, hi int) {
	if v, ok := in.span(lo, hi); ok {
		fill(dst, v)
		return
	}
	k := copy(dst, in.head[lo:])
	fill(dst[k:], in.block[:hi-len(in.head)])
}

// deinterleave is deinterleave of values [lo, hi) (I/Q pairs).
func (in input) deinterleave(re, im []float32, lo, hi int) {
	if v, ok := in.span(lo, hi); ok {
		deinterleave(re[:len(v)/2], im[:len(v)/2], v)
		return
	}
	a := in.head[lo:]
	deinterleave(re[:len(a)/2], im[:len(a)/2], a)
	b := in.block[:hi-len(in.head)]
	deinterleave(re[len(a)/2:len(a)/2+len(b)/2], im[len(a)/2:len(a)/2+len(b)/2], b)
}

// filterReal writes len(dst) outputs from in, the stream's real values
// with ntaps-1 of history first: ntaps-1+len(dst) of them.
func (c *fastConv) filterReal(dst []float32, in input) {
	hist := c.ntaps - 1
	for pos := 0; pos < len(dst); {
		s := &c.sizes[pickSize(c.cost, c.segs, len(dst)-pos, 2)]
		n0 := min(s.seg, len(dst)-pos)
		n1 := min(s.seg, len(dst)-pos-n0)
		re, im := c.re[:s.plan.n], c.im[:s.plan.n]
		in.fill(re, pos, pos+n0+hist)
		if n1 > 0 {
			in.fill(im, pos+n0, pos+n0+n1+hist)
		} else {
			clear(im)
		}
		s.plan.convolve(re, im, s.hr, s.hi)
		copy(dst[pos:pos+n0], re[hist:])
		copy(dst[pos+n0:pos+n0+n1], im[hist:])
		pos += n0 + n1
	}
}

// filterIQ is filterReal for interleaved I/Q: dst and in hold pairs.
func (c *fastConv) filterIQ(dst []float32, in input) {
	hist := c.ntaps - 1
	for pos := 0; pos < len(dst)/2; {
		s := &c.sizes[pickSize(c.cost, c.segs, len(dst)/2-pos, 1)]
		k := min(s.seg, len(dst)/2-pos)
		in.deinterleave(c.re, c.im, 2*pos, 2*(pos+k+hist))
		clear(c.re[k+hist : s.plan.n])
		clear(c.im[k+hist : s.plan.n])
		s.plan.convolve(c.re, c.im, s.hr, s.hi)
		interleave(dst[2*pos:2*(pos+k)], c.re[hist:hist+k], c.im[hist:hist+k])
		pos += k
	}
}

// fill copies src to the front of dst and zeroes the rest.
func fill(dst, src []float32) {
	copy(dst, src)
	clear(dst[len(src):])
}

// cmulGeneric sets x[i] *= h[i] for split complex arrays x = (xr, xi)
// and h = (hr, hi) of equal length.
func cmulGeneric(xr, xi, hr, hi []float32) {
	xi, hr, hi = xi[:len(xr)], hr[:len(xr)], hi[:len(xr)]
	for i, a := range xr {
		b, c, d := xi[i], hr[i], hi[i]
		xr[i], xi[i] = a*c-b*d, a*d+b*c
	}
}

// deinterleaveGeneric sets re[i], im[i] = src[2i], src[2i+1].
func deinterleaveGeneric(re, im, src []float32) {
	im, src = im[:len(re)], src[:2*len(re)]
	for i := range re {
		re[i], im[i] = src[2*i], src[2*i+1]
	}
}

// interleaveGeneric sets dst[2i], dst[2i+1] = re[i], im[i].
func interleaveGeneric(dst, re, im []float32) {
	im, dst = im[:len(re)], dst[:2*len(re)]
	for i := range re {
		dst[2*i], dst[2*i+1] = re[i], im[i]
	}
}
