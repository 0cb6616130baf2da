//go:build !cuda

package gpubench

import (
	"context"
	"fmt"

	"github.com/sigproc/sigproc/backend/cuda"
)

// BenchChain returns cuda.ErrNotBuilt in a binary built without the cuda
// tag.
func BenchChain(context.Context, BenchChainConfig) (BenchChainResult, error) {
	return BenchChainResult{}, fmt.Errorf("gpu: bench chain: %w", cuda.ErrNotBuilt)
}
