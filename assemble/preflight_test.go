package assemble

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

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

// slotLimitBackend refuses, as a host short of pinned memory does, any
// ring of more than max slots, and records the depths it was asked for.
type slotLimitBackend struct {
	pipeline.Backend
	max   int
	asked []int
}

func (b *slotLimitBackend) Preflight(l pipeline.Layout) error {
	b.asked = append(b.asked, l.Slots)
	if l.Slots > b.max {
		return fmt.Errorf("%w: %d slots", cuda.ErrPinnedLimit, l.Slots)
	}
	return nil
}

// A default ring of file readers halves, down to gpuMinSlots, until the
// pinned budget holds it; a live source's slack and a ring_slots given
// are kept, and refused.
func TestPreflightRing(t *testing.T) {
	tests := []struct {
		name    string
		cfg     config.Config
		min     int // the source's MinSlots, as gpuRingMin gives it
		max     int // the most slots the host's pinned budget holds
		asked   []int
		refused bool
	}{
		{"fits", config.Config{Source: config.Source{Type: config.SourceFile}}, 64, 64, []int{64}, false},
		{"file, halved once", config.Config{Source: config.Source{Type: config.SourceFile}}, 64, 32, []int{64, 32}, false},
		{"file, down to the least", config.Config{Source: config.Source{Type: config.SourceFile}}, 64, 16, []int{64, 32, 16}, false},
		{"file, not even the least", config.Config{Source: config.Source{Type: config.SourceFile}}, 64, 8, []int{64, 32, 16}, true},
		{"a 32-slot file ring, small host", config.Config{Source: config.Source{Type: config.SourceFile}}, 32, 16, []int{32, 16}, false},
		{"stdin gets the least already", config.Config{Source: config.Source{Type: config.SourceStdin}}, gpuMinSlots, 8, []int{16}, true},
		{"live source keeps its slack", config.Config{Source: config.Source{Type: config.SourceSynthetic, Paced: true}}, pipeline.LiveSlots, 32, []int{64}, true},
		{"ring_slots given", config.Config{Source: config.Source{Type: config.SourceFile}, RingSlots: 64}, gpuFileSlots, 32, []int{64}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := pipeline.Config{BlockSize: 2 << 20, Complex: true, Slots: tc.cfg.RingSlots}
			pc.Source.MinSlots = tc.min
			be := &slotLimitBackend{max: tc.max}
			err := preflightRing(&tc.cfg, be, &pc, zerolog.Nop())
			if fmt.Sprint(be.asked) != fmt.Sprint(tc.asked) {
				t.Errorf("asked for %v slots, want %v", be.asked, tc.asked)
			}
			if (err != nil) != tc.refused || (err != nil && !errors.Is(err, cuda.ErrPinnedLimit)) {
				t.Errorf("err = %v, want refused %v", err, tc.refused)
			}
		})
	}
}
