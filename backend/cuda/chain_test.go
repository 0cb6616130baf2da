package cuda

import (
	"errors"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestCheckChain: chains of shift, fir, resample and channelize stages
// run on every transport, and the plain FIR runs anywhere. No GPU needed.
func TestCheckChain(t *testing.T) {
	taps := []float32{0.5, 0.5}
	stages := []stage.Chain{
		{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{{Kind: stage.KindShift, FrequencyHz: 1}, {Kind: stage.KindFIR, Taps: taps, Decimate: 1}}},
		{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindFIR, Taps: taps, Decimate: 8}}},
		{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindResample, Taps: taps, Up: 3, Down: 2}}},
		{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindShift, FrequencyHz: -1e5}}},
		{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewShift(1e3), stage.NewChannelize(make([]float32, 32), 16, 16)}},
	}
	for _, c := range stages {
		for _, tr := range []Transport{"", TransportAuto, TransportExplicit, TransportExplicitPageable, TransportZeroCopy} {
			if err := CheckChain(c, Options{Transport: tr}); err != nil {
				t.Errorf("%s on %q: %v", c, tr, err)
			}
			// It goes through (or fails only for lack of CUDA).
			if _, err := NewChainBackend(c, Options{Transport: tr}); err != nil && !errors.Is(err, ErrNotBuilt) {
				t.Errorf("NewChainBackend(%s) on %q: %v", c, tr, err)
			}
		}
	}
	bad := stage.Chain{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindResample, Taps: taps, Up: 0, Down: 2}}}
	if err := CheckChain(bad, Options{}); !errors.Is(err, stage.ErrChain) {
		t.Errorf("up 0: err %v, want stage.ErrChain", err)
	}
	for _, tr := range []Transport{TransportAuto, TransportZeroCopy, TransportExplicit} {
		if err := CheckChain(stage.FIR(1e6, false, taps), Options{Transport: tr}); err != nil {
			t.Errorf("plain fir on %s: %v", tr, err)
		}
	}
}

// N channels go through NewChainBackend (or fail only for lack of CUDA):
// a plain FIR and a chain of stages, on both transports.
func TestNewChainBackendTakesChannels(t *testing.T) {
	for _, n := range []int{1, 2, 8} {
		for _, cplx := range []bool{false, true} {
			c := stage.FIR(1e6, cplx, []float32{0.5, 0.5})
			c.Channels = n
			if _, err := NewChainBackend(c, Options{}); err != nil && !errors.Is(err, ErrNotBuilt) {
				t.Errorf("%d channels, complex %v: %v", n, cplx, err)
			}
			c.Stages = []stage.Stage{stage.NewShift(1e3), stage.NewFIR([]float32{1}, 2)}
			if _, err := NewChainBackend(c, Options{}); err != nil && !errors.Is(err, ErrNotBuilt) {
				t.Errorf("shift → fir ÷2 on %d channels, complex %v: %v", n, cplx, err)
			}
			if _, err := NewChainBackend(c, Options{Transport: TransportZeroCopy}); err != nil && !errors.Is(err, ErrNotBuilt) {
				t.Errorf("shift → fir ÷2 on %d channels, zero-copy: %v", n, err)
			}
		}
	}
}

// TestRetuneRefused: a cuda backend answers retunes with ErrRetune (and a
// structural change as such), without a GPU.
func TestRetuneRefused(t *testing.T) {
	c := stage.FIR(1e6, false, []float32{0.5, 0.5})
	b := &chainBackend{chain: c}
	var _ pipeline.Retuner = b
	var _ pipeline.RegionBackend = b
	if _, err := b.Retune(stage.Retune{Index: 0, Stage: stage.Stage{Kind: stage.KindFIR, Taps: []float32{1}}}); !errors.Is(err, ErrRetune) || !errors.Is(err, stage.ErrRetuneUnsupported) {
		t.Errorf("retune: %v, want ErrRetune", err)
	}
	if _, err := b.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindShift, FrequencyHz: 1}}); !errors.Is(err, stage.ErrStructure) {
		t.Errorf("kind change: %v, want ErrStructure", err)
	}
	if b.Chain().String() != c.String() {
		t.Errorf("Chain() = %s", b.Chain())
	}
}

// TestCheckChainBank: a channelize stage runs on cuda anywhere, followed
// by a select or not, and stages after it run on each of its channels; a
// select without a channelizer just before it is refused with ErrChannels
// before a GPU is touched.
func TestCheckChainBank(t *testing.T) {
	taps := make([]float32, 100)
	bank := stage.NewChannelize(taps, 16, 8)
	sel := stage.NewSelect(1, 3)
	shift := stage.NewShift(-1e5)
	fir := stage.NewFIR([]float32{0.5, 0.5}, 2)
	for _, tc := range []struct {
		name   string
		stages []stage.Stage
		ok     bool
	}{
		{"channelize", []stage.Stage{bank}, true},
		{"channelize → select", []stage.Stage{bank, sel}, true},
		{"shift → fir → channelize → select", []stage.Stage{shift, fir, bank, sel}, true},
		{"channelize → fir", []stage.Stage{bank, fir}, true},
		{"channelize → select → fir", []stage.Stage{bank, sel, fir}, true},
		{"channelize → select → shift → fir → resample", []stage.Stage{bank, sel, stage.NewShift(-1e4), fir, stage.NewResample([]float32{1, 1}, 3, 2)}, true},
		{"channelize → select → select", []stage.Stage{bank, sel, stage.NewSelect(0)}, false},
		{"channelize → shift", []stage.Stage{bank, stage.NewShift(-1e4)}, true},
	} {
		c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: tc.stages}
		for _, tr := range []Transport{TransportExplicit, TransportZeroCopy} {
			err := CheckChain(c, Options{Transport: tr})
			if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrChannels) {
				t.Errorf("%s on %s: err %v, want ok %v (else ErrChannels)", tc.name, tr, err, tc.ok)
			}
		}
	}
	// A select on a 4-channel source: no channelizer before it.
	c := stage.Chain{SampleRate: 1e6, Channels: 4, Stages: []stage.Stage{sel}}
	for _, tr := range []Transport{"", TransportZeroCopy} {
		if err := CheckChain(c, Options{Transport: tr}); !errors.Is(err, ErrChannels) {
			t.Errorf("select of 4 channels on %q: err %v, want ErrChannels", tr, err)
		}
	}
}
