package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/assemble"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/metrics"
	"github.com/sigproc/sigproc/pipeline"
)

// runOptions are the flags of "sigproc run".
type runOptions struct {
	config     string
	blockSize  int
	backend    string
	duration   time.Duration
	numSamples countFlag
	sinkPath   string
	sinkType   string
	paced      bool
	noPaced    bool
	overrun    string
	progress   bool
	overwrite  bool
	input      string
	metrics    string
	drainLimit time.Duration
	cpuProfile string
	trace      string
}

const runExample = `  # The quick start: 4 Mi synthetic samples, 129-tap lowpass, SigMF output
  sigproc run configs/synthetic-cpu.yaml

  # The same config on another recording (a file source's path replaced)
  sigproc run configs/file-sigmf.yaml --input other.sigmf-meta --sink-path out/other

  # In a pipe: raw samples in on stdin, out on stdout; the summary and logs go to stderr
  rtl_sdr -f 100e6 -s 2.4e6 - | sigproc run configs/rtl-sdr.yaml --sink-path - | nc host 5000

  # A filter bank: 64 channels of a 2.048 MS/s stream in one SigMF recording
  # (sink.split: true in the config writes a recording per channel)
  sigproc run configs/filterbank.yaml

  # Serve Prometheus metrics while it runs
  sigproc run configs/paced-live.yaml --metrics-listen 127.0.0.1:9100

  # Benchmark: discard the output, larger blocks, 1e8 samples
  sigproc run -c configs/synthetic-cpu.yaml --sink-type null --block-size 65536 --num-samples 1e8

  # Live-style run for 5 s, then stop (Ctrl-C also stops it and prints the summary)
  sigproc run -c configs/paced-live.yaml --duration 5s

  # Write raw float32 instead of SigMF
  sigproc run -c configs/synthetic-cpu.yaml --sink-type file --sink-path out/y.f32`

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run CONFIG | -c CONFIG",
		Short: "Run a filtering pipeline described by a YAML config",
		Long: `Run builds the source, the stages (stages:, or the one FIR of filter:), the
backend and the sink that CONFIG describes, then streams samples through
them until the source ends, the run's bound (duration_s or num_samples) is
reached, or Ctrl-C.

Flags override the config; an invalid override is reported with the flag's
name. On Ctrl-C (or SIGTERM) the blocks already captured are still filtered,
for up to --drain-limit, the sink is flushed and closed, and the summary is
printed; blocks the limit or a second signal leaves unfiltered are counted
as filter drops and, in SigMF, annotated. Exit status: 0 at the source's
end or the bound, 130 after Ctrl-C, 143 after SIGTERM, 141 on a broken
pipe, 1 on an error. SIGHUP does not stop a run: it reloads the config's
stage parameters, so a run started from a terminal that then closes goes
on (give it a bound, or stop it with SIGTERM).

Progress goes to stderr when stderr is a terminal or --progress is given: a
bar with the percentage and time left when the length is known (a file, or
a bound), the rates in and out otherwise. Logs go to stderr; the one-line
summary goes to stdout, or to stderr when stdout carries the samples
(sink.path "-"):

  samples in 4194304  out 4194304  blocks 1024  drops 0 (0 samples)  gaps 0  startup 0.000 s  wall 0.054 s  77.53 MS/s out, 77.53 MS/s in  filtered 4194304  filter drops 0 (0 samples)

"in" counts the samples read from the source, "out" those the sink accepted,
"filtered" those the backend output; "drops" are blocks discarded at capture
(ring full, overrun: drop), "filter drops" blocks put in the ring that never
came out of the backend (it failed or the run aborted), and "gaps" sequence
numbers the sink side never saw. in = drops + filter drops + filtered, all
counted in input samples; with stages that change the rate (decimate,
resample, channelize) "out" counts output samples, frames of every
channel after a channelize. The rates are both given: "MS/s
out" the samples written, "MS/s in" the samples filtered, per second.
"startup" is the backend's start (on a GPU: context, kernels, pinned
buffers); "wall" and the rate count from then on.`,
		Example: runExample,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// SIGHUP reloads the config: from here on it never stops the
			// run, and one received during start-up is applied once the
			// reloads are set up (startReloads).
			claimHangup(cmd.Context())
			if err := configArg(cmd, &o, args); err != nil {
				return err
			}
			return runPipeline(cmd, &o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "YAML config file (or give it as the argument: sigproc run CONFIG)")
	f.StringVar(&o.input, "input", "", `input file, relative to the current directory (overrides source.path of a file source; "-" reads stdin)`)
	f.StringVar(&o.metrics, "metrics-listen", "", "serve metrics on host:port, e.g. 127.0.0.1:9100 (overrides metrics.listen)")
	f.IntVar(&o.blockSize, "block-size", 0, "samples per block (overrides block_size; unset, the block follows the source: 256 for live sources, stdin and zmq; for files 65536 on one CPU core, on more cut into segments of 32768 (262144 on 2 cores, 4194304 on 16), 16 MiB of float32 on a GPU)")
	f.StringVar(&o.backend, "backend", "", "cpu, cuda or auto (overrides backend)")
	f.DurationVar(&o.duration, "duration", 0, "stop after this much signal time, e.g. 10s (overrides duration_s and num_samples)")
	f.Var(&o.numSamples, "num-samples", "stop after this many samples, e.g. 4194304 or 1e6 (overrides num_samples and duration_s)")
	f.StringVar(&o.sinkPath, "sink-path", "", "output path, relative to the current directory (overrides sink.path)")
	f.StringVar(&o.sinkType, "sink-type", "", "file, sigmf, wav, zmq or null (overrides sink.type; a sink.format the type cannot write gives way to its default; zmq takes sink.endpoint and sink.pattern from the config)")
	f.BoolVar(&o.paced, "paced", false, "deliver synthetic samples in real time (overrides source.paced)")
	f.BoolVar(&o.noPaced, "no-paced", false, "generate synthetic samples as fast as possible (overrides source.paced)")
	f.StringVar(&o.overrun, "overrun", "", "block or drop when the ring is full (overrides overrun)")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace existing output files (overrides sink.overwrite)")
	f.DurationVar(&o.drainLimit, "drain-limit", defaultDrainLimit, "after a stop signal, filter the blocks already captured for at most this long, then write what is filtered and stop (0: no limit); under a supervisor keep it well inside its stop timeout (docker stop: 10s)")
	f.StringVar(&o.cpuProfile, "cpu-profile", "", "write a Go CPU profile of the run to `FILE`, to read with go tool pprof (refused if it exists, unless --overwrite)")
	f.StringVar(&o.trace, "trace", "", "write a Go execution trace of the run to `FILE`, to read with go tool trace: what each goroutine and core did when (refused if it exists, unless --overwrite)")
	f.BoolVar(&o.progress, "progress", false, "show progress on stderr even when it is not a terminal (--progress=false hides it)")
	cmd.MarkFlagsMutuallyExclusive("paced", "no-paced")
	cmd.MarkFlagsMutuallyExclusive("duration", "num-samples")
	return cmd
}

// applyOverrides copies the flags that were given into cfg and validates it.
func applyOverrides(cmd *cobra.Command, cfg *config.Config, o *runOptions) (notes []string, err error) {
	changed := func(name string) bool { return cmd.Flags().Changed(name) }
	if o.drainLimit < 0 {
		return nil, fmt.Errorf("--drain-limit: must be >= 0 (0: no limit), got %v", o.drainLimit)
	}
	if changed("block-size") {
		cfg.BlockSize = o.blockSize
		cfg.MarkOverride("block_size", "--block-size")
	}
	if changed("backend") {
		cfg.Backend = o.backend
		cfg.MarkOverride("backend", "--backend")
	}
	// Each bound replaces the other, whichever the file gave.
	if changed("duration") {
		if o.duration <= 0 {
			// 0 in the file means no bound: a flag given is one.
			return nil, fmt.Errorf("--duration: must be > 0 (leave it out to run to the source's end), got %v", o.duration)
		}
		cfg.Source.DurationS = o.duration.Seconds()
		cfg.Source.NumSamples = 0
		cfg.MarkOverride("source.duration_s", "--duration")
		cfg.MarkOverride("source.num_samples", "--duration")
	}
	if changed("num-samples") {
		cfg.Source.NumSamples = int64(o.numSamples)
		cfg.Source.DurationS = 0
		cfg.MarkOverride("source.num_samples", "--num-samples")
		cfg.MarkOverride("source.duration_s", "--num-samples")
	}
	if changed("input") {
		if err := overrideInput(cfg, o.input); err != nil {
			return nil, err
		}
	}
	if changed("metrics-listen") {
		cfg.Metrics.Listen = o.metrics
		cfg.MarkOverride("metrics.listen", "--metrics-listen")
	}
	if changed("sink-type") {
		if f := cfg.SetSinkType(o.sinkType, "--sink-type"); f != "" {
			notes = append(notes, fmt.Sprintf("the config's sink.format %s does not suit --sink-type %s: its default format is used", f, o.sinkType))
		}
	}
	if changed("sink-path") {
		if cfg.Sink.Type == config.SinkNull {
			return nil, fmt.Errorf("--sink-path %q: a null sink writes nothing; leave --sink-path out, or give --sink-type file, sigmf or wav", o.sinkPath)
		}
		cfg.Sink.Path = o.sinkPath
		cfg.MarkOverride("sink.path", "--sink-path")
	}
	if changed("paced") || changed("no-paced") {
		flag := "--paced"
		cfg.Source.Paced = o.paced
		if changed("no-paced") {
			flag = "--no-paced"
			cfg.Source.Paced = !o.noPaced
		}
		cfg.MarkOverride("source.paced", flag)
	}
	if changed("overrun") {
		cfg.Overrun = o.overrun
		cfg.MarkOverride("overrun", "--overrun")
	}
	if changed("overwrite") && cfg.Sink.Type != config.SinkNull {
		cfg.Sink.Overwrite = o.overwrite
		cfg.MarkOverride("sink.overwrite", "--overwrite")
	}
	return notes, cfg.Validate()
}

func runPipeline(cmd *cobra.Command, o *runOptions) (err error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	// A signal before the outputs exist ends the start-up (once whatever
	// step is in progress returns: each one that can wait looks at ctx)
	// with the signal's exit status, and nothing created.
	started := false
	defer func() {
		var sc signalCause
		if err != nil && !started && errors.As(context.Cause(ctx), &sc) {
			err = &startupInterrupted{cause: sc, err: err}
		}
	}()
	cfgFile := statConfig(o.config) // before the read: the watch starts from here
	cfg, err := config.Load(o.config)
	if err != nil {
		return err
	}
	notes, err := applyOverrides(cmd, cfg, o)
	if err != nil {
		return err
	}
	// Checked before any device or output file is opened: whether the CPUs
	// are available to this process depends on the machine, not the file.
	if _, err := assemble.Realtime(cfg); err != nil {
		return err
	}
	if o.cpuProfile != "" || o.trace != "" {
		p, err := startProfiles(o.cpuProfile, o.trace, o.overwrite, assemble.ConfigInputs(cfg, o.config), cfg.Sink.Path)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, p.stop()) }()
	}
	stderr := cmd.ErrOrStderr()
	level, json := logSettings(cmd, cfg.Log.Level, cfg.Log.Format)
	log, err := newLogger(stderr, level, json)
	if err != nil {
		return err
	}
	for _, n := range notes {
		log.Info().Msg(n)
	}
	// Source, chain, sink plan and backend, in assemble's safe order.
	r, err := assemble.Open(ctx, cfg, assemble.Params{ConfigPath: o.config, Stdin: cmd.InOrStdin(),
		Stdout: cmd.OutOrStdout(), Version: version, Log: log})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	// Whenever stdout carries samples, nothing else may go there.
	summaryOut := cmd.OutOrStdout()
	if cfg.Sink.Path == config.StdoutPath {
		summaryOut = stderr
	}
	be, snk := r.Backend, r.Sink
	// Metrics are bound before the sink is created, so a port in use fails
	// the run before it touches any output file; the server is shut down
	// after the summary, once the final stats are published.
	var mx *metrics.Metrics
	if addr := cfg.Metrics.Listen; addr != "" {
		mx = metrics.New(be.Name())
		srv, serr := metrics.Serve(addr, mx.Handler())
		if serr != nil {
			return cfg.Wrap("metrics.listen", serr)
		}
		log.Info().Str("addr", "http://"+srv.Addr()+"/metrics").Msg("serving metrics")
		warnExposed(log, srv)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = errors.Join(err, srv.Shutdown(sctx))
		}()
	}
	// The control server, like metrics, is bound before any output exists.
	rc, mx, err := startControl(ctx, cfg, cfgFile, be, r.Chain, r.Pipeline.Layout().Slots, r.Retuned, mx, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rc.close()) }()
	pcfg := r.Pipeline
	log.Info().
		Str("config", o.config).
		Str("source", assemble.DescribeSource(cfg)).
		Float64("sample_rate", r.Info.SampleRate).
		Bool("complex", r.Info.Complex).
		Int("channels", r.Info.ChannelCount()).
		Int("out_channels", r.Chain.OutChannels()).
		Str("chain", r.Chain.String()).
		Float64("out_rate", r.Chain.OutRate()).
		Int("block_size", pcfg.BlockSize).
		Int("ring_slots", pcfg.Layout().Slots).
		Str("overrun", pcfg.Policy.String()).
		Str("backend", be.Name()).
		Str("sink", assemble.DescribeSink(cfg, r.Format)).
		Int64("max_samples", r.MaxSamples).
		Msg("starting")

	// Outputs are created (a zmq sink bound) once the run has started.
	abort, stopDrainLimit := drainAbort(ctx, o.drainLimit)
	defer stopDrainLimit()
	opts := pipeline.Options{Log: log, Abort: abort, Started: func() error {
		if err := context.Cause(ctx); err != nil {
			return err // stopped during start-up: create nothing
		}
		// A FIFO output waits for its reader; a signal meanwhile is
		// still a stop during start-up.
		if err := r.Started(ctx); err != nil {
			return err
		}
		started = true
		return nil
	}}
	show := isTerminal(stderr)
	if cmd.Flags().Changed("progress") {
		show = o.progress
	}
	var bar *progress
	if show {
		bar = newProgress(stderr, progressTotal(r.Source, r.MaxSamples), "filtering", false)
		opts.Progress = bar.update
		opts.ProgressEvery = 100 * time.Millisecond
	}

	if mx != nil {
		opts = mx.Instrument(opts)
		update := opts.Progress
		opts.Progress = func(st pipeline.Stats) { update(st); mx.SetClipped(snk.Clipped()); mx.SetNonFinite(r.NonFinite()) }
	}

	opts = rc.instrument(opts)
	st, runErr := pipeline.Run(ctx, r.Source, be, snk, pcfg, opts)
	stopDrainLimit() // the drain is over: closing the sink is not cut short
	if bar != nil {
		bar.stop()
	}
	if abort != nil && errors.Is(context.Cause(abort), errDrainLimit) && st.DroppedFilterBlocks > 0 {
		fmt.Fprintf(stderr, "sigproc: still filtering after --drain-limit %v: the %d blocks still queued were not filtered (counted as filter drops); what was filtered is written\n",
			o.drainLimit, st.DroppedFilterBlocks)
	}
	if !started && runErr != nil && context.Cause(ctx) != nil {
		return runErr // stopped during start-up: nothing ran, nothing to summarise
	}
	// A failed write makes the sink's error sticky, so Close repeats it;
	// report it once.
	if cerr := r.Finish(&st); cerr != nil && !errors.Is(runErr, cerr) {
		runErr = errors.Join(runErr, fmt.Errorf("close sink %s: %w", assemble.DescribeSink(cfg, r.Format), cerr))
	}
	if mx != nil {
		mx.Update(st)
		mx.SetClipped(snk.Clipped())
		mx.SetNonFinite(r.NonFinite())
	}
	rc.finish(st)
	summary := st.String() + clipSummary(r.Format, snk)
	if st.Interrupted {
		summary += "  (interrupted)"
		log.Warn().Uint64("samples_out", st.SamplesWritten).Msg("interrupted: output flushed")
	}
	if st.DroppedFilterBlocks > 0 {
		log.Warn().Uint64("blocks", st.DroppedFilterBlocks).Uint64("samples", st.DroppedFilterSamples).
			Msg("blocks dropped at the filter: captured but never filtered")
	}
	if st.SamplesIn == 0 && runErr == nil && !st.Interrupted {
		// Not an error (an empty recording filters to an empty one), but
		// an empty or wrong input file should not pass unnoticed.
		log.Warn().Str("source", assemble.DescribeSource(cfg)).Msg("the source ended before its first sample: the output is empty")
	}
	busyLine(log, st)
	fmt.Fprintln(summaryOut, summary)
	return runErr
}

// startupInterrupted is a run stopped by a signal before it created its
// outputs; it exits with the signal's status.
type startupInterrupted struct {
	cause signalCause
	err   error // what the start-up step in progress returned
}

func (e *startupInterrupted) Error() string {
	msg := fmt.Sprintf("%v during start-up: stopped before any output was created", e.cause.sig)
	if !errors.Is(e.err, e.cause) {
		msg += " (" + e.err.Error() + ")"
	}
	return msg
}

func (e *startupInterrupted) Unwrap() error { return e.err }

// busyLine logs where the run's wall time went: the source's reads, the
// sink's writes and, on a GPU, the copies and kernels; and which of them
// bounds the run.
func busyLine(log zerolog.Logger, st pipeline.Stats) {
	srcBusy, sinkBusy := st.Busy()
	ev := log.Info().Float64("source_busy", round2(srcBusy)).Float64("sink_busy", round2(sinkBusy))
	in, kernel, out, gpu := st.DeviceShares()
	what := "share of the wall time in the source's reads and the sink's writes"
	if gpu {
		ev = ev.Float64("gpu_copy_in_busy", round2(in)).Float64("gpu_kernel_busy", round2(kernel)).Float64("gpu_copy_out_busy", round2(out))
		what = "share of the wall time in the source's reads, the sink's writes, and the GPU's copies and kernels"
	}
	ev.Msg(what + ": " + busyBound(srcBusy, sinkBusy, in, kernel, out))
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// busyNear1 is the share of the wall time from which the source or the
// sink counts as what bounds a run.
const busyNear1 = 0.9

// busyBound says what the busy shares mean: the one near 1 bounds the
// run, the source and sink first (the GPU waits for them); none near 1,
// the backend's host side does (handing blocks over, launching).
func busyBound(src, snk, copyIn, kernel, copyOut float64) string {
	switch {
	case src >= busyNear1 && src >= snk:
		return "the source bounds the run (a paced or live source, or reading is the slowest step)"
	case snk >= busyNear1:
		return "the sink bounds the run (writing is the slowest step)"
	case copyIn >= busyNear1 && copyIn >= copyOut:
		return "the copies to the GPU bound the run (PCIe)"
	case copyOut >= busyNear1:
		return "the copies back from the GPU bound the run (PCIe)"
	case kernel >= busyNear1:
		return "the GPU's kernels bound the run"
	}
	return "none near 1: the backend's host side bounds the run"
}

// countFlag is a sample count flag that accepts integers and exact
// floating-point forms such as 1e6; fractions and negatives are rejected.
type countFlag int64

// String formats the count.
func (c *countFlag) String() string { return strconv.FormatInt(int64(*c), 10) }

// Set parses the flag value.
func (c *countFlag) Set(s string) error {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return fmt.Errorf("must be > 0, got %d", n)
		}
		*c = countFlag(n)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f <= 0 || f >= math.MaxInt64 {
		return fmt.Errorf("want a positive whole number of samples such as 4194304 or 1e6, got %q", s)
	}
	*c = countFlag(f)
	return nil
}

// Type names the flag's value in --help.
func (c *countFlag) Type() string { return "count" }
