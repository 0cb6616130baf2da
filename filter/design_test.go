package filter

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const fs = 48000.0

func db(v float64) float64 { return 20 * math.Log10(v) }

// gainAt is |H| in dB at hz, straight from the DTFT.
func gainAt(taps []float32, hz float64) float64 {
	var re, im float64
	w := 2 * math.Pi * hz / fs
	for i, v := range taps {
		re += float64(v) * math.Cos(w*float64(i))
		im -= float64(v) * math.Sin(w*float64(i))
	}
	return db(math.Hypot(re, im))
}

func TestDesignMeetsSpec(t *testing.T) {
	tests := []struct {
		name       string
		spec       Spec
		transition float64 // Hz, centred on each edge
		minAtten   float64 // dB
		maxRipple  float64 // dB
		pass, stop []float64
	}{
		{"lowpass hamming", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129}, 2000, 50, 0.1,
			[]float64{0, 3000, 4500}, []float64{8000, 12000, 23999}},
		{"lowpass blackman", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129, Window: WindowBlackman}, 3000, 70, 0.01,
			[]float64{0, 3000}, []float64{8000, 20000}},
		{"lowpass kaiser default beta", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129, Window: WindowKaiser}, 3000, 80, 0.01,
			[]float64{0, 3000}, []float64{8000, 20000}},
		{"lowpass kaiser beta 5", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129, Window: WindowKaiser, KaiserBeta: 5}, 2000, 50, 0.1,
			[]float64{0, 3000}, []float64{8000, 20000}},
		{"lowpass hann", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129, Window: WindowHann}, 2000, 44, 0.1,
			[]float64{0, 3000}, []float64{8000, 20000}},
		{"lowpass rectangular", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129, Window: WindowRectangular}, 2000, 20, 1,
			[]float64{0, 3000}, nil},
		{"lowpass even taps", Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 128}, 2000, 50, 0.1,
			[]float64{0, 3000}, []float64{8000, 20000}},
		{"highpass hamming", Spec{Type: Highpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129}, 2000, 50, 0.1,
			[]float64{10000, 15000, 24000}, []float64{0, 2000, 4500}},
		{"bandpass hamming", Spec{Type: Bandpass, SampleRate: fs, LowHz: 6000, HighHz: 12000, NumTaps: 129}, 2000, 50, 0.1,
			[]float64{7500, 9000, 10500}, []float64{0, 3000, 15000, 20000}},
		{"bandstop blackman", Spec{Type: Bandstop, SampleRate: fs, LowHz: 6000, HighHz: 12000, NumTaps: 129, Window: WindowBlackman}, 3000, 70, 0.01,
			[]float64{0, 3000, 16000, 24000}, []float64{8000, 9000, 10000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			taps, err := Design(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(taps) != tc.spec.NumTaps {
				t.Fatalf("len(taps) = %d, want %d", len(taps), tc.spec.NumTaps)
			}
			for i := range taps { // linear phase: symmetric taps
				if taps[i] != taps[len(taps)-1-i] {
					t.Fatalf("taps not symmetric at %d: %g vs %g", i, taps[i], taps[len(taps)-1-i])
				}
			}
			r, err := Measure(taps, tc.spec, tc.transition)
			if err != nil {
				t.Fatal(err)
			}
			if r.StopbandAttenDB < tc.minAtten {
				t.Errorf("stopband attenuation %.1f dB, want >= %.1f", r.StopbandAttenDB, tc.minAtten)
			}
			if r.PassbandRippleDB > tc.maxRipple {
				t.Errorf("passband ripple %.4f dB, want <= %.4f", r.PassbandRippleDB, tc.maxRipple)
			}
			for _, hz := range tc.pass {
				if g := gainAt(taps, hz); math.Abs(g) > tc.maxRipple {
					t.Errorf("gain at %g Hz = %.4f dB, want 0 ± %g", hz, g, tc.maxRipple)
				}
			}
			for _, hz := range tc.stop {
				if g := gainAt(taps, hz); g > -tc.minAtten {
					t.Errorf("gain at %g Hz = %.1f dB, want <= %.1f", hz, g, -tc.minAtten)
				}
			}
		})
	}
}

func TestDesignNormalisation(t *testing.T) {
	// Unit gain at the documented frequency, exactly (to float32 rounding).
	tests := []struct {
		spec Spec
		hz   float64
	}{
		{Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 1000, NumTaps: 31}, 0},
		{Spec{Type: Highpass, SampleRate: fs, CutoffHz: 20000, NumTaps: 31}, fs / 2},
		{Spec{Type: Bandpass, SampleRate: fs, LowHz: 1000, HighHz: 3000, NumTaps: 63}, 2000},
		{Spec{Type: Bandstop, SampleRate: fs, LowHz: 1000, HighHz: 3000, NumTaps: 63}, 0},
		{Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 1000, NumTaps: 1}, 0},
	}
	for _, tc := range tests {
		taps, err := Design(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if g := gainAt(taps, tc.hz); math.Abs(g) > 1e-5 {
			t.Errorf("%s: gain at %g Hz = %g dB, want 0", tc.spec.Type, tc.hz, g)
		}
	}
}

func TestKaiserWindow(t *testing.T) {
	// I0 against values from the integral form (1/π)∫exp(x·cosθ)dθ; the
	// window is symmetric with peak 1.
	for _, c := range []struct{ x, want float64 }{{0, 1}, {1, 1.2660658777520082}, {8.6, 750.46115956316}, {20, 43558282.5595478}} {
		if got := besselI0(c.x); math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("I0(%g) = %.10g, want %.10g", c.x, got, c.want)
		}
	}
	w := kaiser(9, 8.6)
	if w[4] != 1 || w[0] != w[8] || math.Abs(w[0]-1/besselI0(8.6)) > 1e-15 {
		t.Errorf("kaiser(9, 8.6) = %v", w)
	}
	if k := kaiser(1, 5); len(k) != 1 || k[0] != 1 {
		t.Errorf("kaiser(1) = %v", k)
	}
}

func TestSpecValidate(t *testing.T) {
	ok := Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 1000, NumTaps: 31}
	band := Spec{Type: Bandpass, SampleRate: fs, LowHz: 1000, HighHz: 2000, NumTaps: 31}
	with := func(s Spec, f func(*Spec)) Spec { f(&s); return s }
	tests := []struct {
		name string
		spec Spec
		msg  string
	}{
		{"zero rate", with(ok, func(s *Spec) { s.SampleRate = 0 }), "sample rate 0"},
		{"negative rate", with(ok, func(s *Spec) { s.SampleRate = -1 }), "sample rate -1"},
		{"NaN rate", with(ok, func(s *Spec) { s.SampleRate = math.NaN() }), "sample rate NaN"},
		{"empty type", with(ok, func(s *Spec) { s.Type = "" }), "filter type is empty"},
		{"unknown type", with(ok, func(s *Spec) { s.Type = "allpass" }), `unknown filter type "allpass"`},
		{"cutoff zero", with(ok, func(s *Spec) { s.CutoffHz = 0 }), "cutoff 0 Hz"},
		{"cutoff at nyquist", with(ok, func(s *Spec) { s.CutoffHz = fs / 2 }), "< Nyquist (24000 Hz)"},
		{"cutoff above nyquist", with(ok, func(s *Spec) { s.CutoffHz = 30000 }), "cutoff 30000 Hz"},
		{"cutoff Inf", with(ok, func(s *Spec) { s.CutoffHz = math.Inf(1) }), "cutoff +Inf"},
		{"highpass cutoff", with(ok, func(s *Spec) { s.Type = Highpass; s.CutoffHz = -5 }), "highpass cutoff -5"},
		{"low >= high", with(band, func(s *Spec) { s.LowHz = 2000 }), "low edge 2000 Hz must be below high edge 2000 Hz"},
		{"low zero", with(band, func(s *Spec) { s.LowHz = 0 }), "low edge 0 Hz must be > 0"},
		{"high at nyquist", with(band, func(s *Spec) { s.HighHz = fs / 2 }), "high edge 24000 Hz must be < Nyquist"},
		{"bandstop low NaN", with(band, func(s *Spec) { s.Type = Bandstop; s.LowHz = math.NaN() }), "bandstop low edge NaN"},
		{"zero taps", with(ok, func(s *Spec) { s.NumTaps = 0 }), "number of taps 0"},
		{"negative taps", with(ok, func(s *Spec) { s.NumTaps = -4 }), "number of taps -4"},
		{"too many taps", with(ok, func(s *Spec) { s.NumTaps = MaxTaps + 1 }), "exceeds the limit"},
		{"highpass even", with(ok, func(s *Spec) { s.Type = Highpass; s.NumTaps = 30 }), "highpass needs an odd number of taps, got 30"},
		{"bandstop even", with(band, func(s *Spec) { s.Type = Bandstop; s.NumTaps = 64 }), "bandstop needs an odd number of taps, got 64"},
		{"unknown window", with(ok, func(s *Spec) { s.Window = "flattop" }), `unknown window "flattop"`},
		{"window case", with(ok, func(s *Spec) { s.Window = "Hamming" }), `unknown window "Hamming"`},
		{"negative beta", with(ok, func(s *Spec) { s.Window = WindowKaiser; s.KaiserBeta = -1 }), "kaiser beta -1"},
		{"beta overflows I0", with(ok, func(s *Spec) { s.Window = WindowKaiser; s.KaiserBeta = 720 }), "kaiser beta 720 must be in 0..700"},
		{"beta without kaiser", with(ok, func(s *Spec) { s.KaiserBeta = 5 }), `kaiser beta 5 set but window is "hamming"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Validate = %v; want ErrSpec containing %q", err, tc.msg)
			}
			if taps, err := Design(tc.spec); taps != nil || !errors.Is(err, ErrSpec) {
				t.Fatalf("Design = %v, %v; want nil, ErrSpec", taps, err)
			}
		})
	}
	for _, s := range []Spec{ok, band, with(band, func(s *Spec) { s.Type = Bandstop; s.Window = WindowKaiser })} {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", s, err)
		}
	}
}

func TestMeasureErrors(t *testing.T) {
	s := Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 3}
	taps := []float32{0.25, 0.5, 0.25}
	tests := []struct {
		name       string
		taps       []float32
		spec       Spec
		transition float64
		msg        string
	}{
		{"no taps", nil, s, 100, "no taps"},
		{"NaN tap", []float32{1, float32(math.NaN())}, s, 100, "tap 1"},
		{"bad spec", taps, Spec{}, 100, "sample rate"},
		{"negative transition", taps, s, -1, "transition width -1"},
		{"transition eats passband", taps, s, 13000, "no passband"},
		{"transition eats stopband", taps, Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 23000, NumTaps: 3}, 4000, "no stopband"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Measure(tc.taps, tc.spec, tc.transition)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Measure = %v; want error containing %q", err, tc.msg)
			}
		})
	}
}

func TestFrequencyResponse(t *testing.T) {
	// Two-tap average: |H(w)| = |cos(w/2)|.
	h := FrequencyResponse([]float32{0.5, 0.5}, 5)
	for k, got := range h {
		want := math.Abs(math.Cos(math.Pi * float64(k) / 4 / 2))
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("H[%d] = %g, want %g", k, got, want)
		}
	}
	if got := FrequencyResponse([]float32{1, 2}, 1); len(got) != 1 || got[0] != 3 {
		t.Errorf("n=1: %v, want [3]", got)
	}
	if got := FrequencyResponse([]float32{1}, 0); got != nil {
		t.Errorf("n=0: %v, want nil", got)
	}
	// Agrees with Measure's FFT-based view of a designed filter.
	s := Spec{Type: Lowpass, SampleRate: fs, CutoffHz: 6000, NumTaps: 129}
	taps, err := Design(s)
	if err != nil {
		t.Fatal(err)
	}
	resp := FrequencyResponse(taps, 49) // 500 Hz steps
	if g := db(resp[6]); math.Abs(g) > 0.1 {
		t.Errorf("3 kHz: %.3f dB, want ~0", g)
	}
	if g := db(resp[24]); g > -50 {
		t.Errorf("12 kHz: %.1f dB, want <= -50", g)
	}
	if g := db(resp[12]); math.Abs(g+6.02) > 0.5 {
		t.Errorf("cutoff 6 kHz: %.2f dB, want about -6 dB (windowed-sinc edge)", g)
	}
}
