package filter

import (
	"fmt"
	"math"
)

// MaxBankChannels bounds a Channelizer's channels.
const MaxBankChannels = 4096

// Channelizer is a streaming polyphase filter bank: it splits one stream
// at rate fs into M channels at fs/D. Output channel k, sample n is
//
//	y_k[n] = Σ_i h[i] · x[nD − i] · exp(−j2π·k·(nD − i)/M)
//
// with x[n<0] = 0: the input shifted by −k·fs/M, filtered with the
// prototype h and kept at samples 0, D, 2D, …. Channel k is centred at
// k·fs/M, so k ≥ M/2 are the negative frequencies. No gain is applied
// to h.
//
// It computes the sum as a polyphase filter and an M-point inverse FFT:
// with P = ceil(len(h)/M) and h zero-padded to P·M,
//
//	y_k[n] = Σ_r u_r[n] · exp(+j2π·k·(r − s)/M),  u_r[n] = Σ_p h[pM+r] · x[nD − r − pM]
//
// where s = nD mod M. Each u is P·M products of the window of x ending
// at nD with h reversed (polySum), and the rotation by s is folded into
// the gather that puts u in the FFT's input order. An M that is not a
// power of two takes Bluestein's chirp z-transform: two FFTs of 2M or more.
//
// Outputs are frames of M complex values, interleaved (I, Q) channel by
// channel: ceil(n/D) frames after n inputs in total, whatever the split
// of the stream into blocks. Input is real or interleaved I/Q. Not safe
// for concurrent use.
type Channelizer struct {
	m, d, p int
	complex bool
	max     int
	hist    int        // P·M − 1 input samples of history
	rev     []float32  // h zero-padded to P·M and reversed
	re, im  []float32  // [history | block], split
	seen    int64      // input samples so far
	vr, vi  []float32  // one frame's polyphase sums
	ar, ai  []float32  // the FFT's input and output
	fft     *fftPlan   // M a power of two
	perm    []int32    // the FFT's scrambled input order: position → index
	blue    *bluestein // any other M
}

// NewChannelizer returns an M-channel bank decimating by d with
// prototype taps for blocks of at most maxBlock input samples (IQ pairs
// when complex). m must be in 2..MaxBankChannels and d must divide it.
// Process allocates nothing.
func NewChannelizer(taps []float32, m, d int, complex bool, maxBlock int) (*Channelizer, error) {
	if err := checkStreamArgs(taps, complex, maxBlock); err != nil {
		return nil, err
	}
	switch {
	case m < 2 || m > MaxBankChannels:
		return nil, fmt.Errorf("filter: %d channels: want 2..%d", m, MaxBankChannels)
	case d < 1 || m%d != 0:
		return nil, fmt.Errorf("filter: decimation %d must divide the %d channels", d, m)
	}
	p := (len(taps) + m - 1) / m
	c := &Channelizer{m: m, d: d, p: p, complex: complex, max: maxBlock,
		hist: p*m - 1, rev: BankTaps(taps, m),
		vr: make([]float32, m), vi: make([]float32, m), ar: make([]float32, m), ai: make([]float32, m)}
	c.re = make([]float32, c.hist+maxBlock)
	c.im = make([]float32, c.hist+maxBlock)
	if m&(m-1) == 0 {
		plan, err := newFFTPlan(m)
		if err != nil {
			return nil, err
		}
		c.fft, c.perm = plan, scrambledOrder(plan)
	} else {
		b, err := newBluestein(m)
		if err != nil {
			return nil, err
		}
		c.blue = b
	}
	return c, nil
}

// BankTaps returns the prototype taps of an m-channel bank as its
// polyphase sums read them: zero-padded to P·m taps (P = ceil(len/m)) and
// reversed, so that the branch j sum of a frame is Σ_q rev[q·m + j]·x[w +
// q·m + j] over its window w. The GPU's filter bank kernel reads the same.
func BankTaps(taps []float32, m int) []float32 {
	pm := (len(taps) + m - 1) / m * m
	rev := make([]float32, pm)
	for i, t := range taps {
		rev[pm-1-i] = t
	}
	return rev
}

// scrambledOrder returns, for each position of the plan's scrambled
// spectrum, the frequency index that forward leaves there: the transform
// of an impulse at 1 is exp(−j2πk/M) at k's position.
func scrambledOrder(p *fftPlan) []int32 {
	re, im := make([]float32, p.n), make([]float32, p.n)
	re[1] = 1
	p.forward(re, im)
	perm := make([]int32, p.n)
	for i := range perm {
		k := int(math.Round(-math.Atan2(float64(im[i]), float64(re[i])) * float64(p.n) / (2 * math.Pi)))
		perm[i] = int32((k%p.n + p.n) % p.n)
	}
	return perm
}

// MaxOut returns the most frames one call outputs for n input samples.
func (c *Channelizer) MaxOut(n int) int { return (n + c.d - 1) / c.d }

// Reset restarts the stream: zero history, the next input is sample 0.
func (c *Channelizer) Reset() {
	clear(c.re[:c.hist])
	clear(c.im[:c.hist])
	c.seen = 0
}

// Seek makes c continue a stream at input sample at, history being the
// input samples just before it, oldest first, in the stream's layout; a
// shorter history is padded with zeros before it (the stream's start).
func (c *Channelizer) Seek(history []float32, at int64) {
	ch := channelsOf(c.complex)
	n := min(len(history)/ch, c.hist)
	h := history[len(history)-n*ch:]
	clear(c.re[:c.hist-n])
	clear(c.im[:c.hist-n])
	if c.complex {
		deinterleave(c.re[c.hist-n:c.hist], c.im[c.hist-n:c.hist], h)
	} else {
		copy(c.re[c.hist-n:c.hist], h)
	}
	c.seen = at
}

// Process writes the frames for src's samples to dst, which must hold
// 2·M·MaxOut(samples) values, and returns the number of float32 values
// written.
func (c *Channelizer) Process(dst, src []float32) (int, error) {
	ch := channelsOf(c.complex)
	n := len(src) / ch
	d64 := int64(c.d)
	frames := int((c.seen+int64(n)+d64-1)/d64 - (c.seen+d64-1)/d64)
	switch {
	case len(src)%ch != 0:
		return 0, fmt.Errorf("%w: complex block has odd length %d (want interleaved I/Q pairs)", ErrBlockLength, len(src))
	case n > c.max:
		return 0, fmt.Errorf("%w: %d samples exceeds the channelizer's maximum %d", ErrBlockLength, n, c.max)
	case len(dst) < 2*c.m*frames:
		return 0, fmt.Errorf("%w: dst holds %d values, need %d (%d frames of %d channels)", ErrBlockLength, len(dst), 2*c.m*frames, frames, c.m)
	}
	if c.complex {
		deinterleave(c.re[c.hist:c.hist+n], c.im[c.hist:c.hist+n], src[:2*n])
	} else {
		copy(c.re[c.hist:c.hist+n], src[:n])
	}
	m, d, pm := c.m, int64(c.d), c.p*c.m
	// The first kept sample at or after seen: t = ceil(seen/D)·D.
	t := (c.seen + d - 1) / d * d
	out := 0
	for ; t < c.seen+int64(n); t += d {
		w := int(t - c.seen) // the window [w, w+P·M) ends at t
		polySum(c.vr, c.rev, c.re[w:w+pm], c.p)
		if c.complex {
			polySum(c.vi, c.rev, c.im[w:w+pm], c.p)
		} else {
			clear(c.vi)
		}
		c.bin(dst[out:out+2*m], int(t%int64(m)))
		out += 2 * m
	}
	copy(c.re, c.re[n:n+c.hist])
	if c.complex {
		copy(c.im, c.im[n:n+c.hist])
	}
	c.seen += int64(n)
	return out, nil
}

// bin writes one frame from the polyphase sums: y_k = Σ_r u_{(r+s) mod M}
// exp(+j2πkr/M), with u_r = v[M−1−r].
func (c *Channelizer) bin(dst []float32, s int) {
	m := c.m
	if c.blue != nil {
		for r := range m {
			j := m - 1 - (r+s)%m
			c.ar[r], c.ai[r] = c.vr[j], c.vi[j]
		}
		c.blue.transform(dst, c.ar, c.ai)
		return
	}
	mask := m - 1
	for i, k := range c.perm {
		j := m - 1 - (int(k)+s)&mask
		c.ar[i], c.ai[i] = c.vr[j], c.vi[j]
	}
	c.fft.inverse(c.ar, c.ai)
	interleave(dst, c.ar, c.ai)
}

// bluestein is the unscaled inverse DFT, y_k = Σ_r a_r·exp(+j2πkr/M),
// for an M that is not a power of two, as a convolution (Bluestein's
// chirp z-transform): with c_r = exp(+jπr²/M),
// y_k = c_k·Σ_r (a_r·c_r)·conj(c_{k−r}), a circular convolution of
// power-of-two length L ≥ 2M − 1 by the FFT.
type bluestein struct {
	m, l   int
	plan   *fftPlan
	cr, ci []float32 // c_r
	hr, hi []float32 // the spectrum of conj(c) wrapped to length L, over L, in forward's order
	re, im []float32 // work, L
}

func newBluestein(m int) (*bluestein, error) {
	l := 1
	for l < 2*m-1 {
		l *= 2
	}
	plan, err := newFFTPlan(l)
	if err != nil {
		return nil, err
	}
	b := &bluestein{m: m, l: l, plan: plan, cr: make([]float32, m), ci: make([]float32, m),
		hr: make([]float32, l), hi: make([]float32, l), re: make([]float32, l), im: make([]float32, l)}
	for r := range m {
		// r² mod 2M keeps the angle exact in float64 for any r.
		s, c := math.Sincos(math.Pi * float64(r*r%(2*m)) / float64(m))
		b.cr[r], b.ci[r] = float32(c), float32(s)
		b.hr[r], b.hi[r] = float32(c/float64(l)), float32(-s/float64(l))
		if r > 0 {
			b.hr[l-r], b.hi[l-r] = b.hr[r], b.hi[r]
		}
	}
	plan.forward(b.hr, b.hi)
	return b, nil
}

// transform writes y for (ar, ai), interleaved, to dst.
func (b *bluestein) transform(dst, ar, ai []float32) {
	for r := range b.m {
		b.re[r] = ar[r]*b.cr[r] - ai[r]*b.ci[r]
		b.im[r] = ar[r]*b.ci[r] + ai[r]*b.cr[r]
	}
	clear(b.re[b.m:])
	clear(b.im[b.m:])
	b.plan.convolve(b.re, b.im, b.hr, b.hi)
	for k := range b.m {
		dst[2*k] = b.re[k]*b.cr[k] - b.im[k]*b.ci[k]
		dst[2*k+1] = b.re[k]*b.ci[k] + b.im[k]*b.cr[k]
	}
}

// polySum sets v[j] = Σ_q h[q·M+j]·x[q·M+j] for j < M = len(v), over the
// p rows of h and x.
func polySum(v, h, x []float32, p int) {
	m := len(v)
	done := polySumVec(v, h, x, p)
	if done == m {
		return
	}
	for j := done; j < m; j++ {
		v[j] = 0
	}
	for q := range p {
		hq, xq := h[q*m+done:q*m+m], x[q*m+done:q*m+m]
		vq := v[done:m]
		for j := range vq {
			vq[j] += hq[j] * xq[j]
		}
	}
}

// HistoryLen is the input samples before a block that its frames read:
// P·M − 1.
func (c *Channelizer) HistoryLen() int { return c.hist }

// DefaultTapsPerChannel is the prototype length per channel that
// BankPrototype designs when none is given.
const DefaultTapsPerChannel = 16

// BankPrototype returns the default prototype of an m-channel bank:
// tapsPerChannel·m taps of a Kaiser-windowed sinc (β =
// DefaultKaiserBeta, about 80 dB) with its cutoff at the channel's edge,
// fs/(2m) (−6 dB there, so adjacent channels cross at half amplitude),
// and a DC gain of 1: a tone at a channel's centre keeps its amplitude.
// It depends on m alone, not on the rate.
func BankPrototype(m, tapsPerChannel int) ([]float32, error) {
	if m < 2 || m > MaxBankChannels {
		return nil, fmt.Errorf("filter: %d channels: want 2..%d", m, MaxBankChannels)
	}
	if tapsPerChannel < 1 || tapsPerChannel > MaxTaps/m {
		return nil, fmt.Errorf("filter: %d taps per channel × %d channels: want 1..%d taps", tapsPerChannel, m, MaxTaps)
	}
	return Design(BankSpec(m, tapsPerChannel))
}

// BankSpec is BankPrototype's design, at a rate of m S/s: the same taps
// come of it at any rate r with SampleRate r and CutoffHz r/(2m).
func BankSpec(m, tapsPerChannel int) Spec {
	return Spec{Type: Lowpass, SampleRate: float64(m), CutoffHz: 0.5, NumTaps: tapsPerChannel * m, Window: WindowKaiser}
}
