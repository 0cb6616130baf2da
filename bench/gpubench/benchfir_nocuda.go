//go:build !cuda

package gpubench

import (
	"context"
	"fmt"

	"github.com/sigproc/sigproc/backend/cuda"
)

// BenchFIR returns cuda.ErrNotBuilt in a binary built without the cuda tag.
func BenchFIR(context.Context, BenchFIRConfig) (BenchFIRResult, error) {
	return BenchFIRResult{}, fmt.Errorf("gpu: bench fir: %w", cuda.ErrNotBuilt)
}
