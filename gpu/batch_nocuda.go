//go:build !cuda

package gpu

import (
	"context"
	"fmt"
)

// BenchFIR returns ErrNotBuilt in a binary built without the cuda tag.
func BenchFIR(context.Context, BenchFIRConfig) (BenchFIRResult, error) {
	return BenchFIRResult{}, fmt.Errorf("gpu: bench fir: %w", ErrNotBuilt)
}
