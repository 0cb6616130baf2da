package assemble

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
)

// preflightBackend records the layout it was checked with and fails
// with err.
type preflightBackend struct {
	pipeline.Backend
	err error
	got pipeline.Layout
}

func (b *preflightBackend) Preflight(l pipeline.Layout) error { b.got = l; return b.err }

func TestPreflight(t *testing.T) {
	cfg := &config.Config{}
	pc := pipeline.Config{BlockSize: 1 << 20, Complex: true}
	pinned := fmt.Errorf("%w: needs 585 MiB", cuda.ErrPinnedLimit)
	for _, tt := range []struct {
		name   string
		err    error
		errHas string
	}{
		{"fits", nil, ""},
		{"pinned limit", pinned, "cuda.max_pinned_mb: gpu: pinned memory limit: needs 585 MiB"},
		{"no device", errors.New("gpu: device 3 does not exist"), "backend: gpu: device 3"},
	} {
		be := &preflightBackend{err: tt.err}
		err := Preflight(cfg, be, pc)
		if want := (pipeline.Layout{BlockSize: 1 << 20, Channels: 2, Slots: pipeline.MinUnpacedSlots}); be.got != want { // an unpaced source's byte budget
			t.Errorf("%s: checked %+v, want the layout Run gives, %+v", tt.name, be.got, want)
		}
		switch {
		case tt.errHas == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas) || !errors.Is(err, tt.err)):
			t.Errorf("%s: got %v, want %q wrapping the backend's error", tt.name, err, tt.errHas)
		}
	}
	// A backend without the check (the cpu one) passes.
	if err := Preflight(cfg, struct{ pipeline.Backend }{}, pc); err != nil {
		t.Errorf("no check: %v", err)
	}
}

func TestGPURingMin(t *testing.T) {
	info := capture.Info{SampleRate: 1e6, Complex: true}
	raw, err := capture.NewRaw(strings.NewReader(""), "cf32_le", info)
	if err != nil {
		t.Fatal(err)
	}
	syn, err := capture.NewSynthetic(capture.SyntheticConfig{SampleRate: 1e6, Signal: "noise"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		src  config.Source
		in   capture.Source
		want int
	}{
		{"a file, read several blocks at once", config.Source{Type: config.SourceFile}, raw, gpuFileSlots},
		{"stdin: a capture.Raw, read one block at a time", config.Source{Type: config.SourceStdin}, raw, gpuMinSlots},
		{"unpaced synthetic", config.Source{Type: config.SourceSynthetic}, syn, gpuMinSlots},
		{"paced synthetic: live, keeps its slack", config.Source{Type: config.SourceSynthetic, Paced: true}, syn, pipeline.LiveSlots},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Source: tc.src}
			if got := gpuRingMin(cfg, tc.in); got != tc.want {
				t.Errorf("gpuRingMin = %d, want %d", got, tc.want)
			}
		})
	}
}
