package gpubench

import (
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/stage"
)

// BenchChainConfig configures BenchChain.
type BenchChainConfig struct {
	Device  int         // CUDA device ordinal
	Chain   stage.Chain // the stages to time (one channel)
	Samples int         // input samples per pass (IQ pairs when Chain.Complex)
	Seed    uint64      // seed of the random input (1 Mi values, repeated)
	Warmup  int         // untimed passes before the timed ones
	Reps    int         // timed passes, each one Launch over all of the input
	PTXPath string      // load the chain kernels from this PTX file ("" = embedded)
	// BankPath forces a filter bank's path: "fused" or "split"; "" takes
	// the one the chain chooses (cuda.ChainFilter.SetBankSplit).
	BankPath string
}

func (c BenchChainConfig) validate() error {
	switch {
	case c.Samples <= 0:
		return fmt.Errorf("gpu: bench chain: samples must be > 0, got %d", c.Samples)
	case c.Reps <= 0:
		return fmt.Errorf("gpu: bench chain: reps must be > 0, got %d", c.Reps)
	case c.Warmup < 0:
		return fmt.Errorf("gpu: bench chain: warmup must be >= 0, got %d", c.Warmup)
	case c.Chain.ChannelCount() > 1:
		return errors.New("gpu: bench chain: one channel only")
	case c.BankPath != "" && c.BankPath != "fused" && c.BankPath != "split":
		return fmt.Errorf("gpu: bench chain: bank path %q: want fused, split or empty", c.BankPath)
	}
	return c.Chain.Validate()
}

// BenchChainResult is what BenchChain measured.
type BenchChainResult struct {
	Device     cudrv.DeviceInfo
	Chain      string
	Samples    int       // input samples per pass
	OutSamples int       // output samples of the last pass
	Seconds    []float64 // GPU time of each timed pass (CUDA events)
}

// Best returns the shortest pass in seconds.
func (r BenchChainResult) Best() float64 {
	best := 0.0
	for i, s := range r.Seconds {
		if i == 0 || s < best {
			best = s
		}
	}
	return best
}

// InGSps returns the input rate of the best pass in giga-samples per
// second (a complex sample counts as one).
func (r BenchChainResult) InGSps() float64 {
	if b := r.Best(); b > 0 {
		return float64(r.Samples) / b / 1e9
	}
	return 0
}
