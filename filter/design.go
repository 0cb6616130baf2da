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
		if !finite(s.KaiserBeta) || s.KaiserBeta < 0 {
			return specErr("kaiser beta %g must be a finite value >= 0", s.KaiserBeta)
		}
	default:
		return specErr("unknown window %q (want hamming, blackman, kaiser, hann or rectangular)", s.Window)
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
func Design(s Spec) ([]float32, error) {
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
