//go:build !cuda

package gpubench

import (
	"context"
	"fmt"

	"github.com/sigproc/sigproc/backend/cuda"
)

// Bandwidth returns cuda.ErrNotBuilt in a binary built without the cuda tag.
func Bandwidth(context.Context, BandwidthConfig) (BandwidthResult, error) {
	return BandwidthResult{}, fmt.Errorf("gpu: bench bandwidth: %w", cuda.ErrNotBuilt)
}

// PinnedH2D returns cuda.ErrNotBuilt in a binary built without CUDA.
func PinnedH2D(int, int64, int) (CopyResult, error) { return CopyResult{}, cuda.ErrNotBuilt }
