package control

import (
	"errors"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Spectrum is a power spectral density estimate.
type Spectrum struct {
	// FreqHz are the bin frequencies at the point's rate: 0..fs/2 for a
	// real stream, −fs/2..fs/2 (centred on 0, ascending) for a complex one.
	FreqHz []float64 `json:"freq_hz"`
	// DB is 10·log10 of the density in units²/Hz (one-sided for real
	// streams: the power of both halves is in the positive bins).
	DB []float64 `json:"db"`
	// Segments is how many windowed segments were averaged.
	Segments int `json:"segments"`
	// NFFT is the segment length.
	NFFT int `json:"nfft"`
	// NonFinite counts the NaN and infinite values among the samples
	// given: they are taken as 0 (one would make every bin NaN, which JSON
	// cannot carry, and the page showed nothing), and the page says so.
	NonFinite int `json:"nonfinite,omitempty"`
}

// errFewSamples means there is not yet enough signal for one segment.
var errFewSamples = errors.New("control: not enough samples yet")

// minNFFT is the shortest segment Welch uses when few samples are there.
const minNFFT = 16

// Welch estimates the PSD of x (interleaved I/Q when complex) at rate
// with Hann-windowed segments of nfft samples overlapping by half, as
// scipy.signal.welch(x, fs, window="hann", nperseg=nfft,
// return_onesided=not complex, scaling="density", detrend=False). When x
// holds fewer than nfft samples, nfft is halved until one segment fits
// (not below minNFFT).
func Welch(x []float32, cplx bool, rate float64, nfft int) (Spectrum, error) {
	ch := 1
	if cplx {
		ch = 2
	}
	n := len(x) / ch
	for nfft > n && nfft > minNFFT {
		nfft /= 2
	}
	if n < nfft || nfft < minNFFT {
		return Spectrum{}, errFewSamples
	}
	w := make([]float64, nfft)
	var wss float64
	for i := range w {
		// scipy's "hann" for welch is periodic (sym=False).
		w[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(nfft))
		wss += w[i] * w[i]
	}
	// NaN or ±Inf samples (from the input, or spread by a filter) are
	// counted and taken as 0.
	bad := 0
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			bad++
		}
	}
	if bad > 0 {
		y := make([]float32, len(x))
		for i, v := range x {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				y[i] = v
			}
		}
		x = y
	}
	fft := fourier.NewCmplxFFT(nfft)
	seq := make([]complex128, nfft)
	coef := make([]complex128, nfft)
	acc := make([]float64, nfft)
	step := nfft / 2
	segs := 0
	// The most recent samples count: segments are laid back from the end.
	for end := n; end-nfft >= 0; end -= step {
		start := end - nfft
		for i := range seq {
			j := start + i
			if cplx {
				seq[i] = complex(float64(x[2*j])*w[i], float64(x[2*j+1])*w[i])
			} else {
				seq[i] = complex(float64(x[j])*w[i], 0)
			}
		}
		fft.Coefficients(coef, seq)
		for i, c := range coef {
			a := cmplx.Abs(c)
			acc[i] += a * a
		}
		segs++
	}
	scale := 1 / (rate * wss * float64(segs))
	var s Spectrum
	s.Segments, s.NFFT, s.NonFinite = segs, nfft, bad
	if cplx {
		s.FreqHz = make([]float64, nfft)
		s.DB = make([]float64, nfft)
		for k := range nfft {
			i := (k + nfft/2) % nfft // bin of the k-th ascending frequency
			f := float64(i) * rate / float64(nfft)
			if i >= (nfft+1)/2 {
				f -= rate
			}
			s.FreqHz[k], s.DB[k] = f, db(acc[i]*scale)
		}
		return s, nil
	}
	half := nfft/2 + 1
	s.FreqHz = make([]float64, half)
	s.DB = make([]float64, half)
	for i := range half {
		p := acc[i] * scale
		if i != 0 && !(nfft%2 == 0 && i == nfft/2) {
			p *= 2
		}
		s.FreqHz[i], s.DB[i] = float64(i)*rate/float64(nfft), db(p)
	}
	return s, nil
}

// db is 10·log10(p), floored at −300 so JSON never sees −Inf.
func db(p float64) float64 {
	if p < 1e-30 {
		return -300
	}
	return 10 * math.Log10(p)
}

// Peak returns the frequency of s's highest bin.
func (s Spectrum) Peak() float64 {
	best := 0
	for i, v := range s.DB {
		if v > s.DB[best] {
			best = i
		}
	}
	if len(s.FreqHz) == 0 {
		return math.NaN()
	}
	return s.FreqHz[best]
}
