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
type fastConv struct {
	plan   *fftPlan
	ntaps  int
	seg    int       // outputs per segment: n - ntaps + 1
	hr, hi []float32 // taps spectrum, scrambled order, scaled by 1/n
	re, im []float32 // work arrays of n points
}

// maxFFTLog2 caps the transform at 2^21 points (16 MiB of work arrays),
// enough for MaxTaps.
const maxFFTLog2 = 21

func newFastConv(taps []float32, n int) (*fastConv, error) {
	if n < len(taps) {
		return nil, fmt.Errorf("filter: fft size %d too small for %d taps", n, len(taps))
	}
	p, err := newFFTPlan(n)
	if err != nil {
		return nil, err
	}
	c := &fastConv{
		plan:  p,
		ntaps: len(taps),
		seg:   n - len(taps) + 1,
		hr:    make([]float32, n),
		hi:    make([]float32, n),
		re:    make([]float32, n),
		im:    make([]float32, n),
	}
	// The spectrum comes from the same float32 transform as the data so
	// both share its scrambled order; 1/n folds in the inverse's scale.
	copy(c.hr, taps)
	p.forward(c.hr, c.hi)
	scale := 1 / float32(n)
	for i := range c.hr {
		c.hr[i] *= scale
		c.hi[i] *= scale
	}
	return c, nil
}

// filterReal writes len(dst) outputs from buf, the stream's real values
// with ntaps-1 of history first: len(buf) = len(dst)+ntaps-1.
func (c *fastConv) filterReal(dst, buf []float32) {
	hist := c.ntaps - 1
	for pos := 0; pos < len(dst); pos += 2 * c.seg {
		n0 := min(c.seg, len(dst)-pos)
		n1 := min(c.seg, len(dst)-pos-n0)
		fill(c.re, buf[pos:pos+n0+hist])
		if n1 > 0 {
			fill(c.im, buf[pos+n0:pos+n0+n1+hist])
		} else {
			clear(c.im)
		}
		c.convolve()
		copy(dst[pos:pos+n0], c.re[hist:])
		copy(dst[pos+n0:pos+n0+n1], c.im[hist:])
	}
}

// filterIQ is filterReal for interleaved I/Q: dst and buf hold pairs.
func (c *fastConv) filterIQ(dst, buf []float32) {
	hist := c.ntaps - 1
	for pos := 0; pos < len(dst)/2; pos += c.seg {
		k := min(c.seg, len(dst)/2-pos)
		src := buf[2*pos : 2*(pos+k+hist)]
		re, im := c.re[:len(src)/2], c.im[:len(src)/2]
		for i := range re {
			re[i], im[i] = src[2*i], src[2*i+1]
		}
		clear(c.re[len(re):])
		clear(c.im[len(im):])
		c.convolve()
		out := dst[2*pos : 2*(pos+k)]
		re, im = c.re[hist:hist+k], c.im[hist:hist+k]
		for i := range re {
			out[2*i], out[2*i+1] = re[i], im[i]
		}
	}
}

// convolve runs forward, multiply by the spectrum, inverse on re, im.
func (c *fastConv) convolve() {
	c.plan.convolve(c.re, c.im, c.hr, c.hi)
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
