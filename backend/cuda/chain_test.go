package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

func TestNewChainBackendRejectsStages(t *testing.T) {
	taps := []float32{0.5, 0.5}
	for _, c := range []stage.Chain{
		{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{{Kind: stage.KindShift, FrequencyHz: 1}, {Kind: stage.KindFIR, Taps: taps, Decimate: 1}}},
		{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindFIR, Taps: taps, Decimate: 8}}},
		{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindResample, Taps: taps, Up: 3, Down: 2}}},
	} {
		if _, err := NewChainBackend(c, Options{}); !errors.Is(err, ErrStages) {
			t.Errorf("%s: err %v, want ErrStages", c, err)
		}
	}
	// The plain FIR goes through (or fails only for lack of CUDA).
	if _, err := NewChainBackend(stage.FIR(1e6, false, taps), Options{}); errors.Is(err, ErrStages) {
		t.Errorf("plain fir rejected: %v", err)
	}
}

func TestNewChainBackendRejectsChannels(t *testing.T) {
	for _, n := range []int{2, 8} {
		for _, cplx := range []bool{false, true} {
			c := stage.FIR(1e6, cplx, []float32{0.5, 0.5})
			c.Channels = n
			_, err := NewChainBackend(c, Options{Transport: TransportExplicit})
			if !errors.Is(err, ErrChannels) || err.Error() != fmt.Sprintf(`N channels are not yet supported on cuda on transport "explicit" (the stream has %d channels; use transport: zero-copy or backend: cpu)`, n) {
				t.Errorf("%d channels, complex %v: err %v, want ErrChannels", n, cplx, err)
			}
			// Zero-copy, and auto (which Start resolves), take them.
			for _, tr := range []Transport{TransportZeroCopy, TransportAuto} {
				if _, err := NewChainBackend(c, Options{Transport: tr}); errors.Is(err, ErrChannels) {
					t.Errorf("%d channels, complex %v, transport %s: %v", n, cplx, tr, err)
				}
			}
		}
	}
	// One channel goes through (or fails only for lack of CUDA).
	c := stage.FIR(1e6, false, []float32{1})
	c.Channels = 1
	if _, err := NewChainBackend(c, Options{}); errors.Is(err, ErrChannels) {
		t.Errorf("one channel rejected: %v", err)
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
