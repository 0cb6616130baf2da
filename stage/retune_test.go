package stage

import (
	"errors"
	"testing"
)

func TestCheckRetune(t *testing.T) {
	c := Chain{SampleRate: 1000, Complex: true, Stages: []Stage{
		{Kind: KindShift, FrequencyHz: 10},
		{Kind: KindFIR, Taps: []float32{1, 2}, Decimate: 4, Method: "direct"},
		{Kind: KindResample, Taps: []float32{1}, Up: 3, Down: 2},
	}}
	tests := []struct {
		name string
		i    int
		s    Stage
		err  error // nil, ErrStructure or ErrChain
	}{
		{"new frequency", 0, Stage{Kind: KindShift, FrequencyHz: -500}, nil},
		{"new taps, decimate kept", 1, Stage{Kind: KindFIR, Taps: []float32{1, 2, 3}}, nil},
		{"same decimate", 1, Stage{Kind: KindFIR, Taps: []float32{1}, Decimate: 4}, nil},
		{"other decimate", 1, Stage{Kind: KindFIR, Taps: []float32{1}, Decimate: 2}, ErrStructure},
		{"other kind", 0, Stage{Kind: KindFIR, Taps: []float32{1}}, ErrStructure},
		{"no stage", 3, Stage{Kind: KindShift}, ErrStructure},
		{"resample factors", 2, Stage{Kind: KindResample, Taps: []float32{1}, Up: 2, Down: 2}, ErrStructure},
		{"above nyquist", 0, Stage{Kind: KindShift, FrequencyHz: 501}, ErrChain},
		{"after decimation", 0, Stage{Kind: KindShift, FrequencyHz: 500}, nil},
		{"no taps", 1, Stage{Kind: KindFIR}, ErrChain},
	}
	for _, tt := range tests {
		s, err := CheckRetune(c, tt.i, tt.s)
		// Where the structure holds, the check is the whole chain's
		// validation with s in place, though it checks the stage alone.
		if !errors.Is(err, ErrStructure) {
			want := c.With(tt.i, s).Validate()
			var se, wse *StageError
			if (err == nil) != (want == nil) || errors.As(err, &se) != errors.As(want, &wse) || se != nil && (se.Index != wse.Index || se.Error() != wse.Error()) {
				t.Errorf("%s: %v, Validate with it in place %v", tt.name, err, want)
			}
		}
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.err)
		case tt.err == nil && s.Kind == KindFIR && (s.Decimate != 4 || s.Method != "direct"):
			t.Errorf("%s: decimate %d method %q not kept", tt.name, s.Decimate, s.Method)
		}
	}
	if got := c.InputAt(2, 1001); got != 251 {
		t.Errorf("InputAt(2, 1001) = %d, want ceil(1001/4) = 251", got)
	}
	if err := SameStructure(c, c.With(1, Stage{Kind: KindFIR, Taps: []float32{5}, Decimate: 4})); err != nil {
		t.Errorf("new taps: %v", err)
	}
	if err := SameStructure(c, Chain{SampleRate: 1000, Complex: true, Stages: c.Stages[:2]}); !errors.Is(err, ErrStructure) {
		t.Errorf("fewer stages: %v", err)
	}
	if c.Stages[1].Taps[0] != 1 {
		t.Error("With changed the original chain")
	}
}

// BenchmarkCheckRetune checks a shift retune of configs/probe-chain.yaml's
// chain (shift + 129-tap FIR ÷8): the stage's part of a retune call.
func BenchmarkCheckRetune(b *testing.B) {
	c := Chain{SampleRate: 102.4e6, Complex: true, Stages: []Stage{NewShift(-2e7), NewFIR(make([]float32, 129), 8)}}
	c.Stages[1].Taps[0] = 1
	s := NewShift(2e7)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CheckRetune(c, 0, s); err != nil {
			b.Fatal(err)
		}
	}
}
