package filter

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/mjibson/go-dsp/fft"
)

// MaxErrRMS is the largest |got[i] − want[i]| relative to the RMS of
// want: the figure every check of a filter output against a reference uses
// (1e-5 is the project's float32 tolerance). A length mismatch or a NaN
// gives +Inf, so a broken output never passes a "<= tol" test; for an
// all-zero want it is the largest |got[i]|.
func MaxErrRMS(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var ss, worst float64
	for i, w := range want {
		ss += float64(w) * float64(w)
		d := math.Abs(float64(got[i]) - float64(w))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		worst = max(worst, d)
	}
	if ss == 0 {
		return worst
	}
	return worst / math.Sqrt(ss/float64(len(want)))
}

// Response summarises a filter's measured magnitude response.
type Response struct {
	// PassbandRippleDB is max-min of |H| in dB over the passband.
	PassbandRippleDB float64
	// StopbandAttenDB is the passband peak in dB minus the stopband peak
	// in dB (positive: the stopband is that far below the passband).
	StopbandAttenDB float64
}

// ErrNoTaps is returned when a filter has no taps.
var ErrNoTaps = errors.New("filter: no taps")

// Measure computes the passband ripple and stopband attenuation of taps
// against s, from an FFT of the zero-padded taps. A transition band
// transitionHz wide, centred on each band edge (edge ± transitionHz/2),
// belongs to neither band.
func Measure(taps []float32, s Spec, transitionHz float64) (Response, error) {
	if len(taps) == 0 {
		return Response{}, ErrNoTaps
	}
	if err := s.Validate(); err != nil {
		return Response{}, err
	}
	if !finite(transitionHz) || transitionHz < 0 {
		return Response{}, fmt.Errorf("filter: measure: transition width %g Hz must be a finite value >= 0", transitionHz)
	}
	if err := checkFinite(taps); err != nil {
		return Response{}, fmt.Errorf("measure: %w", err)
	}

	// At least 16 bins per tap so narrow lobes are resolved.
	nfft := 1
	for nfft < 16*len(taps) || nfft < 8192 {
		nfft <<= 1
	}
	buf := make([]float64, nfft)
	for i, v := range taps {
		buf[i] = float64(v)
	}
	spec := fft.FFTReal(buf)

	nyq := s.SampleRate / 2
	t := transitionHz / 2
	var pass, stop []band // in Hz
	switch s.Type {
	case Lowpass:
		pass = []band{{0, s.CutoffHz - t}}
		stop = []band{{s.CutoffHz + t, nyq}}
	case Highpass:
		stop = []band{{0, s.CutoffHz - t}}
		pass = []band{{s.CutoffHz + t, nyq}}
	case Bandpass:
		stop = []band{{0, s.LowHz - t}, {s.HighHz + t, nyq}}
		pass = []band{{s.LowHz + t, s.HighHz - t}}
	case Bandstop:
		pass = []band{{0, s.LowHz - t}, {s.HighHz + t, nyq}}
		stop = []band{{s.LowHz + t, s.HighHz - t}}
	}

	pMin, pMax, np := math.Inf(1), math.Inf(-1), 0
	sMax, ns := math.Inf(-1), 0
	for k := 0; k <= nfft/2; k++ {
		f := float64(k) * s.SampleRate / float64(nfft)
		db := 20 * math.Log10(cmplx.Abs(spec[k]))
		if in(f, pass) {
			pMin, pMax, np = math.Min(pMin, db), math.Max(pMax, db), np+1
		}
		if in(f, stop) {
			sMax, ns = math.Max(sMax, db), ns+1
		}
	}
	if np == 0 {
		return Response{}, fmt.Errorf("filter: measure: transition width %g Hz leaves no passband", transitionHz)
	}
	if ns == 0 {
		return Response{}, fmt.Errorf("filter: measure: transition width %g Hz leaves no stopband", transitionHz)
	}
	return Response{PassbandRippleDB: pMax - pMin, StopbandAttenDB: pMax - sMax}, nil
}

func in(f float64, bands []band) bool {
	for _, b := range bands {
		if b.lo <= b.hi && f >= b.lo && f <= b.hi {
			return true
		}
	}
	return false
}

// FrequencyResponse returns |H(f)| of taps at n evenly spaced frequencies
// from DC to Nyquist inclusive (only DC when n is 1; nil when n <= 0).
// It evaluates the DTFT directly, so the points are exact.
func FrequencyResponse(taps []float32, n int) []float64 {
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	for k := range out {
		var w float64
		if n > 1 {
			w = math.Pi * float64(k) / float64(n-1)
		}
		var re, im float64
		for i, v := range taps {
			sn, cs := math.Sincos(w * float64(i))
			re += float64(v) * cs
			im -= float64(v) * sn
		}
		out[k] = math.Hypot(re, im)
	}
	return out
}

// checkFinite reports the first NaN or infinite tap.
func checkFinite(taps []float32) error {
	for i, v := range taps {
		if !finite(float64(v)) {
			return fmt.Errorf("%w: tap %d is %v", ErrBadTap, i, v)
		}
	}
	return nil
}

// ErrBadTap is wrapped when a tap is NaN or infinite.
var ErrBadTap = errors.New("filter: tap is not a finite number")
