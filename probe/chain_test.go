package probe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestProbeChain measures chains on the CPU path: every delivered block's
// output is checked against the CPU chain, and a backend that corrupts it
// fails the run. A shift + decimating FIR outputs a quarter of a block's
// values, a resampler 3/2 and a channelizer of 16 channels ÷4 more than
// it (1.5 and 4 times).
func TestProbeChain(t *testing.T) {
	taps := make([]float32, 33)
	for i := range taps {
		taps[i] = float32(i%5) / 10
	}
	chains := map[string][]stage.Stage{
		"shift+fir÷4":     {{Kind: stage.KindShift, FrequencyHz: -125000}, {Kind: stage.KindFIR, Taps: taps, Decimate: 4}},
		"resample 3/2":    {stage.NewResample(taps, 3, 2)},
		"channelize 16÷4": {stage.NewChannelize(taps, 16, 4)},
	}
	for _, complex := range []bool{false, true} {
		for name, stages := range chains {
			ch := stage.Chain{SampleRate: 1e6, Complex: complex, Stages: stages}
			cfg := Config{BlockSize: 100, Complex: complex, Chain: ch, Blocks: 200, Warmup: 10, Period: 20 * time.Microsecond, Seed: 3}
			path := Path{Name: "cpu", New: func() (pipeline.Backend, error) { return cpu.New(ch, 100) }}
			rs, err := Run(context.Background(), cfg, []Path{path})
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			if r.Verified+int(r.Dropped) != 210 || r.Mismatches != 0 || r.Chain == "" || r.Taps != 33 {
				t.Fatalf("%s: result %+v", name, r)
			}
			bad := Path{Name: "cpu", New: func() (pipeline.Backend, error) {
				be, err := cpu.New(ch, 100)
				return wrongBackend{be}, err
			}}
			if _, err := Run(context.Background(), cfg, []Path{bad}); !errors.Is(err, ErrMismatch) {
				t.Errorf("%s: corrupted chain output: err %v, want ErrMismatch", name, err)
			}
		}
	}
	cfg := Config{BlockSize: 100, Chain: stage.FIR(1, true, taps), Blocks: 1, VerifyEvery: 1}
	if err := cfg.validate(); err == nil {
		t.Error("complex chain on real blocks accepted")
	}
	cfg.Complex, cfg.VerifyEvery = true, 4
	if err := cfg.validate(); err == nil {
		t.Error("sampled verification of a chain accepted")
	}
}
