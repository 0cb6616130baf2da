//go:build !cuda

package cuda

import (
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// Built reports whether this binary was built with CUDA support.
func Built() bool { return false }

// Probe reports whether a usable CUDA device is present; without the cuda
// tag it always returns ErrNotBuilt.
func Probe(Options) (cudrv.DeviceInfo, error) { return cudrv.DeviceInfo{}, ErrNotBuilt }

// NewBackend returns ErrNotBuilt in a binary built without the cuda tag.
func NewBackend(taps []float32, complex bool, opts Options) (pipeline.Backend, error) {
	return nil, ErrNotBuilt
}

func newStages(stage.Chain, Options) (pipeline.Backend, error) { return nil, ErrNotBuilt }
