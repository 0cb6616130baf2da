//go:build cuda

package cuda

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestPreflightPinnedBudget: 1 Mi-sample complex blocks in a 64-slot ring
// (585 MiB pinned for a fir, 522 for a shift + fir ÷8 chain) start under
// the default budget; at f8de38b both failed under the fixed 256 MiB, and
// only at Start, after the run's summary had printed. A limit set too
// small is refused by Preflight, before Start, naming the setting.
func TestPreflightPinnedBudget(t *testing.T) {
	l := pipeline.Layout{BlockSize: 1 << 20, Channels: 2, Slots: 64}
	taps := noise(rand.New(rand.NewPCG(26, 3)), 129)
	fir := stage.FIR(200e6, true, taps)
	chain := stage.Chain{SampleRate: 200e6, Complex: true, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: -25e6}, {Kind: stage.KindFIR, Taps: taps, Decimate: 8}}}
	for _, c := range []stage.Chain{fir, chain} {
		small := testOptions(TransportExplicit)
		small.MaxPinned = 256 << 20
		be, err := NewChainBackend(c, small)
		if err != nil {
			t.Fatal(err)
		}
		if err := be.(interface{ Preflight(pipeline.Layout) error }).Preflight(l); !errors.Is(err, ErrPinnedLimit) ||
			!strings.Contains(err.Error(), "cuda.max_pinned_mb") {
			t.Errorf("%s, 256 MiB: Preflight = %v, want ErrPinnedLimit naming cuda.max_pinned_mb", c, err)
		}
		be, err = NewChainBackend(c, testOptions(TransportAuto))
		if err != nil {
			t.Fatal(err)
		}
		if err := be.(interface{ Preflight(pipeline.Layout) error }).Preflight(l); err != nil {
			t.Fatalf("%s, default budget: Preflight: %v", c, err)
		}
		if _, err := be.Start(context.Background(), l); err != nil {
			t.Fatalf("%s, default budget: Start: %v", c, err)
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
