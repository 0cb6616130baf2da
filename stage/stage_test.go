package stage

import (
	"errors"
	"testing"
)

func TestValidate(t *testing.T) {
	taps := []float32{1, 2}
	good := Chain{SampleRate: 1000, Stages: []Stage{{Kind: KindFIR, Taps: taps, Decimate: 4}, {Kind: KindShift, FrequencyHz: 125}}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		c     Chain
		index int
		field string
	}{
		{"shift above nyquist after decimation", Chain{SampleRate: 1000, Stages: []Stage{{Kind: KindFIR, Taps: taps, Decimate: 4}, {Kind: KindShift, FrequencyHz: 126}}}, 1, "frequency_hz"},
		{"decimate 0", Chain{SampleRate: 1, Stages: []Stage{{Kind: KindFIR, Taps: taps}}}, 0, "decimate"},
		{"up 0", Chain{SampleRate: 1, Stages: []Stage{{Kind: KindResample, Taps: taps, Down: 1}}}, 0, "up"},
		{"down huge", Chain{SampleRate: 1, Stages: []Stage{{Kind: KindResample, Taps: taps, Up: 1, Down: MaxFactor + 1}}}, 0, "down"},
		{"no taps", Chain{SampleRate: 1, Stages: []Stage{{Kind: KindFIR, Decimate: 1}}}, 0, "taps"},
		{"unknown method", Chain{SampleRate: 1, Stages: []Stage{{Kind: KindFIR, Taps: taps, Decimate: 2, Method: "fast"}}}, 0, "method"},
		{"unknown kind", Chain{SampleRate: 1, Stages: []Stage{{Kind: "mix"}}}, 0, ""},
	}
	for _, tt := range tests {
		var se *StageError
		err := tt.c.Validate()
		if !errors.As(err, &se) || se.Index != tt.index || se.Field != tt.field || !errors.Is(err, ErrChain) {
			t.Errorf("%s: err %v", tt.name, err)
		}
	}
	if err := (Chain{SampleRate: 0, Stages: good.Stages}).Validate(); !errors.Is(err, ErrChain) {
		t.Errorf("rate 0: %v", err)
	}
	if err := (Chain{SampleRate: 1}).Validate(); !errors.Is(err, ErrChain) {
		t.Errorf("no stages: %v", err)
	}
}

// TestCounts: the output count after n inputs is ceil(n/M), ceil(n·L/M),
// and block maxima bound every split.
func TestCounts(t *testing.T) {
	r := Stage{Kind: KindResample, Up: 160, Down: 147}
	d := Stage{Kind: KindFIR, Decimate: 8}
	for n := int64(0); n < 2000; n++ {
		if got, want := d.Count(n), (n+7)/8; got != want {
			t.Fatalf("decimate Count(%d) = %d, want %d", n, got, want)
		}
		if got, want := r.Count(n), (n*160+146)/147; got != want {
			t.Fatalf("resample Count(%d) = %d, want %d", n, got, want)
		}
		for _, s := range []Stage{d, r} {
			for b := int64(1); b < 40; b += 7 {
				if s.Count(n+b)-s.Count(n) > int64(s.MaxOut(int(b))) {
					t.Fatalf("%+v: block %d after %d outputs more than MaxOut", s, b, n)
				}
			}
		}
	}
	if r.Count(1<<61) <= 0 {
		t.Error("overflow")
	}
	if _, ok := (Chain{Stages: []Stage{d}}).PlainFIR(); ok {
		t.Error("decimating fir is not plain")
	}
}
