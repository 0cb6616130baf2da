// Package mixer shifts a sample stream in frequency: y[n] = x[n]·exp(j·φ[n])
// with φ[n] = 2π·f·n/fs, n counted from the stream's first sample.
//
// The phase never accumulates: every chunk of tableLen samples starts from
// the phase of its absolute index, computed in float64 with the product
// n·f/fs split exactly by an FMA, and the samples inside a chunk take their
// rotation from a table built once. So the error at sample 10⁹ is the error
// at sample 0 (about 1e-7 of the signal, float32 rounding), where a float32
// phase accumulator would be radians off.
package mixer

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// tableLen is the number of samples one chunk rotates from the table; a
// chunk's start phase costs one Sincos, so this keeps it off the profile.
const tableLen = 1024

// ErrBlockLength is wrapped when dst or src have the wrong length.
var ErrBlockLength = errors.New("mixer: bad block length")

// Shifter is a streaming frequency shifter. It is not safe for concurrent
// use.
type Shifter struct {
	cps     float64 // cycles per sample: f/fs
	num     uint64  // when den > 0: f/fs = num/den exactly, num in [0, den)
	den     uint64
	complex bool  // input is interleaved I/Q
	n       int64 // index of the next input sample
	// base and off continue an earlier frequency's phase (Resume): the
	// phase at sample n is off + (n−base)·f/fs cycles. Both 0 otherwise.
	base int64
	off  float64
	tab  []float32 // cos, sin of 2π·cps·i for i < tableLen, interleaved
	kern kernelKind
}

// New returns a shifter by freqHz for a stream at rate S/s; complex says
// whether the input is interleaved I/Q (the output always is). |freqHz|
// must be at most rate/2.
func New(freqHz, rate float64, complex bool) (*Shifter, error) {
	cps, num, den, err := Ratio(freqHz, rate)
	if err != nil {
		return nil, err
	}
	s := &Shifter{cps: cps, num: num, den: den, complex: complex, tab: make([]float32, 2*tableLen), kern: bestKernel}
	s.fillTable()
	return s, nil
}

// tableStep splits a table index i = tableStep·a + b for fillTable.
const tableStep = 32

// fillTable fills s.tab with the rotation of samples 0..tableLen-1 as the
// product, in float64, of the rotations of tableStep·a and of b: 64 Sincos
// in place of 1024 (a retune of a shift builds a Shifter per core on the
// caller's goroutine: 1024 took ~20 µs each), within 1e-15 of a Sincos per
// sample, far below the float32 the table holds.
func (s *Shifter) fillTable() {
	var ca, sa [tableLen / tableStep]float64
	var cb, sb [tableStep]float64
	for k := range ca {
		sa[k], ca[k] = math.Sincos(2 * math.Pi * s.frac(int64(tableStep*k)))
	}
	for k := range cb {
		sb[k], cb[k] = math.Sincos(2 * math.Pi * s.frac(int64(k)))
	}
	for a := range tableLen / tableStep {
		for b := range tableStep {
			i := tableStep*a + b
			s.tab[2*i] = float32(ca[a]*cb[b] - sa[a]*sb[b])
			s.tab[2*i+1] = float32(sa[a]*cb[b] + ca[a]*sb[b])
		}
	}
}

// frac returns n·f/fs modulo 1 in [0, 1). For whole f and fs it is
// (n·num mod den)/den, exact. Otherwise the product n·cps is split into
// its rounded value and its exact error (FMA), so the fraction is right to
// float64 rounding of cps for any n below 2^53 (1e-16·n cycles: 1e-7
// cycles at n = 10⁹).
func (s *Shifter) frac(n int64) float64 {
	if s.den > 0 {
		hi, lo := bits.Mul64(uint64(n)%s.den, s.num) // < den², so hi < den
		_, rem := bits.Div64(hi, lo, s.den)
		return float64(rem) / float64(s.den)
	}
	x := float64(n)
	hi := x * s.cps
	lo := math.FMA(x, s.cps, -hi)
	f := (hi - math.Floor(hi)) + lo
	return f - math.Floor(f)
}

// Ratio returns a shift by freqHz at rate S/s in cycles per sample, f/fs,
// and where it is exact (whole hertz at a whole rate, the usual case) as
// num/den with num in [0, den); den is 0 otherwise. A Shifter works out
// its phase from them (frac), and so does a GPU kernel that works out the
// phase itself (the zero-copy chain). |freqHz| must be at most rate/2.
func Ratio(freqHz, rate float64) (cps float64, num, den uint64, err error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return 0, 0, 0, fmt.Errorf("mixer: sample rate %g must be > 0", rate)
	}
	if math.IsNaN(freqHz) || math.Abs(freqHz) > rate/2 {
		return 0, 0, 0, fmt.Errorf("mixer: shift %g Hz is above Nyquist (%g Hz)", freqHz, rate/2)
	}
	if freqHz == math.Trunc(freqHz) && rate == math.Trunc(rate) && rate < 1<<53 {
		// The phase index n·f mod fs is exact integer arithmetic, for any n.
		f, r := int64(freqHz), int64(rate)
		g := gcd(abs(f), r)
		den = uint64(r / g)
		num = uint64(((f/g)%int64(den) + int64(den)) % int64(den))
	}
	return freqHz / rate, num, den, nil
}

// Phase returns φ[n] in radians, reduced to [0, 2π): the rotation the
// shifter applies to input sample n.
func (s *Shifter) Phase(n int64) float64 { return 2 * math.Pi * s.cycles(n) }

// cycles returns φ[n]/2π in [0, 1), counted from the Resume point.
func (s *Shifter) cycles(n int64) float64 {
	if s.base == 0 && s.off == 0 {
		return s.frac(n)
	}
	c := s.off + s.frac(n-s.base)
	return c - math.Floor(c)
}

// Resume makes the shifter continue a stream at sample n whose phase there
// is phase radians: the next input is sample n, and φ[m] = phase +
// 2π·f·(m−n)/fs from then on. A frequency change with continuous phase is
// a new Shifter resumed at the old one's Pos and Phase(Pos()).
func (s *Shifter) Resume(n int64, phase float64) {
	c := phase / (2 * math.Pi)
	s.n, s.base, s.off = n, n, c-math.Floor(c)
}

// Process shifts src into dst and returns the number of float32 values
// written: 2 per input sample. dst must hold them; for a complex input dst
// may be src. It allocates nothing.
func (s *Shifter) Process(dst, src []float32) (int, error) {
	n := len(src)
	if s.complex {
		if n%2 != 0 {
			return 0, fmt.Errorf("%w: complex block has odd length %d", ErrBlockLength, n)
		}
		n /= 2
	}
	if len(dst) < 2*n {
		return 0, fmt.Errorf("%w: dst holds %d values, need %d", ErrBlockLength, len(dst), 2*n)
	}
	if !s.complex && n > 0 && &dst[0] == &src[0] {
		return 0, fmt.Errorf("%w: a real input cannot be shifted in place", ErrBlockLength)
	}
	for i := 0; i < n; {
		k := min(n-i, tableLen)
		sn, cs := math.Sincos(2 * math.Pi * s.cycles(s.n))
		c := [2]float32{float32(cs), float32(sn)}
		if s.complex {
			mulIQ(s.kern, dst[2*i:2*(i+k)], src[2*i:2*(i+k)], s.tab[:2*k], c)
		} else {
			mulReal(s.kern, dst[2*i:2*(i+k)], src[i:i+k], s.tab[:2*k], c)
		}
		s.n += int64(k)
		i += k
	}
	return 2 * n, nil
}

// Reset restarts the stream: the next sample is sample 0 again.
func (s *Shifter) Reset() { s.n, s.base, s.off = 0, 0, 0 }

// Pos returns the index of the next input sample.
func (s *Shifter) Pos() int64 { return s.n }

// mulIQGeneric sets dst[i] = src[i]·tab[i]·c for interleaved complex
// values.
func mulIQGeneric(dst, src, tab []float32, c [2]float32) {
	src = src[:len(dst)]
	tab = tab[:len(dst)]
	cr, ci := c[0], c[1]
	for i := 0; i+1 < len(dst); i += 2 {
		tr := tab[i]*cr - tab[i+1]*ci
		ti := tab[i]*ci + tab[i+1]*cr
		xr, xi := src[i], src[i+1]
		dst[i] = xr*tr - xi*ti
		dst[i+1] = xr*ti + xi*tr
	}
}

// mulRealGeneric sets dst[2i], dst[2i+1] = src[i]·tab[i]·c.
func mulRealGeneric(dst, src, tab []float32, c [2]float32) {
	tab = tab[:len(dst)]
	src = src[:len(dst)/2]
	cr, ci := c[0], c[1]
	for i, x := range src {
		tr := tab[2*i]*cr - tab[2*i+1]*ci
		ti := tab[2*i]*ci + tab[2*i+1]*cr
		dst[2*i] = x * tr
		dst[2*i+1] = x * ti
	}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, 1)
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// Seek makes s, a shifter of the same frequency and rate as o, continue
// o's stream at sample n, with o's phase (Resume's included): the
// rotation of every sample from n on is the one o would apply. s may be
// o. It lets segments of one block be shifted at once by several
// shifters, bit-identical to one shifter, when each segment starts a
// multiple of ChunkLen samples after the block's start.
func (s *Shifter) Seek(o *Shifter, n int64) { s.n, s.base, s.off = n, o.base, o.off }

// ChunkLen is the samples a shifter rotates from one start phase: a
// segment that starts a multiple of it after the block's start is rotated
// by the same operations as in one call on the whole block.
const ChunkLen = tableLen
