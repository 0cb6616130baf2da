package stage

import (
	"errors"
	"strings"
	"testing"
)

// TestKinds: the table lists each kind once, under its own name, in the
// order messages give them, and every kind builds a CPU kernel for a
// valid stage.
func TestKinds(t *testing.T) {
	taps := []float32{0.25, 0.5, 0.25}
	valid := map[Kind]Stage{
		KindShift:      NewShift(100),
		KindFIR:        NewFIR(taps, 2),
		KindResample:   NewResample(taps, 3, 2),
		KindChannelize: NewChannelize(taps, 4, 2),
		KindSelect:     NewSelect(0),
	}
	var names []string
	for _, d := range kinds {
		names = append(names, string(d.Kind()))
	}
	if got, want := kindNames(), strings.Join(names[:len(names)-1], ", ")+" or "+names[len(names)-1]; got != want || names[0] != "shift" {
		t.Errorf("kindNames() = %q, want %q", got, want)
	}
	ks := Kinds()
	if len(ks) != len(valid) {
		t.Fatalf("%d kinds, want %d", len(ks), len(valid))
	}
	for _, d := range ks {
		s, ok := valid[d.Kind()]
		if !ok {
			t.Fatalf("kind %q has no test stage", d.Kind())
		}
		if l, ok := Lookup(d.Kind()); !ok || l != d || s.Def() != d {
			t.Errorf("Lookup(%q) = %v, %v", d.Kind(), l, ok)
		}
		if err := d.Check(s, 1000); err != nil {
			t.Errorf("%s: Check: %v", d.Kind(), err)
		}
		if r, err := d.Retune(s, s); err != nil || r.Kind != s.Kind {
			t.Errorf("%s: Retune to itself: %+v, %v", d.Kind(), r, err)
		}
		p, err := d.NewProcessor(s, Input{Rate: 1000, Complex: true, MaxIn: 64})
		if err != nil || p == nil {
			t.Fatalf("%s: NewProcessor: %v", d.Kind(), err)
		}
		x := make([]float32, 2*64)
		y := make([]float32, 2*s.OutChannels(1)*s.MaxOut(64))
		if n, err := p.Process(y, x); err != nil || n != len(y) {
			t.Errorf("%s: Process wrote %d of %d: %v", d.Kind(), n, len(y), err)
		}
		if d.Params()&ParamTaps != 0 {
			if err := d.Check(Stage{Kind: s.Kind, Up: 1, Down: 1, Decimate: 1}, 1000); err == nil || err.Field != "taps" {
				t.Errorf("%s: no taps: %v", d.Kind(), err)
			}
		}
	}
	if _, ok := Lookup("mix"); ok {
		t.Error(`Lookup("mix") found a kind`)
	}
	u := Stage{Kind: "mix"}
	if u.Rate(48000) != 48000 || u.Count(7) != 7 || u.OutComplex(false) || u.Def().Check(u, 1) == nil {
		t.Error("an unknown kind does not pass through, or passes Check")
	}
	if _, err := u.Def().NewProcessor(u, Input{Rate: 1, MaxIn: 1}); err == nil {
		t.Error("an unknown kind built a kernel")
	}
}

// TestDescribe: Chain.String is each kind's description.
func TestDescribe(t *testing.T) {
	c := Chain{SampleRate: 1e6, Stages: []Stage{NewShift(-250000), NewFIR(make([]float32, 129), 8), NewFIR([]float32{1}, 1), NewResample(make([]float32, 48), 3, 2), {Kind: "mix"}}}
	want := "shift -250000 Hz → fir 129 taps ÷8 → fir 1 taps → resample 48 taps ×3/2 → mix"
	if got := c.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestDesign: a resampler's taps run at the upsampled rate and designed
// ones get a gain of up; the others' run at their input rate.
func TestDesign(t *testing.T) {
	for _, tt := range []struct {
		s          Stage
		rate, gain float64
	}{
		{NewResample([]float32{1}, 3, 2), 3000, 3},
		{NewFIR([]float32{1}, 4), 1000, 1},
		{NewShift(5), 1000, 1},
	} {
		if r, g := tt.s.Def().Design(tt.s, 1000); r != tt.rate || g != tt.gain {
			t.Errorf("%s: Design(1000) = %g, %g, want %g, %g", tt.s.Kind, r, g, tt.rate, tt.gain)
		}
	}
	if _, err := CheckRetune(Chain{SampleRate: 1, Stages: []Stage{NewResample([]float32{1}, 3, 2)}}, 0, NewResample([]float32{1}, 2, 2)); !errors.Is(err, ErrStructure) ||
		err.Error() != "stage: a retune cannot change the chain's structure: stage 0 resamples by 3/2; a retune cannot change it to 2/2" {
		t.Errorf("resample factors: %v", err)
	}
}
