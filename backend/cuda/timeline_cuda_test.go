//go:build cuda

package cuda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/pipeline"
)

// TestExplicitTimelineAtTrace runs a cf32 recording pinned in place
// through the explicit transport: at log level trace each block's steps
// are logged once, in block order, on one clock and in the order the
// streams impose (copy in, then kernels, then copy back), and each pin of
// the recording is logged; at info level neither is.
func TestExplicitTimelineAtTrace(t *testing.T) {
	const block, blocks = 65536, 8 // complex samples
	r := rand.New(rand.NewPCG(3, 4))
	path := writeFloats(t, randSignal(r, 2*blocks*block))
	run := func(level zerolog.Level) string {
		src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: "cf32_le", SampleRate: 48000, Complex: true})
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		o := testOptions(TransportExplicit)
		zero := 0.0
		o.PinSource, o.ReadShare = true, &zero
		o.Log = zerolog.New(&log).Level(level)
		be, err := NewBackend(randSignal(r, 33), false, o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pipeline.Run(context.Background(), src, be, &collect{}, pipeline.Config{BlockSize: block, Complex: true, Channels: 1, Slots: 8}, pipeline.Options{})
		if errs := errors.Join(err, be.Close(), src.Close()); errs != nil {
			t.Fatal(errs)
		}
		return log.String()
	}
	if out := run(zerolog.InfoLevel); strings.Contains(out, "timeline") {
		t.Fatalf("a timeline at info level:\n%s", out)
	}
	var seen, pins int
	for _, line := range strings.Split(strings.TrimSpace(run(zerolog.TraceLevel)), "\n") {
		var e struct {
			Message  string
			Block    *uint64
			InPlace  bool    `json:"in_place"`
			Queued   float64 `json:"queued_ms"`
			CopyIn   float64 `json:"copy_in_ms"`
			Copied   float64 `json:"copied_ms"`
			Launch   float64 `json:"launch_ms"`
			Hist     float64 `json:"hist_ms"`
			Done     float64 `json:"done_ms"`
			Returned float64 `json:"returned_ms"`
			Start    float64 `json:"start_ms"` // a pin's
			End      float64 `json:"end_ms"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch e.Message {
		case "block timeline":
			if e.Block == nil || *e.Block != uint64(seen) {
				t.Fatalf("block timeline %d out of order: %s", seen, line)
			}
			seen++
			// Events on the GPU's clock, in the order the streams impose;
			// the host's times on its own, the start shared.
			const slack = 0.01 // ms: an event's resolution is about 0.5 µs
			steps := []float64{e.CopyIn, e.Copied, e.Launch, e.Hist, e.Done}
			for i := 1; i < len(steps); i++ {
				if steps[i] < steps[i-1]-slack {
					t.Errorf("block %d's steps out of order: %s", *e.Block, line)
				}
			}
			if e.Queued < 0 || e.Returned < e.Queued || !e.InPlace {
				t.Errorf("block %d: queued %v, returned %v, in place %v", *e.Block, e.Queued, e.Returned, e.InPlace)
			}
		case "pin timeline":
			pins++
			if e.End < e.Start || e.Start < 0 {
				t.Errorf("pin from %v to %v ms", e.Start, e.End)
			}
		}
	}
	if seen != blocks || pins == 0 {
		t.Fatalf("%d block timelines of %d blocks, %d pins", seen, blocks, pins)
	}
}
