package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/assemble"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
)

// benchStreamOptions are the flags of "bench stream".
type benchStreamOptions struct {
	overwrite   bool // replace an existing output file (checkNew)
	source      string
	sourceSet   bool
	input       string
	output      string
	size        sizeFlag
	block       sizeFlag
	slots       int
	taps        int
	tapsSet     bool
	tapsFile    string
	complex     bool
	verify      string
	json        string
	progress    bool
	progressSet bool
	device      int
	ptxDir      string
	seed        uint64
	refSize     sizeFlag
	refReps     int
	pinSource   bool
	method      string
}

func newBenchStreamCmd() *cobra.Command {
	o := benchStreamOptions{size: 2 << 30, block: 1 << 20, slots: 16, refSize: 256 << 20}
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Run's engine on the GPU from memory, a generator or a file: input GiB/s against pinned H2D",
		Long: `Stream samples through sigproc run's engine with the CUDA backend's
explicit transport and report the input rate against a pinned
host-to-device copy measured on the same GPU just before.

This is the path of ` + "`sigproc run --backend cuda`" + ` with large blocks: the
source fills pinned ring slots (large reads are split over several
goroutines), up to 8 blocks are in flight on three CUDA streams (copies
in, kernels, copies back: each overlaps the others), and the sink takes them in order. Drops
and Ctrl-C mean what they mean for run: nothing is dropped (the source
waits for a free slot), and Ctrl-C filters the blocks already read,
flushes the sink and prints the figures so far.

Sources (--source):
  memory     (default) --size bytes of seeded noise in host memory. The
             headline: it should reach 80 % of the pinned H2D rate.
  synthetic  --size bytes of a tone generated block by block (the CPU
             generator bounds the rate).
  file       --input FILE, raw little-endian float32 (interleaved I/Q with
             --complex); from the page cache this is a file run's rate.
--output FILE writes the filtered samples (raw float32); otherwise they are
counted and discarded.

--verify checks the output against the CPU filter: "sample" (default) the
first two blocks and, with the memory source, a middle block and the last
two; "all" every sample (memory source); "none" skips it. It fails above
1e-5 of the output RMS. The figures exclude the backend's startup (GPU
context, kernels, pinned buffers), which is reported apart.

Needs the CUDA build (make cuda; build/sigproc-cuda).`,
		Example: `  # the headline: 2 GiB from host memory, complex, JSON too
  sigproc-cuda bench stream --complex --json stream.json

  # a recording in the page cache, filtered to a file
  sigproc-cuda bench stream --input big.cf32 --complex --output filtered.cf32

  # smaller blocks, a deeper ring
  sigproc-cuda bench stream --block 256Ki --slots 32`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			o.sourceSet, o.tapsSet, o.progressSet = fl.Changed("source"), fl.Changed("taps"), fl.Changed("progress")
			return runBenchStream(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.source, "source", gpubench.StreamMemory, "input: memory, synthetic or file (--input implies file)")
	f.StringVar(&o.input, "input", "", "raw little-endian float32 input file (interleaved I/Q with --complex)")
	f.StringVar(&o.output, "output", "", "write the filtered samples to this raw float32 file")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	f.Var(&o.size, "size", "input bytes for the memory and synthetic sources, e.g. 2GiB, 512MiB")
	f.Var(&o.block, "block", "samples per block (I/Q pairs with --complex), e.g. 1Mi, 262144")
	f.IntVar(&o.slots, "slots", o.slots, "ring slots, a power of two (half of them at most are in flight on the GPU)")
	f.IntVar(&o.taps, "taps", 129, "taps of the designed 0.1·fs Hamming lowpass (ignored with --taps-file)")
	f.StringVar(&o.tapsFile, "taps-file", "", "filter with the taps in this file (as written by sigproc design)")
	f.BoolVar(&o.complex, "complex", false, "interleaved I/Q samples, both components filtered with the same taps")
	f.StringVar(&o.verify, "verify", gpubench.VerifySample, "check the output against the CPU filter: none, sample or all")
	jsonFlag(cmd, &o.json)
	f.BoolVar(&o.progress, "progress", false, "show progress on stderr even when it is not a terminal (--progress=false hides it)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.ptxDir, "ptx-dir", "", "load fir.ptx and batch.ptx from this directory instead of the embedded kernels (as cuda.ptx_dir)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the memory source's noise")
	f.Var(&o.refSize, "ref-size", "bytes per copy of the pinned H2D reference measurement")
	f.IntVar(&o.refReps, "ref-reps", 10, "copies of the pinned H2D reference measurement (0 skips it)")
	f.StringVar(&o.method, "method", "auto", "how the explicit transport convolves: direct, fft (overlap-save with cuFFT) or auto (fft from "+fmt.Sprint(cuda.FFTCrossoverTaps)+" taps up)")
	f.BoolVar(&o.pinSource, "pin-source", false, "take blocks in place from the source's memory, pinned in windows, instead of copying them (cuda.pin_source)")
	return cmd
}

// config checks the flags and returns the stream's configuration.
func (o benchStreamOptions) config() (gpubench.StreamConfig, error) {
	if o.input != "" && !o.sourceSet {
		o.source = gpubench.StreamFile
	}
	ch := int64(1)
	if o.complex {
		ch = 2
	}
	method, merr := filter.ParseMethod(o.method)
	if merr != nil {
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --method: %w", merr)
	}
	switch o.source {
	case gpubench.StreamMemory, gpubench.StreamSynthetic, gpubench.StreamFile:
	default:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --source %q: want memory, synthetic or file", o.source)
	}
	l := pipeline.Layout{BlockSize: int(o.block), Channels: int(ch), Slots: o.slots}
	switch {
	case o.source == gpubench.StreamFile && o.input == "":
		return gpubench.StreamConfig{}, errors.New("bench stream: --source file needs --input FILE")
	case o.source != gpubench.StreamFile && o.input != "":
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --input is for --source file, not %s", o.source)
	case o.source != gpubench.StreamFile && int64(o.size) < 4*ch:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --size %d bytes is less than one sample", o.size)
	case l.Validate() != nil:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --block %d, --slots %d: %w", o.block, o.slots, l.Validate())
	case o.tapsFile != "" && o.tapsSet:
		return gpubench.StreamConfig{}, errors.New("bench stream: use --taps or --taps-file, not both")
	case o.tapsFile == "" && (o.taps < 1 || o.taps > maxBenchTaps(method, o.taps)):
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --taps %d out of range (1 to %d with --method %s)", o.taps, maxBenchTaps(method, o.taps), method)
	case o.verify != gpubench.VerifyNone && o.verify != gpubench.VerifySample && o.verify != gpubench.VerifyAll:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --verify %q: want none, sample or all", o.verify)
	case o.verify == gpubench.VerifyAll && o.source != gpubench.StreamMemory:
		return gpubench.StreamConfig{}, errors.New("bench stream: --verify all needs --source memory (a streamed input is not kept); use sample")
	case o.refReps < 0:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --ref-reps must be >= 0, got %d", o.refReps)
	case o.refReps > 0 && (o.refSize < gpubench.MinBandwidthSize || o.refSize%4096 != 0):
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --ref-size %d must be a whole number of 4 KiB pages, at least 1MiB", o.refSize)
	case o.device < 0:
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: --device must be >= 0, got %d", o.device)
	}
	inputs := append([]string{o.input, o.tapsFile}, assemble.PTXInputs(o.ptxDir)...)
	if err := checkFileOutputs(inputs, o.overwrite, outputFlag{"--output", o.output}, outputFlag{"--json", o.json}); err != nil {
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: %w", err)
	}
	var taps []float32
	var err error
	if o.tapsFile != "" {
		if taps, err = filter.LoadTaps(o.tapsFile); err == nil && len(taps) > maxBenchTaps(method, len(taps)) {
			err = fmt.Errorf("%s has %d taps, method %s takes at most %d", o.tapsFile, len(taps), method, maxBenchTaps(method, len(taps)))
		}
	} else {
		taps, err = filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: o.taps})
	}
	if err != nil {
		return gpubench.StreamConfig{}, fmt.Errorf("bench stream: %w", err)
	}
	return gpubench.StreamConfig{
		Device: o.device, Taps: taps, Complex: o.complex, Block: int(o.block), Slots: o.slots,
		PTXDir: o.ptxDir, Source: o.source, Input: o.input, Output: o.output,
		Bytes: int64(o.size), Seed: o.seed, Verify: o.verify, RefBytes: int64(o.refSize), RefReps: o.refReps,
		PinSource: o.pinSource, Method: method,
	}, nil
}

func runBenchStream(ctx context.Context, o benchStreamOptions, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if !cuda.Built() {
		return fmt.Errorf("bench stream: %w", cuda.ErrNotBuilt)
	}
	show := isTerminal(errw)
	if o.progressSet {
		show = o.progress
	}
	if show {
		total := int64(0)
		if cfg.Source != gpubench.StreamFile {
			total = cfg.Bytes / 4
			if cfg.Complex {
				total /= 2
			}
		}
		bar := newProgress(errw, total, "streaming", true)
		defer bar.stop()
		cfg.Progress = bar.update
	}
	rep, runErr := gpubench.Stream(ctx, cfg)
	if runErr != nil && rep.SamplesOut == 0 {
		return runErr
	}
	if err := reportStream(o, rep, out); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		return runErr
	}
	if rep.Verified != nil && !*rep.Verified {
		return fmt.Errorf("bench stream: GPU output differs from the CPU filter: max error %.3g of the output RMS > %g", rep.VerifyErr, gpubench.Tolerance)
	}
	return nil
}

// reportStream writes the text (or JSON) report.
func reportStream(o benchStreamOptions, rep gpubench.StreamResult, out io.Writer) error {
	if err := writeReport(o.json, out, rep, writeStreamText); err != nil {
		return fmt.Errorf("bench stream: %w", err)
	}
	return nil
}

func writeStreamText(w io.Writer, rep gpubench.StreamResult) error {
	var b strings.Builder
	kind := "real"
	if rep.Complex {
		kind = "complex (I/Q)"
	}
	fmt.Fprintf(&b, "device: %s, %s, method %s\n", rep.Device, rep.Transport, rep.Method)
	fmt.Fprintf(&b, "source: %s\nsink:   %s\n", rep.Source, rep.Sink)
	fmt.Fprintf(&b, "filter: %d taps, %s samples; blocks of %d samples, %d ring slots\n", rep.Taps, kind, rep.Block, rep.Slots)
	status := "ok"
	if rep.Drops != 0 {
		status = "DROPS"
	}
	if rep.Interrupted {
		status += " (interrupted)"
	}
	fmt.Fprintf(&b, "samples: %d in, %d out, %d dropped: %s\n", rep.SamplesIn, rep.SamplesOut, rep.Drops, status)
	fmt.Fprintf(&b, "stream: %.1f ms (after %.0f ms of startup), %.2f GiB/s in (%.2f GiB/s in+out), %.2f GS/s; source busy %.0f%%, sink busy %.0f%%\n",
		rep.WallSeconds*1e3, rep.StartupSeconds*1e3, rep.InGiBps, rep.InOutGiBps, rep.GSps, 100*rep.SourceBusy, 100*rep.SinkBusy)
	if p := rep.PinnedH2D; p != nil {
		fmt.Fprintf(&b, "pinned H2D on this GPU (%s x %d): %.2f GiB/s; stream = %.1f%% of it (target %.0f%%: %s)\n",
			humanBytes(p.Bytes), p.Reps, p.GiBps, 100*rep.PinnedFraction, 100*rep.Target, passFail(rep.PinnedFraction >= rep.Target))
	}
	switch {
	case rep.Verified != nil:
		fmt.Fprintf(&b, "verify (%s): max error %.2g of the output RMS: %s\n", rep.Verify, rep.VerifyErr, passFail(*rep.Verified))
	case rep.Verify == gpubench.VerifyNone:
		fmt.Fprintf(&b, "verify: skipped\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}
