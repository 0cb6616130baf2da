package filter

import (
	"errors"
	"fmt"
	"math"

	"github.com/mjibson/go-dsp/window"
)

// Filter types accepted in Spec.Type.
const (
	Lowpass  = "lowpass"
	Highpass = "highpass"
	Bandpass = "bandpass"
	Bandstop = "bandstop"
)

// Window names accepted in Spec.Window.
const (
	WindowHamming     = "hamming"
	WindowBlackman    = "blackman"
	WindowKaiser      = "kaiser"
	WindowHann        = "hann"
	WindowRectangular = "rectangular"
)

// DefaultKaiserBeta is used when Spec.KaiserBeta is 0 (about 80 dB of
// stopband attenuation).
const DefaultKaiserBeta = 8.6

// MaxTaps bounds NumTaps and the number of taps ParseTaps accepts, so a
// typo cannot ask for gigabytes.
const MaxTaps = 1 << 20

// ErrSpec is wrapped by every error Spec.Validate returns.
var ErrSpec = errors.New("filter: invalid spec")

// Spec describes a windowed-sinc FIR filter to design.
type Spec struct {
	Type          string  // "lowpass" | "highpass" | "bandpass" | "bandstop"
	SampleRate    float64 // Hz, > 0
	CutoffHz      float64 // lowpass/highpass cutoff
	LowHz, HighHz float64 // bandpass/bandstop edges
	NumTaps       int     // > 0; highpass/bandstop need an odd count
	Window        string  // "hamming" | "blackman" | "kaiser" | "hann" | "rectangular"; "" = hamming
	KaiserBeta    float64 // kaiser only; 0 = DefaultKaiserBeta

	// TransitionHz and AttenuationDB, given together, design by
	// specification: a Kaiser window whose length and beta follow from
	// them as scipy.signal.kaiserord picks them (see Resolve). The
	// transition band is centred on each band edge. NumTaps and
	// KaiserBeta must then be zero and Window "" or kaiser.
	TransitionHz  float64
	AttenuationDB float64
}

// BySpec reports whether s designs by transition width and attenuation.
func (s Spec) BySpec() bool { return s.TransitionHz != 0 || s.AttenuationDB != 0 }

// MaxKaiserBeta bounds a Kaiser window's beta: I0(beta) overflows a
// float64 past about 713, and beta 700 is already a window of some 6000
// dB, far past what float32 taps hold. MaxAttenuationDB is the
// attenuation whose Kaiser beta (0.1102·(A − 8.7)) stays under it.
const (
	MaxKaiserBeta    = 700
	MaxAttenuationDB = 6000
)

// KaiserOrder returns the length and beta of a Kaiser-window FIR with
// attenuationDB of stopband attenuation and a transition widthHz wide at
// sampleRate, exactly as scipy.signal.kaiserord(attenuationDB,
// widthHz/(sampleRate/2)) does (Kaiser's empirical formulas).
func KaiserOrder(attenuationDB, widthHz, sampleRate float64) (numTaps int, beta float64, err error) {
	a := math.Abs(attenuationDB)
	if !finite(a) || a < 8 {
		return 0, 0, specErr("attenuation %g dB is too small for the Kaiser formula (want >= 8 dB)", attenuationDB)
	}
	if a > MaxAttenuationDB {
		return 0, 0, specErr("attenuation %g dB is over %d dB (float32 taps hold about 150)", attenuationDB, MaxAttenuationDB)
	}
	width := widthHz / (sampleRate / 2)
	if !finite(width) || width <= 0 {
		return 0, 0, specErr("transition width %g Hz must be > 0", widthHz)
	}
	switch {
	case a > 50:
		beta = 0.1102 * (a - 8.7)
	case a > 21:
		beta = 0.5842*math.Pow(a-21, 0.4) + 0.07886*(a-21)
	}
	n := math.Ceil((a-7.95)/2.285/(math.Pi*width) + 1)
	if n > MaxTaps {
		return 0, 0, specErr("%g dB over a %g Hz transition needs %g taps, more than the limit %d", a, widthHz, n, MaxTaps)
	}
	return int(n), beta, nil
}

// Resolve returns s with NumTaps, Window and KaiserBeta filled in from
// TransitionHz and AttenuationDB (which it clears) when s designs by
// specification; highpass and bandstop lengths are made odd by adding one
// tap. Any other spec is returned as it is.
func (s Spec) Resolve() (Spec, error) {
	if !s.BySpec() {
		return s, nil
	}
	if err := s.Validate(); err != nil {
		return s, err
	}
	n, beta, err := KaiserOrder(s.AttenuationDB, s.TransitionHz, s.SampleRate)
	if err != nil {
		return s, err
	}
	if (s.Type == Highpass || s.Type == Bandstop) && n%2 == 0 {
		n++
	}
	s.NumTaps, s.Window, s.KaiserBeta, s.TransitionHz, s.AttenuationDB = n, WindowKaiser, beta, 0, 0
	return s, nil
}

// NominalTransitionHz is the width of the transition band s's window gives
// its length: the usual main-lobe figures (rectangular 0.9, hann 3.1,
// hamming 3.3, blackman 5.5 times rate/taps) and, for kaiser, Kaiser's
// formula for its beta (the inverse of KaiserOrder). For a spec by
// specification it is TransitionHz.
func (s Spec) NominalTransitionHz() float64 {
	if s.BySpec() {
		return s.TransitionHz
	}
	n := float64(max(s.NumTaps, 1))
	switch s.windowName() {
	case WindowRectangular:
		return 0.9 * s.SampleRate / n
	case WindowHann:
		return 3.1 * s.SampleRate / n
	case WindowBlackman:
		return 5.5 * s.SampleRate / n
	case WindowKaiser:
		beta := s.KaiserBeta
		if beta == 0 {
			beta = DefaultKaiserBeta
		}
		a := kaiserAtten(beta)
		return (a - 7.95) / (2.285 * math.Pi * math.Max(n-1, 1)) * s.SampleRate / 2
	}
	return 3.3 * s.SampleRate / n
}

// kaiserAtten inverts Kaiser's beta formula: the attenuation in dB that
// KaiserOrder would give beta for (21 dB for beta 0).
func kaiserAtten(beta float64) float64 {
	if beta > 0.1102*(50-8.7) {
		return beta/0.1102 + 8.7
	}
	lo, hi := 21.0, 50.0
	for range 60 {
		mid := (lo + hi) / 2
		if 0.5842*math.Pow(mid-21, 0.4)+0.07886*(mid-21) < beta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func specErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSpec}, args...)...)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate reports the first bad field of s, wrapping ErrSpec.
func (s Spec) Validate() error {
	if !finite(s.SampleRate) || s.SampleRate <= 0 {
		return specErr("sample rate %g Hz must be a finite value > 0", s.SampleRate)
	}
	nyq := s.SampleRate / 2
	switch s.Type {
	case Lowpass, Highpass:
		if !finite(s.CutoffHz) || s.CutoffHz <= 0 || s.CutoffHz >= nyq {
			return specErr("%s cutoff %g Hz must be > 0 and < Nyquist (%g Hz)", s.Type, s.CutoffHz, nyq)
		}
	case Bandpass, Bandstop:
		if !finite(s.LowHz) || s.LowHz <= 0 {
			return specErr("%s low edge %g Hz must be > 0", s.Type, s.LowHz)
		}
		if !finite(s.HighHz) || s.HighHz >= nyq {
			return specErr("%s high edge %g Hz must be < Nyquist (%g Hz)", s.Type, s.HighHz, nyq)
		}
		if s.LowHz >= s.HighHz {
			return specErr("%s low edge %g Hz must be below high edge %g Hz", s.Type, s.LowHz, s.HighHz)
		}
	case "":
		return specErr("filter type is empty (want lowpass, highpass, bandpass or bandstop)")
	default:
		return specErr("unknown filter type %q (want lowpass, highpass, bandpass or bandstop)", s.Type)
	}
	if s.BySpec() {
		return s.validateBySpec(nyq)
	}
	if s.NumTaps <= 0 {
		return specErr("number of taps %d must be > 0", s.NumTaps)
	}
	if s.NumTaps > MaxTaps {
		return specErr("number of taps %d exceeds the limit %d", s.NumTaps, MaxTaps)
	}
	if (s.Type == Highpass || s.Type == Bandstop) && s.NumTaps%2 == 0 {
		// An even-length symmetric FIR always has a zero at Nyquist.
		return specErr("%s needs an odd number of taps, got %d (an even-length linear-phase filter has zero gain at Nyquist)", s.Type, s.NumTaps)
	}
	switch s.Window {
	case "", WindowHamming, WindowBlackman, WindowHann, WindowRectangular:
		if s.KaiserBeta != 0 {
			return specErr("kaiser beta %g set but window is %q", s.KaiserBeta, s.windowName())
		}
	case WindowKaiser:
		if !finite(s.KaiserBeta) || s.KaiserBeta < 0 || s.KaiserBeta > MaxKaiserBeta {
			return specErr("kaiser beta %g must be in 0..%d", s.KaiserBeta, MaxKaiserBeta)
		}
	default:
		return specErr("unknown window %q (want hamming, blackman, kaiser, hann or rectangular)", s.Window)
	}
	return nil
}

// validateBySpec checks a design by transition width and attenuation:
// every band keeps some width outside the transition bands.
func (s Spec) validateBySpec(nyq float64) error {
	t, a := s.TransitionHz, s.AttenuationDB
	switch {
	case !finite(t) || t <= 0:
		return specErr("transition width %g Hz must be > 0", t)
	case !finite(a) || a < 8 || a > MaxAttenuationDB:
		return specErr("attenuation %g dB must be in 8..%d (the Kaiser formula's range)", a, MaxAttenuationDB)
	case s.NumTaps != 0:
		return specErr("number of taps %d given with a transition width and attenuation (they set the length)", s.NumTaps)
	case s.KaiserBeta != 0:
		return specErr("kaiser beta %g given with a transition width and attenuation (they set beta)", s.KaiserBeta)
	case s.Window != "" && s.Window != WindowKaiser:
		return specErr("window %q given with a transition width and attenuation (the design uses kaiser)", s.Window)
	}
	lo, hi := s.CutoffHz, s.CutoffHz
	if s.Type == Bandpass || s.Type == Bandstop {
		lo, hi = s.LowHz, s.HighHz
		if hi-lo <= t {
			return specErr("%s band %g-%g Hz is not wider than the %g Hz transition", s.Type, lo, hi, t)
		}
	}
	if lo-t/2 <= 0 || hi+t/2 >= nyq {
		return specErr("the %g Hz transition band around %g-%g Hz must lie inside 0..%g Hz (Nyquist)", t, lo, hi, nyq)
	}
	return nil
}

func (s Spec) windowName() string {
	if s.Window == "" {
		return WindowHamming
	}
	return s.Window
}

// band is a passband in cycles/sample scaled so that Nyquist is 1.
type band struct{ lo, hi float64 }

// bands returns the ideal passbands of s (Nyquist = 1).
func (s Spec) bands() []band {
	nyq := s.SampleRate / 2
	switch s.Type {
	case Lowpass:
		return []band{{0, s.CutoffHz / nyq}}
	case Highpass:
		return []band{{s.CutoffHz / nyq, 1}}
	case Bandpass:
		return []band{{s.LowHz / nyq, s.HighHz / nyq}}
	default: // Bandstop
		return []band{{0, s.LowHz / nyq}, {s.HighHz / nyq, 1}}
	}
}

// Design returns the taps of the windowed-sinc filter s describes. The
// taps are scaled for unit gain at DC (lowpass, bandstop), at Nyquist
// (highpass) or at the band centre (bandpass).
//
// A spec by specification (TransitionHz, AttenuationDB) is resolved to
// its Kaiser length and beta first (see Resolve).
func Design(s Spec) ([]float32, error) {
	s, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := s.NumTaps
	win, err := s.window(n)
	if err != nil {
		return nil, err
	}
	bands := s.bands()
	mid := float64(n-1) / 2
	h := make([]float64, n)
	for i := range h {
		m := float64(i) - mid
		var v float64
		for _, b := range bands {
			v += b.hi*sinc(b.hi*m) - b.lo*sinc(b.lo*m)
		}
		h[i] = v * win[i]
	}

	// Scale frequency in cycles/sample (Nyquist = 0.5).
	var f float64
	switch first := bands[0]; {
	case first.lo == 0:
		f = 0
	case first.hi == 1:
		f = 0.5
	default:
		f = (first.lo + first.hi) / 4
	}
	var re, im float64
	for i, v := range h {
		sn, cs := math.Sincos(2 * math.Pi * f * (float64(i) - mid))
		re += v * cs
		im += v * sn
	}
	g := math.Hypot(re, im)
	if g == 0 || !finite(g) {
		return nil, specErr("designed filter has gain %g at %g Hz; cannot normalise", g, f*s.SampleRate)
	}
	out := make([]float32, n)
	for i, v := range h {
		out[i] = float32(v / g)
	}
	return out, nil
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	px := math.Pi * x
	return math.Sin(px) / px
}

func (s Spec) window(n int) ([]float64, error) {
	switch s.windowName() {
	case WindowHamming:
		return window.Hamming(n), nil
	case WindowBlackman:
		return window.Blackman(n), nil
	case WindowHann:
		return window.Hann(n), nil
	case WindowRectangular:
		return window.Rectangular(n), nil
	case WindowKaiser:
		beta := s.KaiserBeta
		if beta == 0 {
			beta = DefaultKaiserBeta
		}
		return kaiser(n, beta), nil
	}
	return nil, specErr("unknown window %q", s.Window)
}

// kaiser returns an n-point symmetric Kaiser window (go-dsp has none).
func kaiser(n int, beta float64) []float64 {
	w := make([]float64, n)
	if n == 1 {
		w[0] = 1
		return w
	}
	den := besselI0(beta)
	for i := range w {
		r := 2*float64(i)/float64(n-1) - 1
		w[i] = besselI0(beta*math.Sqrt(math.Max(0, 1-r*r))) / den
	}
	return w
}

// besselI0 is the modified Bessel function of the first kind, order 0,
// from its power series Σ ((x/2)^k / k!)^2, which converges for all x.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}
