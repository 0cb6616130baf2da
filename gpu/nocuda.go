//go:build !cuda

package gpu

import "github.com/sigproc/sigproc/pipeline"

// Built reports whether this binary was built with CUDA support.
func Built() bool { return false }

// Probe reports whether a usable CUDA device is present; without the cuda
// tag it always returns ErrNotBuilt.
func Probe(Options) (DeviceInfo, error) { return DeviceInfo{}, ErrNotBuilt }

// NewBackend returns ErrNotBuilt in a binary built without the cuda tag.
func NewBackend(taps []float32, complex bool, opts Options) (pipeline.Backend, error) {
	return nil, ErrNotBuilt
}
