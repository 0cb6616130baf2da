package cuda

import (
	"errors"
	"testing"

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
