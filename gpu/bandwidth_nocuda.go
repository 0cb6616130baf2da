//go:build !cuda

package gpu

import (
	"context"
	"fmt"
)

// Bandwidth returns ErrNotBuilt in a binary built without the cuda tag.
func Bandwidth(context.Context, BandwidthConfig) (BandwidthResult, error) {
	return BandwidthResult{}, fmt.Errorf("gpu: bench bandwidth: %w", ErrNotBuilt)
}
