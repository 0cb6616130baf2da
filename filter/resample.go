package filter

import "fmt"

// Resampler is a streaming polyphase rational resampler by L/M:
// out[m] = Σ_k h[k]·u[m·M − k], where u is the input with L−1 zeros after
// each sample. That is scipy.signal.upfirdn(h, x, L, M) cut to
// ceil(n·L/M) outputs after n inputs — the outputs whose newest input has
// arrived — with no gain applied to the taps (taps designed for it carry
// a passband gain of L). Any split of a stream into blocks gives the same
// outputs. Not safe for concurrent use.
//
// Output m reads branch ph = m·M mod L of the taps, h[ph], h[ph+L], ...,
// against the inputs x[j0], x[j0−1], ... with j0 = floor(m·M/L). With
// g = gcd(L, M), outputs m ≡ c (mod L/g) share their branch, and their
// j0 step by M/g: each class c is a decimating FIR by M/g (polyphase),
// whose outputs are interleaved into place.
type Resampler struct {
	l, m    int
	lp      int // L/g: output classes
	mp      int // M/g: input step within a class
	complex bool
	max     int
	hist    int // history samples: longest branch − 1 plus the kernel's padding
	classes []resClass
	t       int64 // inputs consumed
	next    int64 // outputs produced
	buf     []float32
	tmp     []float32 // one class's outputs before they are interleaved
}

type resClass struct {
	q  int // branch length
	pp *strided
}

// NewResampler returns an up-by-l, down-by-m resampler with the given taps
// (at the upsampled rate) for blocks of at most maxBlock input samples.
// Process allocates nothing.
func NewResampler(taps []float32, l, m int, complex bool, maxBlock int) (*Resampler, error) {
	if err := checkStreamArgs(taps, complex, maxBlock); err != nil {
		return nil, err
	}
	if l < 1 || m < 1 {
		return nil, fmt.Errorf("filter: resampling factors up %d and down %d must be >= 1", l, m)
	}
	g := gcdInt(l, m)
	r := &Resampler{l: l, m: m, lp: l / g, mp: m / g, complex: complex, max: maxBlock}
	ch := channelsOf(complex)
	maxOut := r.MaxOut(maxBlock)
	perClass := (maxOut + r.lp - 1) / r.lp
	hist := 0
	for c := range r.lp {
		ph := c * m % l
		var branch []float32
		for k := ph; k < len(taps); k += l {
			branch = append(branch, taps[k])
		}
		pp := newStrided(bestKernel, ch, r.mp, reversed(branch), perClass)
		hist = max(hist, len(branch)-1+pp.pad)
		r.classes = append(r.classes, resClass{q: len(branch), pp: pp})
	}
	r.hist = hist
	r.buf = make([]float32, ch*(r.hist+maxBlock))
	r.tmp = make([]float32, ch*perClass)
	return r, nil
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// MaxOut returns the most samples one call outputs for n input samples:
// ceil(n·L/M).
func (r *Resampler) MaxOut(n int) int {
	q, rem := n/r.m, n%r.m
	return q*r.l + (rem*r.l+r.m-1)/r.m
}

// count is ceil(n·L/M) for a stream position.
func (r *Resampler) count(n int64) int64 {
	l, m := int64(r.l), int64(r.m)
	q, rem := n/m, n%m
	return q*l + (rem*l+m-1)/m
}

// Process resamples src into dst and returns the number of float32 values
// written (a whole number of samples, at most MaxOut(len(src)) samples).
// dst must not overlap src.
func (r *Resampler) Process(dst, src []float32) (int, error) {
	n, err := blockSamples(len(src), r.complex, r.max)
	if err != nil {
		return 0, err
	}
	ch := channelsOf(r.complex)
	end := r.count(r.t + int64(n))
	total := int(end - r.next)
	if len(dst) < ch*total {
		return 0, fmt.Errorf("%w: dst holds %d values, need %d", ErrBlockLength, len(dst), ch*total)
	}
	buf := r.buf[:ch*(r.hist+n)]
	copy(buf[ch*r.hist:], src)
	lp := int64(r.lp)
	for c := range r.lp {
		first := r.next + ((int64(c)-r.next)%lp+lp)%lp // first output of class c
		if first >= end {
			continue
		}
		cnt := int((end - first + lp - 1) / lp)
		cl := &r.classes[c]
		out := r.tmp[:ch*cnt]
		if cl.q == 0 {
			clear(out)
		} else {
			j0 := first * int64(r.m) / int64(r.l) // newest input of the first output
			a := r.hist + int(j0-r.t) - (cl.q - 1)
			cl.pp.run(out, buf, a)
		}
		pos := int(first - r.next)
		step := ch * r.lp
		if ch == 1 {
			for i, v := range out {
				dst[pos+i*step] = v
			}
		} else {
			for i := 0; i < cnt; i++ {
				d := 2*pos + i*step
				dst[d], dst[d+1] = out[2*i], out[2*i+1]
			}
		}
	}
	copy(buf, buf[ch*n:])
	r.t += int64(n)
	r.next = end
	return ch * total, nil
}

// Reset clears the history, as if no input had been seen.
func (r *Resampler) Reset() {
	clear(r.buf[:channelsOf(r.complex)*r.hist])
	r.t, r.next = 0, 0
}

// Complex reports whether the resampler takes interleaved I/Q input.
func (r *Resampler) Complex() bool { return r.complex }

// setKernel forces a kernel (tests).
func (r *Resampler) setKernel(k kernelKind) {
	for i := range r.classes {
		r.classes[i].pp.kern = k
	}
}
