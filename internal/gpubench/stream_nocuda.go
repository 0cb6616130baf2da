//go:build !cuda

package gpubench

import (
	"context"
	"fmt"

	"github.com/sigproc/sigproc/backend/cuda"
)

// HostFloats is page-aligned host memory for RunStreamMemory; without the
// cuda tag it cannot be allocated.
type HostFloats struct {
	Values []float32
}

// AllocHostFloats returns cuda.ErrNotBuilt in a binary built without the cuda tag.
func AllocHostFloats(int) (*HostFloats, error) {
	return nil, fmt.Errorf("gpu: host floats: %w", cuda.ErrNotBuilt)
}

// Free does nothing.
func (h *HostFloats) Free() error { return nil }

// RunStream returns cuda.ErrNotBuilt in a binary built without the cuda tag.
func RunStream(context.Context, StreamConfig, StreamReader, StreamWriter) (StreamResult, error) {
	return StreamResult{}, fmt.Errorf("gpu: bench stream: %w", cuda.ErrNotBuilt)
}

// RunStreamMemory returns cuda.ErrNotBuilt in a binary built without the cuda tag.
func RunStreamMemory(context.Context, StreamConfig, *HostFloats, *HostFloats) (StreamResult, error) {
	return StreamResult{}, fmt.Errorf("gpu: bench stream: %w", cuda.ErrNotBuilt)
}
