package assemble

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
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
