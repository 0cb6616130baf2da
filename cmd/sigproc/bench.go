package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/filter"
)

// newBenchCmd returns the "bench" parent command; each backend adds a
// subcommand.
func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure throughput and latency",
		Long: `Benchmarks, each a subcommand: cpu and chain time the CPU kernels; fir,
bandwidth and stream the GPU (a binary built with make cuda); channelize
the filter bank on either. Every figure in docs/BENCHMARKS.md names the
command behind it.`,
		Example: `  # The CPU FIR kernel, 129 taps, best of 5
  sigproc bench cpu --taps 129

  # The CPU stage chain: shift + lowpass ÷8 on complex samples
  sigproc bench chain

  # The filter bank, 64 channels × 16 taps, on one CPU core
  GOMAXPROCS=1 sigproc bench channelize --channels 64

  # GPU builds only: batch FIR sweep, copies, streaming, the filter bank
  build/sigproc-cuda bench fir --png fir.png
  build/sigproc-cuda bench bandwidth --json bw.json
  build/sigproc-cuda bench stream --complex --size 2GiB
  build/sigproc-cuda bench channelize --backend cuda --channels 1024`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newBenchCPUCmd(), newBenchChainCmd(), newBenchFIRCmd(), newBenchBandwidthCmd(), newBenchStreamCmd(), newBenchChannelizeCmd())
	return cmd
}

// benchCPUOptions are the flags of "bench cpu".
type benchCPUOptions struct {
	overwrite bool // replace an existing output file (checkNew)
	taps      int
	tapsFile  string
	samples   int
	block     int
	complex   bool
	reps      int
	seed      uint64
	json      string // writeReport's json (jsonFlag)
	input     string
	output    string
	method    string
}

// benchCPUResult is the --json output of "bench cpu".
type benchCPUResult struct {
	Taps    int     `json:"taps"`
	Block   int     `json:"block"`
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	MSPS    float64 `json:"msps"`
	Complex bool    `json:"complex"`
	Kernel  string  `json:"kernel"`
	Method  string  `json:"method"`
	Reps    int     `json:"reps"`
}

// maxBenchValues caps the generated input (two buffers of float32).
const maxBenchValues = 1 << 28

func newBenchCPUCmd() *cobra.Command {
	var o benchCPUOptions
	cmd := &cobra.Command{
		Use:   "cpu",
		Short: "Time the CPU FIR filter on random input",
		Long: `Time filter.FIR.Process over seeded random input, fed in blocks, and
report the best of --reps runs in mega-samples per second (complex
samples count as one). Taps are a 0.1·fs Hamming lowpass of --taps
length unless --taps-file names a taps file. --input replaces the random
input with a raw little-endian float32 file (its length sets the sample
count) and --output writes the filtered result in the same format, so
other tools can check it.`,
		Example: `  # 129 taps on 16 Mi real samples in 64 Ki blocks
  sigproc bench cpu --taps 129

  # complex samples, a long filter by FFT, JSON for scripts
  sigproc bench cpu --taps 4097 --complex --method fft --json

  # filter a raw float32 file and keep the result, to check against scipy
  sigproc bench cpu --input x.f32 --output y.f32 --taps-file taps.txt`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := runBenchCPU(o)
			if err != nil {
				return err
			}
			if err := writeReport(o.json, cmd.OutOrStdout(), res, writeBenchCPU); err != nil {
				return fmt.Errorf("bench cpu: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.taps, "taps", 129, "number of filter taps (ignored with --taps-file)")
	f.StringVar(&o.tapsFile, "taps-file", "", "read taps from this file instead of designing them")
	f.IntVar(&o.samples, "samples", 4194304, "samples to filter per run (IQ pairs with --complex)")
	f.IntVar(&o.block, "block", 4096, "samples per Process call (IQ pairs with --complex)")
	f.BoolVar(&o.complex, "complex", false, "filter interleaved I/Q input")
	f.IntVar(&o.reps, "reps", 3, "runs to time; the best is reported")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the random input")
	jsonFlag(cmd, &o.json)
	f.StringVar(&o.input, "input", "", "raw little-endian float32 input file (overrides --samples and --seed)")
	f.StringVar(&o.output, "output", "", "write the filtered output as raw little-endian float32")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	f.StringVar(&o.method, "method", "auto", "convolution method: auto, direct or fft")
	return cmd
}

func runBenchCPU(o benchCPUOptions) (benchCPUResult, error) {
	switch {
	case o.samples <= 0:
		return benchCPUResult{}, fmt.Errorf("bench cpu: --samples must be > 0, got %d", o.samples)
	case o.block <= 0:
		return benchCPUResult{}, fmt.Errorf("bench cpu: --block must be > 0, got %d", o.block)
	case o.reps <= 0:
		return benchCPUResult{}, fmt.Errorf("bench cpu: --reps must be > 0, got %d", o.reps)
	case o.tapsFile == "" && o.taps <= 0:
		return benchCPUResult{}, fmt.Errorf("bench cpu: --taps must be > 0, got %d", o.taps)
	}
	method, err := filter.ParseMethod(o.method)
	if err != nil {
		return benchCPUResult{}, fmt.Errorf("bench cpu: --method: %w", err)
	}
	if err := checkFileOutputs([]string{o.input, o.tapsFile}, o.overwrite, outputFlag{"--output", o.output}, outputFlag{"--json", o.json}); err != nil {
		return benchCPUResult{}, fmt.Errorf("bench cpu: %w", err)
	}
	ch := 1
	if o.complex {
		ch = 2
	}
	var x []float32
	if o.input != "" {
		var err error
		if x, err = readRawFloat32(o.input, ch); err != nil {
			return benchCPUResult{}, fmt.Errorf("bench cpu: %w", err)
		}
		o.samples = len(x) / ch
	}
	if o.samples > maxBenchValues/ch {
		return benchCPUResult{}, fmt.Errorf("bench cpu: --samples %d exceeds the limit %d", o.samples, maxBenchValues/ch)
	}

	var taps []float32
	if o.tapsFile != "" {
		taps, err = filter.LoadTaps(o.tapsFile)
	} else {
		taps, err = filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: o.taps})
	}
	if err != nil {
		return benchCPUResult{}, fmt.Errorf("bench cpu: taps: %w", err)
	}
	block := min(o.block, o.samples)
	fir, err := filter.NewFIRMethod(taps, o.complex, block, method)
	if err != nil {
		return benchCPUResult{}, fmt.Errorf("bench cpu: %w", err)
	}

	if x == nil {
		x = uniformNoise(o.samples*ch, o.seed)
	}
	y := make([]float32, len(x))

	best := time.Duration(-1)
	step := block * ch
	for range o.reps {
		fir.Reset()
		start := time.Now()
		for pos := 0; pos < len(x); pos += step {
			end := min(pos+step, len(x))
			if err := fir.Process(y[pos:end], x[pos:end]); err != nil {
				return benchCPUResult{}, fmt.Errorf("bench cpu: process at sample %d: %w", pos/ch, err)
			}
		}
		if d := time.Since(start); best < 0 || d < best {
			best = d
		}
	}
	if best <= 0 {
		return benchCPUResult{}, errors.New("bench cpu: run too short to time; raise --samples")
	}
	if o.output != "" {
		if err := writeRawFloat32(o.output, y); err != nil {
			return benchCPUResult{}, fmt.Errorf("bench cpu: %w", err)
		}
	}
	sec := best.Seconds()
	return benchCPUResult{
		Taps:    len(taps),
		Block:   block,
		Samples: o.samples,
		Seconds: sec,
		MSPS:    float64(o.samples) / sec / 1e6,
		Complex: o.complex,
		Kernel:  fir.Kernel(),
		Method:  fir.Method().String(),
		Reps:    o.reps,
	}, nil
}

// readRawFloat32 reads a little-endian float32 file holding a whole
// number of samples of ch values.
func readRawFloat32(path string, ch int) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("input %s: not a regular file (a device or pipe has no length to check)", path)
	}
	// Bounded, so that a huge file fails instead of exhausting memory.
	b, err := io.ReadAll(io.LimitReader(f, 4*maxBenchValues+1))
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if len(b) > 4*maxBenchValues {
		return nil, fmt.Errorf("input %s: more than %d values exceeds the limit", path, maxBenchValues)
	}
	if len(b) == 0 || len(b)%(4*ch) != 0 {
		return nil, fmt.Errorf("input %s: %d bytes is not a positive whole number of %d-byte samples", path, len(b), 4*ch)
	}
	if len(b)/4 > maxBenchValues {
		return nil, fmt.Errorf("input %s: %d values exceeds the limit %d", path, len(b)/4, maxBenchValues)
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

// writeRawFloat32 writes y as little-endian float32; the path was checked
// against the inputs (checkOutputs) before the command started.
func writeRawFloat32(path string, y []float32) error {
	b := make([]byte, 4*len(y))
	for i, v := range y {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// uniformNoise returns n values uniform in [-1, 1) from a PCG seeded with
// seed: the random input every bench command times by default, the same
// values for the same seed.
func uniformNoise(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	return x
}

// writeBenchCPU prints bench cpu's result as one line.
func writeBenchCPU(w io.Writer, res benchCPUResult) error {
	kind := "real"
	if res.Complex {
		kind = "complex"
	}
	_, err := fmt.Fprintf(w, "cpu fir: taps=%d block=%d samples=%d best=%.2f ms  %.1f MS/s (%s, method %s, kernel %s, best of %d)\n",
		res.Taps, res.Block, res.Samples, res.Seconds*1e3, res.MSPS, kind, res.Method, res.Kernel, res.Reps)
	return err
}
