package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/bench/cpubench"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

// benchChainOptions are the flags of "bench chain".
type benchChainOptions struct {
	overwrite                            bool // replace an existing output file (checkNew)
	taps, decimate, samples, block, reps int
	tapsFile, input, output, json        string // json: writeReport's (jsonFlag)
	shift, rate                          float64
	complex                              bool
	seed                                 uint64
}

func newBenchChainCmd() *cobra.Command {
	var o benchChainOptions
	cmd := &cobra.Command{
		Use:   "chain",
		Short: "Time the CPU stage chain: frequency shift and decimating FIR",
		Long: `Time the CPU chain [shift] → FIR ÷decimate over input in memory, fed in
blocks, and report the best of --reps runs in input mega-samples per second
(complex samples count as one). Taps are a 0.1·rate Hamming lowpass of
--taps length unless --taps-file names a taps file; --shift 0 leaves the
shift out. --input takes a raw little-endian float32 file (interleaved I/Q
with --complex) and --output writes the chain's output in the same format,
so bench/gnuradio_chain.py can check it against GNU Radio on the same data.`,
		Example: `  # shift + 129-tap lowpass ÷8 on 16 Mi complex samples
  sigproc bench chain --complex --rate 2e6 --shift -250000 --taps 129 --decimate 8

  # the same on a file, output kept for comparison
  sigproc bench chain --complex --rate 2e6 --shift -250000 --taps-file h.txt --decimate 8 --input x.cf32 --output y.cf32`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := runBenchChain(o)
			if err != nil {
				return err
			}
			if err := writeReport(o.json, cmd.OutOrStdout(), res, writeBenchChain); err != nil {
				return fmt.Errorf("bench chain: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.taps, "taps", 129, "number of lowpass taps (ignored with --taps-file)")
	f.StringVar(&o.tapsFile, "taps-file", "", "read taps from this file instead of designing them")
	f.IntVar(&o.decimate, "decimate", 8, "decimation factor M of the FIR")
	f.Float64Var(&o.shift, "shift", 0, "frequency shift in Hz before the FIR (0 = no shift stage)")
	f.Float64Var(&o.rate, "rate", 2e6, "input sample rate in S/s (for --shift)")
	f.IntVar(&o.samples, "samples", 1<<24, "input samples per run (IQ pairs with --complex)")
	f.IntVar(&o.block, "block", 4096, "input samples per Process call")
	f.IntVar(&o.reps, "reps", 5, "runs to time; the best is reported")
	f.BoolVar(&o.complex, "complex", false, "interleaved I/Q input")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the random input")
	jsonFlag(cmd, &o.json)
	f.StringVar(&o.input, "input", "", "raw little-endian float32 input file (overrides --samples and --seed)")
	f.StringVar(&o.output, "output", "", "write the chain's output as raw little-endian float32")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	return cmd
}

func runBenchChain(o benchChainOptions) (cpubench.ChainResult, error) {
	if err := checkFileOutputs([]string{o.input, o.tapsFile}, o.overwrite, outputFlag{"--output", o.output}, outputFlag{"--json", o.json}); err != nil {
		return cpubench.ChainResult{}, fmt.Errorf("bench chain: %w", err)
	}
	ch := 1
	if o.complex {
		ch = 2
	}
	var x []float32
	var err error
	if o.input != "" {
		if x, err = readRawFloat32(o.input, ch); err != nil {
			return cpubench.ChainResult{}, fmt.Errorf("bench chain: %w", err)
		}
	} else {
		if o.samples <= 0 || o.samples > maxBenchValues/ch {
			return cpubench.ChainResult{}, fmt.Errorf("bench chain: --samples must be in 1..%d, got %d", maxBenchValues/ch, o.samples)
		}
		x = uniformNoise(o.samples*ch, o.seed)
	}
	var taps []float32
	if o.tapsFile != "" {
		taps, err = filter.LoadTaps(o.tapsFile)
	} else {
		taps, err = filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: o.taps})
	}
	if err != nil {
		return cpubench.ChainResult{}, fmt.Errorf("bench chain: taps: %w", err)
	}
	c := stage.Chain{SampleRate: o.rate, Complex: o.complex}
	if o.shift != 0 {
		c.Stages = append(c.Stages, stage.NewShift(o.shift))
	}
	c.Stages = append(c.Stages, stage.NewFIR(taps, o.decimate))
	res, err := cpubench.RunChain(cpubench.ChainOptions{Chain: c, Input: x, Block: o.block, Reps: o.reps})
	if err != nil {
		return res, fmt.Errorf("bench chain: %w", err)
	}
	if o.output != "" {
		if err := writeRawFloat32(o.output, res.Output); err != nil {
			return res, fmt.Errorf("bench chain: %w", err)
		}
	}
	return res, nil
}

// writeBenchChain prints bench chain's result as one line.
func writeBenchChain(w io.Writer, res cpubench.ChainResult) error {
	_, err := fmt.Fprintf(w, "cpu chain: %s  block=%d samples=%d out=%d best=%.2f ms  %.1f MS/s in (complex=%v, best of %d)\n",
		res.Chain, res.Block, res.Samples, res.OutSamples, res.Seconds*1e3, res.InMSps, res.Complex, res.Reps)
	return err
}
