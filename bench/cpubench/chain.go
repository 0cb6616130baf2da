// Package cpubench times the CPU stage chain (backend/cpu.Chain) on data
// in memory, the figure `sigproc bench chain` (and `bench channelize
// --backend cpu`) prints and bench/ compares
// with GNU Radio on the same data.
package cpubench

import (
	"errors"
	"fmt"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ChainOptions are one timing run.
type ChainOptions struct {
	Chain stage.Chain
	Input []float32 // interleaved I/Q when Chain.Complex
	Block int       // input samples per Process call
	Reps  int       // runs; the best is reported
	// Discard writes each block's output over the last one's, so that
	// the output of a long run need not fit in memory; the result's
	// Output is then nil.
	Discard bool
}

// ChainResult is the best run's figures.
type ChainResult struct {
	Chain      string  `json:"chain"`
	Complex    bool    `json:"complex"`
	Block      int     `json:"block"`
	Samples    int     `json:"samples"`     // input samples per run
	OutSamples int     `json:"out_samples"` // output samples per run
	Seconds    float64 `json:"seconds"`     // best run
	InMSps     float64 `json:"in_msps"`     // input samples per second of the best run, millions
	Reps       int     `json:"reps"`
	// Output is the last run's output (interleaved I/Q when complex).
	Output []float32 `json:"-"`
}

// RunChain runs o.Input through a fresh CPU chain o.Reps times, resetting
// it between runs, and reports the fastest.
func RunChain(o ChainOptions) (ChainResult, error) {
	ch := 1
	if o.Chain.Complex {
		ch = 2
	}
	switch {
	case o.Block <= 0:
		return ChainResult{}, fmt.Errorf("cpubench: block %d must be > 0", o.Block)
	case o.Reps <= 0:
		return ChainResult{}, fmt.Errorf("cpubench: reps %d must be > 0", o.Reps)
	case len(o.Input) == 0 || len(o.Input)%ch != 0:
		return ChainResult{}, fmt.Errorf("cpubench: input of %d values is not a whole number of samples", len(o.Input))
	}
	n := len(o.Input) / ch
	block := min(o.Block, n)
	c, err := cpu.NewChain(o.Chain, block)
	if err != nil {
		return ChainResult{}, err
	}
	defer c.Close()
	// Values per output sample: 1, 2 for I/Q, 2K for a filter bank's
	// frame of K channels.
	outCh := pipeline.FrameValues(o.Chain.OutChannels(), o.Chain.OutComplex())
	size := outCh * c.MaxOut(block)
	if !o.Discard {
		size += outCh * int(o.Chain.Count(int64(n)))
	}
	out := make([]float32, size)
	best, w, total := time.Duration(-1), 0, 0
	for range o.Reps {
		c.Reset()
		w, total = 0, 0
		start := time.Now()
		for pos := 0; pos < n; pos += block {
			end := min(pos+block, n)
			k, err := c.Process(out[w:], o.Input[ch*pos:ch*end])
			if err != nil {
				return ChainResult{}, fmt.Errorf("cpubench: at sample %d: %w", pos, err)
			}
			total += k
			if !o.Discard {
				w += k
			}
		}
		if d := time.Since(start); best < 0 || d < best {
			best = d
		}
	}
	if best <= 0 {
		return ChainResult{}, errors.New("cpubench: run too short to time")
	}
	res := ChainResult{Chain: o.Chain.String(), Complex: o.Chain.Complex, Block: block, Samples: n, OutSamples: total / outCh,
		Seconds: best.Seconds(), InMSps: float64(n) / best.Seconds() / 1e6, Reps: o.Reps}
	if !o.Discard {
		res.Output = out[:w]
	}
	return res, nil
}
