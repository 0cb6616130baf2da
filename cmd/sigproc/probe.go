package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/assemble"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/probe"
	"github.com/sigproc/sigproc/stage"
)

type probeFlags struct {
	overwrite  bool // replace an existing output file (checkNew)
	config     string
	blocks     int
	warmup     int
	period     time.Duration
	blockSize  int
	taps       int
	complex    bool
	paths      string
	jsonPath   string
	pngPath    string
	sweep      bool
	sweepBlock string
	sweepTaps  string
	seed       uint64
	stallAt    int64
	watchdog   time.Duration
	wc         bool
	noDemote   bool
	timing     bool
	split      int
	slots      int
	duration   time.Duration
	interval   time.Duration
	verifyN    int
	staged     bool
	retune     time.Duration
	retuneSpin bool
	channels   int
	cpuProfile string
	trace      string
	traceStall string
	stallOver  time.Duration
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Measure end-to-end block latency of the zero-copy and explicit-copy GPU paths in one run",
		Long: `probe sends blocks of seeded noise from a paced source through each path in turn
(same input, same taps) and reports end-to-end latency per block: from the capture
timestamp at the ring write to the moment the host sees the filtered block.
Every output block is checked against a CPU FIR (relative error <= 1e-5), on a
goroutine of its own so the check does not delay the timed path; any mismatch
fails the run. Paths: zero-copy (persistent kernel polling mapped host
memory), explicit (pinned staging, copy, launch, copy, sync), explicit-pageable
(the same from ordinary memory) and cpu.

The period defaults to block_size / source.sample_rate of the config, so a
256-sample block at 25.6 MS/s is one block every 10 µs. A paced path that
drops a block (ring full: it did not keep up) prints its figures and fails
(exit status 1), as its latencies leave those blocks out; --period 0 drops
on purpose and does not fail.

Latency from the first sample: the end-to-end figures start when a block's
last sample is in. A live ADC's first sample of the block is older by the
time to fill the block, (block_size − 1) / sample_rate (the config's
source.sample_rate, else one block per --period). Each result line adds
"from first sample p50 … p99 … µs (fill … µs)", and the JSON has
fill_us and from_first_sample; this is how block size trades against
latency.

The zero-copy path's source writes each block straight into the mapped
ring's tagged words once the block is due, and the block's timestamp is
taken when its words are written (as a capture that writes the mapped
slot itself would have them at arrival). Its values are drawn before the
block is due. A block that starts more than a period after its time is
counted late, and a result with late blocks says so, with the pace the
source kept (one block per … µs): its latencies were taken at that slower
pace, not --period's (a busy CPU, or a block whose words take longer to
write than a period). --staged-input makes it go
through a float32 staging slot copied into the mapped ring at publish
time, after the timestamp, instead (the path before capture wrote mapped
slots directly), to measure that copy in one run.

Soak mode: --duration D measures each path for D of wall clock (after the
warmup) instead of --blocks blocks, in --interval long intervals (default 1m,
or D if shorter). A line per interval is printed as it ends: blocks, drops,
gaps, verified blocks, mismatches, max relative error and p50/p90/p99/p99.9/max
µs (from a 10 ns-bucket histogram, so memory stays constant), and the blocks
over 100 µs when there are any; the summary gives them per million. The run fails
(exit status 1) if any interval dropped a block, any block mismatched or a
block the check should have compared went unverified (a paced source keeps
the input of a second of blocks, up to 262 144: a longer stall loses it, and
a chain's check, which cannot re-prime, stops there); an interrupted soak
fails too. --verify-every N compares 1 block in N with the CPU
reference (default every block; a chain is always checked block by block).
A check slower than the period fills its queue and then holds the consumer
back (a 2048-sample complex block through 129 taps took ~45 µs on one core
of an H100 host), so blocks drop: check 1 in N there. --json holds every interval and the totals.`,
		Example: `  # The acceptance run: 256 samples, 64 taps, one block every 10 µs, both GPU paths
  sigproc-cuda probe -c configs/probe.yaml --json probe.json --png probe.png

  # Without a config: 4096-sample blocks, 129 taps, as fast as possible
  sigproc-cuda probe --block-size 4096 --taps 129 --period 0

  # Sweep block sizes and tap counts (fewer blocks per point)
  sigproc-cuda probe --sweep --blocks 2000 --json sweep.json

  # CPU only (works in the pure-Go build)
  sigproc probe --paths cpu --blocks 2000

  # 8 complex channels per frame through the zero-copy kernel
  sigproc-cuda probe -c configs/probe.yaml --paths zero-copy --channels 8 --complex --blocks 20000

  # Zero-copy latency while the taps change every 10 ms (every block checked)
  sigproc-cuda probe -c configs/probe.yaml --paths zero-copy --retune-every 10ms --blocks 20000

  # A chain's shift retuned every 10 ms on the zero-copy path (every block checked)
  sigproc-cuda probe -c configs/probe-chain.yaml --complex --paths zero-copy --retune-every 10ms --blocks 20000

  # Soak: 10 minutes of the paced zero-copy path, a report line per minute
  sigproc-cuda probe -c configs/probe.yaml --paths zero-copy --duration 10m --interval 1m --json soak.json

  # The same, keeping a Go execution trace of the first block over 1 ms (or drop), then reading it
  sigproc-cuda probe -c configs/probe.yaml --paths zero-copy --duration 10m --trace-stall stall.trace
  go run ./bench/traceuse -gaps 20 stall.trace`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProbe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.config, "config", "c", "", "config file (block_size, ring_slots, filter, cuda, realtime, source.sample_rate for the period)")
	fl.IntVar(&f.blocks, "blocks", 10000, "measured blocks per path")
	fl.IntVar(&f.warmup, "warmup", 1000, "unmeasured blocks sent first")
	fl.DurationVar(&f.period, "period", -1, "time between blocks (e.g. 10us; 0 = as fast as possible; default from the config, else 10us)")
	fl.IntVar(&f.blockSize, "block-size", 0, "samples per block (default: config, else 256)")
	fl.IntVar(&f.taps, "taps", 0, "design a lowpass of this many taps instead of the config's filter (default without config: 64)")
	fl.BoolVar(&f.complex, "complex", false, "complex (I/Q) samples")
	fl.StringVar(&f.paths, "paths", "", "comma-separated paths (default: zero-copy,explicit with CUDA, cpu without)")
	fl.StringVar(&f.jsonPath, "json", "", "write the report as JSON to this file")
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	fl.StringVar(&f.pngPath, "png", "", "write a latency histogram PNG to this file")
	fl.BoolVar(&f.sweep, "sweep", false, "sweep block sizes and tap counts")
	fl.StringVar(&f.sweepBlock, "sweep-blocks", "64,256,1024,4096,8192", "block sizes for --sweep")
	fl.StringVar(&f.sweepTaps, "sweep-taps", "16,64,129,512", "tap counts for --sweep")
	fl.Uint64Var(&f.seed, "seed", 1, "input noise seed")
	fl.Int64Var(&f.stallAt, "inject-stall", 0, "fault injection: the zero-copy kernel hangs at this block (tests the watchdog)")
	fl.IntVar(&f.split, "split", 0, "zero-copy kernel: lanes per output pair, a power of two up to 32 (0 = automatic)")
	fl.IntVar(&f.slots, "ring-slots", 0, "ring depth in blocks, a power of two (default: config's ring_slots, else 64)")
	fl.BoolVar(&f.wc, "write-combined", false, "map the zero-copy input ring write-combined")
	fl.BoolVar(&f.noDemote, "no-demote", false, "zero-copy: skip the CLDEMOTE of each written input line (for A/B)")
	fl.BoolVar(&f.timing, "gpu-timing", false, "record GPU-side compute time per block (zero-copy) for the latency breakdown")
	fl.DurationVar(&f.watchdog, "watchdog", 0, "GPU watchdog (default: config's cuda.watchdog_ms, else 2s)")
	fl.DurationVar(&f.duration, "duration", 0, "soak: measure each path for this long (e.g. 10m) instead of --blocks blocks")
	fl.DurationVar(&f.interval, "interval", 0, "soak: report every this long (default 1m, or --duration if shorter)")
	fl.BoolVar(&f.staged, "staged-input", false, "zero-copy: copy each block from a staging slot into the mapped ring at publish time (the old path, for A/B)")
	fl.IntVar(&f.verifyN, "verify-every", 1, "compare 1 block in N with the CPU reference (1 = every block)")
	fl.IntVar(&f.channels, "channels", 1, "channels per frame, each filtered on its own (each complex with --complex)")
	fl.BoolVar(&f.retuneSpin, "retune-spin", false, "with --retune-every: wait for each retune by spinning, not sleeping, so the Retune call runs on a core that is awake (an A/B of the call's own time)")
	fl.StringVar(&f.cpuProfile, "cpu-profile", "", "write a Go CPU profile of the probe to `FILE`, to read with go tool pprof (refused if it exists, unless --overwrite)")
	fl.StringVar(&f.trace, "trace", "", "write a Go execution trace of the probe to `FILE`: each goroutine's runs and waits, and a retune's steps as regions (summarised by go run ./bench/traceuse FILE; refused if it exists, unless --overwrite)")
	fl.StringVar(&f.traceStall, "trace-stall", "", "keep up to the last 2 s of a Go execution trace in memory and write it to `FILE` at the first block over --stall-over or after dropped blocks (0.1 s after it): what the process did in a soak's rare stall (go run ./bench/traceuse -gaps 20 FILE; refused if it exists, unless --overwrite)")
	fl.DurationVar(&f.stallOver, "stall-over", probe.DefaultStallOver, "with --trace-stall: the latency that counts as a stall")
	fl.DurationVar(&f.retune, "retune-every", 0, "retune this often while measuring (e.g. 10ms): a filter between its taps and a second set, a chain's first shift between its frequency and the opposite (else its first fir's taps); every block is still checked, and the result gives the time from each retune to its first block")
	return cmd
}

// soakSettings checks the soak flags and returns the measured block count
// and the interval: blocks is 0 in the soak mode.
func soakSettings(cmd *cobra.Command, f probeFlags) (blocks int, interval time.Duration, err error) {
	changed := cmd.Flags().Changed
	switch {
	case f.duration < 0:
		return 0, 0, fmt.Errorf("--duration: must be > 0, got %v", f.duration)
	case f.verifyN < 1:
		return 0, 0, fmt.Errorf("--verify-every: must be >= 1, got %d", f.verifyN)
	case f.duration == 0 && changed("interval"):
		return 0, 0, errors.New("--interval needs --duration (it splits a soak into intervals)")
	case f.duration == 0:
		return f.blocks, 0, nil
	case changed("blocks"):
		return 0, 0, errors.New("--blocks and --duration are exclusive: give a block count or a soak duration")
	case f.sweep:
		return 0, 0, errors.New("--sweep and --duration are exclusive: a soak measures one geometry")
	case f.pngPath != "":
		return 0, 0, errors.New("--png needs the block-count mode: a soak keeps a histogram, not every latency (see --json)")
	case f.interval < 0:
		return 0, 0, fmt.Errorf("--interval: must be > 0, got %v", f.interval)
	case f.interval > f.duration:
		return 0, 0, fmt.Errorf("--interval %v is longer than --duration %v", f.interval, f.duration)
	}
	interval = f.interval
	if interval == 0 {
		interval = min(time.Minute, f.duration)
	}
	return 0, interval, nil
}

func runProbe(cmd *cobra.Command, f probeFlags) (err error) {
	log := loggerFrom(cmd)
	cfg := &config.Config{}
	rate := 0.0
	var inputs []string
	if f.config != "" {
		var err error
		if cfg, err = config.Load(f.config); err != nil {
			return err
		}
		rate = cfg.Source.SampleRate
		inputs = assemble.ConfigInputs(cfg, f.config)
	} else {
		cfg.SetDefaults()
	}
	if err := checkFileOutputs(inputs, f.overwrite, outputFlag{"--json", f.jsonPath}, outputFlag{"--png", f.pngPath},
		outputFlag{"--cpu-profile", f.cpuProfile}, outputFlag{"--trace", f.trace}, outputFlag{"--trace-stall", f.traceStall}); err != nil {
		return err
	}
	if f.stallOver <= 0 {
		return fmt.Errorf("--stall-over: must be > 0, got %v", f.stallOver)
	}
	block := cfg.BlockSize
	if f.blockSize > 0 {
		block = f.blockSize
	}
	if block <= 0 {
		block = 256
	}
	period := f.period
	if period < 0 {
		period = 10 * time.Microsecond
		if rate > 0 {
			period = time.Duration(float64(block) / rate * 1e9)
		}
	}
	complex := f.complex || cfg.Source.Complex
	if f.split < 0 || f.split > 32 || f.split&(f.split-1) != 0 {
		return fmt.Errorf("--split: want 0 or a power of two up to 32, got %d", f.split)
	}
	if f.channels < 1 || f.channels > capture.MaxChannels {
		return fmt.Errorf("--channels: must be in 1..%d, got %d", capture.MaxChannels, f.channels)
	}
	rt, err := assemble.Realtime(cfg) // the producer thread's; before any device is opened
	if err != nil {
		return err
	}
	if f.watchdog > 0 {
		cfg.CUDA.WatchdogMS = int(f.watchdog / time.Millisecond)
	}
	blocks, interval, err := soakSettings(cmd, f)
	if err != nil {
		return err
	}

	names := f.paths
	if names == "" {
		names = "cpu"
		if cuda.Built() {
			names = "zero-copy,explicit"
		}
	}
	pathNames := strings.Split(names, ",")
	for _, n := range pathNames {
		if n != "cpu" {
			if _, err := cuda.ParseTransport(n); err != nil || n == "auto" {
				return fmt.Errorf("--paths: unknown path %q (want zero-copy, explicit, explicit-pageable or cpu)", n)
			}
		}
	}

	if f.cpuProfile != "" || f.trace != "" {
		p, err := startProfiles(f.cpuProfile, f.trace, f.overwrite, inputs, "")
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, p.stop()) }()
	}

	type point struct{ block, taps int }
	points := []point{{block, 0}}
	if f.sweep {
		bs, err := parseInts(f.sweepBlock, "--sweep-blocks")
		if err != nil {
			return err
		}
		ts, err := parseInts(f.sweepTaps, "--sweep-taps")
		if err != nil {
			return err
		}
		points = points[:0]
		for _, b := range bs {
			for _, t := range ts {
				points = append(points, point{b, t})
			}
		}
	}

	var stalls *stallTrace
	if f.traceStall != "" {
		if stalls, err = startStallTrace(f.traceStall, f.overwrite); err != nil {
			return err
		}
		defer func() {
			what, e := stalls.stop()
			if what != "" {
				fmt.Fprintln(cmd.OutOrStdout(), what)
			}
			err = errors.Join(err, e)
		}()
	}

	var all []probe.Result
	var device string
	if cuda.Built() {
		if info, err := cuda.Probe(assemble.GPUOptions(cfg, log)); err == nil {
			device = info.String()
		}
	}
	for _, pt := range points {
		ntaps := pt.taps
		if ntaps == 0 {
			ntaps = f.taps
		}
		chain, err := assemble.ProbeChain(cfg, f.config != "", ntaps, f.seed, rate, complex)
		if err != nil {
			return err
		}
		chain.Channels = f.channels
		taps, _ := chain.PlainFIR()
		pc := probe.Config{BlockSize: pt.block, Taps: taps, Complex: complex, Blocks: blocks, Warmup: f.warmup,
			Period: period, Slots: cfg.RingSlots, Seed: f.seed,
			Duration: f.duration, Interval: interval, VerifyEvery: f.verifyN, Realtime: rt,
			SampleRate: rate, StagedInput: f.staged, RetuneEvery: f.retune, RetuneSpin: f.retuneSpin}
		if f.slots > 0 {
			pc.Slots = f.slots
		}
		if stalls != nil {
			pc.OnStall, pc.StallOver = stalls.stalled, f.stallOver
		}
		if taps == nil || chain.Channels > 1 {
			pc.Chain = chain // checked against the CPU chain
			fmt.Fprintf(cmd.OutOrStdout(), "chain: %s (%g S/s in, %g S/s out)\n", chain, chain.SampleRate, chain.OutRate())
		}
		if f.sweep && f.period < 0 && rate > 0 { // keep the config's sample rate
			pc.Period = time.Duration(float64(pt.block) / rate * 1e9)
		}
		var paths []probe.Path
		for _, n := range pathNames {
			paths = append(paths, probePath(n, cfg, chain, pt.block, f, log))
		}
		log.Info().Int("block", pt.block).Str("chain", chain.String()).Float64("period_us", float64(pc.Period)/1e3).Bool("complex", complex).
			Str("paths", names).Msg("probe")
		if f.duration > 0 {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "soak %s: %v in intervals of %v after %d warmup blocks; %d-sample blocks, %s, period %v, verify 1 block in %d\n",
				names, f.duration, interval, f.warmup, pt.block, chain, pc.Period, f.verifyN)
			probe.WriteIntervalHeader(out)
			pc.OnInterval = func(path string, iv probe.Interval) { probe.WriteInterval(out, path, iv) }
		}
		rs, err := probe.Run(cmd.Context(), pc, paths)
		all = append(all, rs...)
		if err != nil {
			writeProbeReport(cmd, f, device, all)
			return err
		}
	}
	if err := writeProbeReport(cmd, f, device, all); err != nil {
		return err
	}
	return probeVerdict(all)
}

// probeVerdict fails a soak that did not run its whole duration, and a
// paced measurement that dropped blocks: its latencies leave out the
// blocks the path could not keep up with (unpaced, --period 0, the source
// outruns every path on purpose). Mismatches, and a soak's losses, are
// already errors from probe.Run.
func probeVerdict(rs []probe.Result) error {
	for _, r := range rs {
		if s := r.Soak; s != nil && !s.Passed {
			return fmt.Errorf("probe %s: soak interrupted after %d intervals of %gs: not a pass", r.Path, len(s.Intervals), s.IntervalS)
		}
		if r.Soak == nil && r.Dropped > 0 && r.PeriodUs > 0 {
			return fmt.Errorf("probe %s: %d blocks of %d samples dropped (ring full): the path did not keep up with one block every %.3g µs, and its latencies leave them out; a longer --period or larger --block-size measures what it sustains",
				r.Path, r.Dropped, r.BlockSize, r.PeriodUs)
		}
	}
	return nil
}

func writeProbeReport(cmd *cobra.Command, f probeFlags, device string, rs []probe.Result) error {
	rep := probe.NewReport(device, rs)
	if device != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "device: %s\n", device)
	}
	rep.WriteTable(cmd.OutOrStdout())
	probe.WriteSoakSummary(cmd.OutOrStdout(), rs)
	if f.jsonPath != "" {
		if err := rep.WriteJSON(f.jsonPath); err != nil {
			return err
		}
	}
	if f.pngPath != "" && len(rs) > 0 {
		title := fmt.Sprintf("sigproc probe: %d-sample blocks, %d taps, period %.1f µs", rs[0].BlockSize, rs[0].Taps, rs[0].PeriodUs)
		if err := probe.WriteHistogram(f.pngPath, title, rs[:min(len(rs), 4)]); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "histogram: %s\n", filepath.Clean(f.pngPath))
	}
	return nil
}

// probePath is one probe path, built by assemble.PathBackend with the
// probe's GPU flags.
func probePath(name string, cfg *config.Config, chain stage.Chain, block int, f probeFlags, log zerolog.Logger) probe.Path {
	return probe.Path{Name: name, New: func() (pipeline.Backend, error) {
		return assemble.PathBackend(name, cfg, chain, block, log, func(o *cuda.Options) {
			o.StallAt = f.stallAt
			o.WriteCombined = o.WriteCombined || f.wc // config or flag
			o.NoDemote = f.noDemote
			o.Timing = f.timing
			o.Split = f.split
		})
	}}
}

func parseInts(s, flag string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}
