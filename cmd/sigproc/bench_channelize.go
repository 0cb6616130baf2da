package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/bench/cpubench"
	"github.com/sigproc/sigproc/bench/gpubench"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// benchChannelizeOptions are the flags of "bench channelize".
type benchChannelizeOptions struct {
	overwrite                                         bool   // replace an existing output file (checkNew)
	backend, path, json                               string // json: writeReport's (jsonFlag)
	channels, decimate, tapsPerChannel, samples, reps int
	block, device                                     int
	keep                                              []int
	complex                                           bool
	seed                                              uint64
}

// benchChannelizeResult is what "bench channelize" prints with --json.
type benchChannelizeResult struct {
	Backend   string  `json:"backend"`
	Device    string  `json:"device,omitempty"`
	Chain     string  `json:"chain"`
	Path      string  `json:"path,omitempty"`  // cuda: fused, split or "" (the chain's choice)
	Cores     int     `json:"cores,omitempty"` // cpu: GOMAXPROCS, the cores the chain spreads a block over
	Block     int     `json:"block,omitempty"` // cpu: input samples per Process call
	Complex   bool    `json:"complex"`
	Samples   int     `json:"samples"`    // input samples per pass
	OutFrames int     `json:"out_frames"` // frames of the kept channels per pass
	Seconds   float64 `json:"seconds"`    // best pass
	InGSps    float64 `json:"in_gsps"`    // input samples per second of the best pass, billions
	Reps      int     `json:"reps"`
}

func newBenchChannelizeCmd() *cobra.Command {
	var o benchChannelizeOptions
	cmd := &cobra.Command{
		Use:   "channelize",
		Short: "Time the filter bank (channelize stage) on data in memory, CPU or GPU",
		Long: `Time a channelize stage, M channels decimated by D with the default
prototype of --taps-per-channel taps a channel (filter.BankPrototype, what
the stage designs), on random input already in memory, and report the
best of --reps passes in input giga-samples per second (a complex sample
counts as one). --keep adds a select stage that keeps those channels.

--backend cpu runs the CPU chain in blocks of --block samples, each
block spread over GOMAXPROCS cores (GOMAXPROCS=1, or taskset, for one);
the output is discarded block by block. --backend cuda (a binary built
with make cuda) runs the GPU's bank kernel on data in device memory,
each pass one launch over --samples, timed with CUDA events, with the
harness BenchmarkChannelizeGPU uses (whose figures
bench/channelize_cupy.py sets beside CuPy's channelize_poly). --path
fused or split forces the GPU's path (docs/THROUGHPUT.md, "The filter
bank kernel").`,
		Example: `  # 64 channels, 16 taps a channel, critically sampled, on one CPU core
  GOMAXPROCS=1 sigproc bench channelize --channels 64

  # the GPU: 1024 channels, 2x oversampled, keeping three of them
  sigproc-cuda bench channelize --backend cuda --channels 1024 --decimate 512 --keep 0,16,32

  # the GPU's two paths side by side
  sigproc-cuda bench channelize --backend cuda --channels 4096 --path fused
  sigproc-cuda bench channelize --backend cuda --channels 4096 --path split`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("samples") && o.backend == "cuda" {
				o.samples = 64 << 20
			}
			return runBenchChannelize(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "cpu", "cpu or cuda")
	f.IntVar(&o.channels, "channels", 64, "channels M of the bank (2.."+fmt.Sprint(filter.MaxBankChannels)+")")
	f.IntVar(&o.decimate, "decimate", 0, "decimation D, a divisor of --channels (0: the channels, critically sampled)")
	f.IntVar(&o.tapsPerChannel, "taps-per-channel", 16, "taps of the default prototype a channel")
	f.IntSliceVar(&o.keep, "keep", nil, "channels to keep (a select stage after the bank); none: all")
	f.BoolVar(&o.complex, "complex", true, "interleaved I/Q input (false: real)")
	f.IntVar(&o.samples, "samples", 16<<20, "input samples per pass (IQ pairs when complex; 64 Mi with --backend cuda unless given)")
	f.IntVar(&o.block, "block", 65536, "cpu: input samples per Process call")
	f.IntVar(&o.reps, "reps", 5, "timed passes; the best is reported")
	f.StringVar(&o.path, "path", "", "cuda: fused or split forces the bank's path (empty: the chain's choice)")
	f.IntVar(&o.device, "device", 0, "cuda: device ordinal")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the random input")
	jsonFlag(cmd, &o.json)
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	return cmd
}

// chain returns the stages o times, after checking the flags.
func (o benchChannelizeOptions) chain() (stage.Chain, error) {
	ch := pipeline.FrameValues(1, o.complex)
	switch {
	case o.backend != "cpu" && o.backend != "cuda":
		return stage.Chain{}, fmt.Errorf("--backend %q: want cpu or cuda", o.backend)
	case o.path != "" && o.path != "fused" && o.path != "split":
		return stage.Chain{}, fmt.Errorf("--path %q: want fused, split or empty", o.path)
	case o.path != "" && o.backend != "cuda":
		return stage.Chain{}, fmt.Errorf("--path %s takes --backend cuda", o.path)
	case o.samples <= 0 || o.samples > maxBenchValues/ch:
		return stage.Chain{}, fmt.Errorf("--samples must be in 1..%d, got %d", maxBenchValues/ch, o.samples)
	case o.reps <= 0:
		return stage.Chain{}, fmt.Errorf("--reps must be > 0, got %d", o.reps)
	case o.block <= 0:
		return stage.Chain{}, fmt.Errorf("--block must be > 0, got %d", o.block)
	case o.device < 0:
		return stage.Chain{}, fmt.Errorf("--device must be >= 0, got %d", o.device)
	}
	d := o.decimate
	if d == 0 {
		d = o.channels
	}
	taps, err := filter.BankPrototype(o.channels, o.tapsPerChannel)
	if err != nil {
		return stage.Chain{}, err
	}
	c := stage.Chain{SampleRate: 1e9, Complex: o.complex, Stages: []stage.Stage{stage.NewChannelize(taps, o.channels, d)}}
	if len(o.keep) > 0 {
		c.Stages = append(c.Stages, stage.NewSelect(o.keep...))
	}
	return c, c.Validate()
}

func runBenchChannelize(ctx context.Context, o benchChannelizeOptions, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := o.chain()
	if err != nil {
		return fmt.Errorf("bench channelize: %w", err)
	}
	if err := checkFileOutputs(nil, o.overwrite, outputFlag{"--json", o.json}); err != nil {
		return fmt.Errorf("bench channelize: %w", err)
	}
	res := benchChannelizeResult{Backend: o.backend, Chain: c.String(), Path: o.path, Complex: o.complex, Samples: o.samples, Reps: o.reps}
	if o.backend == "cuda" {
		r, err := gpubench.BenchChain(ctx, gpubench.BenchChainConfig{Device: o.device, Chain: c, Samples: o.samples,
			Seed: o.seed, Warmup: 2, Reps: o.reps, BankPath: o.path})
		if err != nil {
			return fmt.Errorf("bench channelize: %w", err)
		}
		res.Device, res.OutFrames, res.Seconds, res.InGSps = r.Device.Name, r.OutSamples, r.Best(), r.InGSps()
	} else {
		x := uniformNoise(o.samples*pipeline.FrameValues(1, o.complex), o.seed)
		r, err := cpubench.RunChain(cpubench.ChainOptions{Chain: c, Input: x, Block: o.block, Reps: o.reps, Discard: true})
		if err != nil {
			return fmt.Errorf("bench channelize: %w", err)
		}
		res.OutFrames, res.Seconds, res.InGSps = r.OutSamples, r.Seconds, r.InMSps/1e3
		res.Cores, res.Block = runtime.GOMAXPROCS(0), r.Block
	}
	if err := writeReport(o.json, out, res, writeBenchChannelize); err != nil {
		return fmt.Errorf("bench channelize: %w", err)
	}
	return nil
}

// writeBenchChannelize prints bench channelize's result as one line.
func writeBenchChannelize(w io.Writer, res benchChannelizeResult) error {
	on := res.Backend
	if res.Device != "" {
		on += " (" + res.Device + ")"
	}
	if res.Cores > 0 {
		on += fmt.Sprintf(" (%d cores, blocks of %d)", res.Cores, res.Block)
	}
	if !res.Complex {
		on += ", real input"
	}
	if res.Path != "" {
		on += ", path " + res.Path
	}
	_, err := fmt.Fprintf(w, "channelize on %s: %s  samples=%d frames=%d best=%.3f ms  %.3f GS/s in (best of %d)\n",
		on, res.Chain, res.Samples, res.OutFrames, res.Seconds*1e3, res.InGSps, res.Reps)
	return err
}
