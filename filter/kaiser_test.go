package filter

import (
	"errors"
	"math"
	"testing"
)

// TestKaiserOrderMatchesScipy: the values scipy.signal.kaiserord(a, w)
// returns (scipy 1.10), w relative to Nyquist.
func TestKaiserOrderMatchesScipy(t *testing.T) {
	tests := []struct {
		atten, width float64
		n            int
		beta         float64
	}{
		{60, 0.05, 147, 5.65326},
		{80, 0.1, 102, 7.85726},
		{40, 0.2, 24, 3.3953210522614574},
		{21, 0.3, 8, 0},
		{30, 0.01, 309, 2.1166248611409806},
		{100, 0.02, 643, 10.06126},
		{8, 0.5, 2, 0},
	}
	for _, tt := range tests {
		n, beta, err := KaiserOrder(tt.atten, tt.width*1000, 2000)
		if err != nil || n != tt.n || math.Abs(beta-tt.beta) > 1e-9 {
			t.Errorf("KaiserOrder(%g, %g) = %d, %g, %v; scipy: %d, %g", tt.atten, tt.width, n, beta, err, tt.n, tt.beta)
		}
		// The inverse gives the attenuation back.
		if tt.atten > 21 {
			if a := kaiserAtten(beta); math.Abs(a-tt.atten) > 1e-6 {
				t.Errorf("kaiserAtten(%g) = %g, want %g", beta, a, tt.atten)
			}
		}
	}
	for _, bad := range [][2]float64{{7.9, 100}, {60, 0}, {60, -5}, {math.NaN(), 100}, {200, 1e-6}} {
		if _, _, err := KaiserOrder(bad[0], bad[1], 2000); !errors.Is(err, ErrSpec) {
			t.Errorf("KaiserOrder(%g, %g): err %v, want ErrSpec", bad[0], bad[1], err)
		}
	}
}

// TestDesignBySpecMeetsSpec: a design by transition width and attenuation
// reaches the attenuation outside the transition band it was given (the
// Kaiser formula is approximate: allow 1 dB, and 2.5 dB for the band
// filters, whose two edges' ripples add), for every filter type.
func TestDesignBySpecMeetsSpec(t *testing.T) {
	tests := []Spec{
		{Type: Lowpass, SampleRate: 2e6, CutoffHz: 100e3, TransitionHz: 50e3, AttenuationDB: 60},
		{Type: Lowpass, SampleRate: 48000, CutoffHz: 4000, TransitionHz: 1000, AttenuationDB: 80},
		{Type: Highpass, SampleRate: 48000, CutoffHz: 4000, TransitionHz: 1000, AttenuationDB: 70},
		{Type: Bandpass, SampleRate: 48000, LowHz: 3000, HighHz: 9000, TransitionHz: 1000, AttenuationDB: 50},
		{Type: Bandstop, SampleRate: 48000, LowHz: 3000, HighHz: 9000, TransitionHz: 2000, AttenuationDB: 40},
	}
	for _, s := range tests {
		taps, err := Design(s)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		r, _ := s.Resolve()
		if len(taps) != r.NumTaps || r.Window != WindowKaiser {
			t.Errorf("%+v: %d taps, resolved %+v", s, len(taps), r)
		}
		if (s.Type == Highpass || s.Type == Bandstop) && len(taps)%2 == 0 {
			t.Errorf("%s: even length %d", s.Type, len(taps))
		}
		resp, err := Measure(taps, r, s.TransitionHz)
		if err != nil {
			t.Fatal(err)
		}
		slack := 1.0
		if s.Type == Bandpass || s.Type == Bandstop {
			slack = 2.5
		}
		if resp.StopbandAttenDB < s.AttenuationDB-slack {
			t.Errorf("%s %g dB over %g Hz: measured %.1f dB", s.Type, s.AttenuationDB, s.TransitionHz, resp.StopbandAttenDB)
		}
	}
}

// TestNominalTransitionKaiser: measured outside its nominal transition,
// a kaiser window of beta 8.6 reaches its formula's attenuation (about 86
// dB), where the old fixed 4·rate/taps band reported about 39 dB.
func TestNominalTransitionKaiser(t *testing.T) {
	s := Spec{Type: Lowpass, SampleRate: 48000, CutoffHz: 6000, NumTaps: 129, Window: WindowKaiser, KaiserBeta: 8.6}
	taps, err := Design(s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Measure(taps, s, s.NominalTransitionHz())
	if err != nil {
		t.Fatal(err)
	}
	if r.StopbandAttenDB < kaiserAtten(8.6)-1 {
		t.Errorf("measured %.1f dB outside %.0f Hz, want about %.1f", r.StopbandAttenDB, s.NominalTransitionHz(), kaiserAtten(8.6))
	}
	for _, w := range []string{WindowRectangular, WindowHann, WindowHamming, WindowBlackman} {
		s := Spec{Type: Lowpass, SampleRate: 1, NumTaps: 100, Window: w}
		if tw := s.NominalTransitionHz(); !(tw > 0.005 && tw < 0.06) {
			t.Errorf("%s: nominal transition %g", w, tw)
		}
	}
}

func TestSpecBySpecValidate(t *testing.T) {
	base := Spec{Type: Lowpass, SampleRate: 1000, CutoffHz: 100, TransitionHz: 20, AttenuationDB: 60}
	bad := []func(*Spec){
		func(s *Spec) { s.NumTaps = 11 },
		func(s *Spec) { s.KaiserBeta = 5 },
		func(s *Spec) { s.Window = WindowHamming },
		func(s *Spec) { s.TransitionHz = 0 },
		func(s *Spec) { s.AttenuationDB = 0 },
		func(s *Spec) { s.AttenuationDB = 5 },
		func(s *Spec) { s.TransitionHz = 250 },
		func(s *Spec) { s.CutoffHz = 495 },
		func(s *Spec) { s.Type, s.LowHz, s.HighHz = Bandpass, 100, 110 },
	}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, f := range bad {
		s := base
		f(&s)
		if err := s.Validate(); !errors.Is(err, ErrSpec) {
			t.Errorf("case %d %+v: err %v", i, s, err)
		}
	}
}
