package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
	"github.com/sigproc/sigproc/config"
	"github.com/spf13/cobra"
)

// sizeFlag is a byte (or sample) count flag: an integer with an optional
// unit. K, M, G and T, with or without "i" and "B" (KiB, Mi, G), are binary
// (1024-based); kB, MB, GB and TB are decimal. Fractions are allowed when
// the result is a whole number ("1.5GiB").
type sizeFlag int64

// String formats the size in the largest binary unit that divides it.
func (s *sizeFlag) String() string { return formatSize(int64(*s)) }

// Type names the flag's value in --help.
func (s *sizeFlag) Type() string { return "size" }

// Set parses the flag value.
func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// sizeUnits maps unit suffixes (lower-cased) to multipliers.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
}

// parseSize parses a positive size such as 268435456, 256MiB, 4GiB, 16Mi
// or 1.5G.
func parseSize(v string) (int64, error) {
	s := strings.ReplaceAll(strings.TrimSpace(v), "_", "")
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional unit (KiB, MiB, GiB, TiB, or K, M, G, T, all 1024-based; kB, MB, GB, TB are 1000-based)", v)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("invalid size %q: must be > 0", v)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("invalid size %q: too large", v)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %q is not a number", v, num)
	}
	b := f * float64(mult)
	switch {
	case !(b > 0):
		return 0, fmt.Errorf("invalid size %q: must be > 0", v)
	case b >= math.MaxInt64:
		return 0, fmt.Errorf("invalid size %q: too large", v)
	case b != math.Trunc(b):
		return 0, fmt.Errorf("invalid size %q: not a whole number of bytes", v)
	}
	return int64(b), nil
}

// formatSize writes n in the largest binary unit that divides it exactly.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.name)
		}
	}
	return strconv.FormatInt(n, 10)
}

// humanBytes writes n in MiB or GiB with two decimals for tables.
func humanBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// writeReport writes a bench command's result v: as text to w by text,
// unless json is "-", and as JSON to json ("-" = w) unless it is "".
func writeReport[T any](json string, w io.Writer, v T, text func(io.Writer, T) error) error {
	if json != "-" {
		if err := text(w, v); err != nil {
			return err
		}
	}
	if json != "" {
		return writeJSONTo(json, w, v)
	}
	return nil
}

// jsonFlag adds a bench command's --json: bare, the results go to stdout
// as JSON instead of the text; with a file (--json FILE or --json=FILE)
// the text still prints and the JSON goes to the file. *p is then "-",
// the file, or "" without the flag: writeReport's json argument.
func jsonFlag(cmd *cobra.Command, p *string) {
	f := cmd.Flags()
	f.StringVar(p, "json", "", "the results as JSON: bare, on stdout instead of the text; given a `FILE` (--json FILE or --json=FILE), the text prints and the JSON goes there")
	f.Lookup("json").NoOptDefVal = config.StdoutPath
}

// jsonArgs is the Args of a command with jsonFlag: no arguments, except
// the file after a bare --json. A flag whose value is optional takes it
// only after "=", so "--json FILE" leaves FILE as an argument.
func jsonArgs(p *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && *p == config.StdoutPath && cmd.Flags().Changed("json") {
			*p = args[0]
			return nil
		}
		return cobra.NoArgs(cmd, args)
	}
}

// writeJSONTo writes v as indented JSON to path ("-" = w).
func writeJSONTo(path string, w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = w.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// benchBandwidthOptions are the flags of "bench bandwidth".
type benchBandwidthOptions struct {
	overwrite      bool // replace an existing output file (checkNew)
	size           sizeFlag
	reps           int
	warmup         int
	device         int
	json           string
	only           []string
	overlapChunks  int
	overlapStreams []int
	ptx            string
}

func newBenchBandwidthCmd() *cobra.Command {
	o := benchBandwidthOptions{size: 256 << 20}
	cmd := &cobra.Command{
		Use:   "bandwidth",
		Short: "Measure host↔device copy, zero-copy and copy/compute overlap bandwidth",
		Long: `Measure how fast data moves between host memory and the GPU, with CUDA
events around the copies (GiB/s, 1 GiB = 2^30 bytes):

  copy     host-to-device (H2D) and device-to-host (D2H) copies of --size
           bytes, --reps times back to back after --warmup untimed ones,
           from pageable memory (ordinary memory the driver stages through
           its own pinned buffer), pinned memory (cuMemHostAlloc) and
           registered memory (existing pages pinned with cuMemHostRegister).
           Each row has the rate over all reps, the best and median copy
           (each also timed alone) and the host's wall-clock rate. The
           pinned/pageable ratio shows what pinning buys; expect several
           times on a discrete GPU.
  bidir    pinned H2D and D2H at the same time on two streams: PCIe is
           full duplex, so a pipeline that streams in and out at once can
           approach both rates.
  mapped   a kernel (kernels/bw.cu) streaming over mapped pinned host
           memory with 16-byte loads (read) or stores (write): the
           zero-copy bandwidth a kernel sees across PCIe.
  overlap  --size bytes in --overlap-chunks chunks, each H2D → kernel →
           D2H on stream chunk % N for N = --overlap-streams (1, 2, 4). The
           kernel is calibrated to take about as long as the H2D, so one
           stream costs the sum of the three stages and enough streams
           approach the largest one; the speedup column is over 1 stream.

The table goes to stdout; --json FILE writes the same figures as JSON
("-" writes JSON to stdout instead of the table). bench/copy_bandwidth.py
runs the same copies with CuPy and torch in the same run and checks that
the pinned figures agree within 10 %.

Needs the CUDA build (make cuda; build/sigproc-cuda).`,
		Example: `  # everything, 256 MiB x 20 reps
  sigproc-cuda bench bandwidth

  # copies only, 1 GiB x 10, JSON to a file (the table still prints)
  sigproc-cuda bench bandwidth --only copy --size 1GiB --reps 10 --json bw.json

  # JSON on stdout, as bench/copy_bandwidth.py reads it
  sigproc-cuda bench bandwidth --json -

  # overlap with more streams and finer chunks
  sigproc-cuda bench bandwidth --only overlap --overlap-streams 1,2,3,4,8 --overlap-chunks 64`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchBandwidth(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.Var(&o.size, "size", "bytes per copy and per buffer, e.g. 268435456, 256MiB, 1GiB (whole 4 KiB pages, at least 1MiB)")
	f.IntVar(&o.reps, "reps", 20, "timed copies (or passes) per figure")
	f.IntVar(&o.warmup, "warmup", 3, "untimed copies (or passes) before each figure")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	jsonFlag(cmd, &o.json)
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	f.StringSliceVar(&o.only, "only", nil, "run only these tests, comma-separated: "+strings.Join(gpubench.BandwidthTests, ", "))
	f.IntVar(&o.overlapChunks, "overlap-chunks", 16, "chunks the overlap test splits --size into (1 to 256)")
	f.IntSliceVar(&o.overlapStreams, "overlap-streams", []int{1, 2, 4}, "stream counts of the overlap test")
	f.StringVar(&o.ptx, "ptx", "", "load the bandwidth kernels from this PTX file instead of the embedded ones")
	return cmd
}

// config checks the flags and turns them into a gpubench.BandwidthConfig.
func (o benchBandwidthOptions) config() (gpubench.BandwidthConfig, error) {
	switch {
	case o.size < gpubench.MinBandwidthSize:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --size %s is below the minimum 1MiB", formatSize(int64(o.size)))
	case o.size%4096 != 0:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --size %d is not a whole number of 4 KiB pages", o.size)
	case o.reps <= 0:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --reps must be > 0, got %d", o.reps)
	case o.warmup < 0:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --warmup must be >= 0, got %d", o.warmup)
	case o.device < 0:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --device must be >= 0, got %d", o.device)
	case o.overlapChunks < 1 || o.overlapChunks > 256:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --overlap-chunks must be 1 to 256, got %d", o.overlapChunks)
	case len(o.overlapStreams) == 0:
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --overlap-streams is empty")
	}
	if err := checkFileOutputs([]string{o.ptx}, o.overwrite, outputFlag{"--json", o.json}); err != nil {
		return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: %w", err)
	}
	for _, n := range o.overlapStreams {
		if n < 1 || n > 64 {
			return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --overlap-streams %d out of range (1 to 64)", n)
		}
	}
	var tests []string
	for _, t := range o.only {
		t = strings.ToLower(strings.TrimSpace(t))
		if !slices.Contains(gpubench.BandwidthTests, t) {
			return gpubench.BandwidthConfig{}, fmt.Errorf("bench bandwidth: --only %q is not a test; want some of %s", t, strings.Join(gpubench.BandwidthTests, ", "))
		}
		if !slices.Contains(tests, t) {
			tests = append(tests, t)
		}
	}
	return gpubench.BandwidthConfig{
		Device: o.device, Size: int64(o.size), Reps: o.reps, Warmup: o.warmup, Tests: tests,
		PTXPath: o.ptx, OverlapChunks: o.overlapChunks, OverlapStreams: o.overlapStreams,
	}, nil
}

func runBenchBandwidth(ctx context.Context, o benchBandwidthOptions, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if !cuda.Built() {
		return fmt.Errorf("bench bandwidth: %w", cuda.ErrNotBuilt)
	}
	res, err := gpubench.Bandwidth(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench bandwidth: %w", err)
	}
	if err := writeReport(o.json, out, res, writeBandwidthTable); err != nil {
		return fmt.Errorf("bench bandwidth: %w", err)
	}
	return nil
}

// writeBandwidthTable prints res as tables.
func writeBandwidthTable(w io.Writer, res gpubench.BandwidthResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "device: %s\n", res.Device)
	fmt.Fprintf(&b, "%s per copy, %d reps after %d warmup, timed with CUDA events; GiB/s (2^30 bytes/s)\n",
		humanBytes(res.Bytes), res.Reps, res.Warmup)
	if len(res.Copies) > 0 {
		fmt.Fprintf(&b, "\n%-11s %8s %8s %8s %8s   %8s %8s %8s %8s\n", "copy",
			"H2D", "best", "median", "host", "D2H", "best", "median", "host")
		for _, mem := range []string{gpubench.MemPageable, gpubench.MemPinned, gpubench.MemRegistered} {
			h, ok1 := res.Copy(mem, gpubench.DirH2D)
			d, ok2 := res.Copy(mem, gpubench.DirD2H)
			if !ok1 && !ok2 {
				continue
			}
			fmt.Fprintf(&b, "%-11s %8.1f %8.1f %8.1f %8.1f   %8.1f %8.1f %8.1f %8.1f\n", mem,
				h.GiBps, h.BestGiBps, h.MedianGiBps, h.HostGiBps, d.GiBps, d.BestGiBps, d.MedianGiBps, d.HostGiBps)
		}
		if r := res.PinnedOverPageable; r != nil {
			fmt.Fprintf(&b, "pinned / pageable: H2D %.2fx, D2H %.2fx\n", r[gpubench.DirH2D], r[gpubench.DirD2H])
		}
	}
	if bd := res.Bidir; bd != nil {
		fmt.Fprintf(&b, "\nbidirectional (pinned, H2D and D2H at once on two streams): H2D %.1f + D2H %.1f = %.1f GiB/s\n",
			bd.H2DGiBps, bd.D2HGiBps, bd.TotalGiBps)
	}
	if len(res.Mapped) > 0 {
		m := res.Mapped[0]
		fmt.Fprintf(&b, "\nmapped host memory, zero-copy kernel (%d blocks x %d threads, 16-byte accesses):\n", m.Blocks, m.Threads)
		for _, m := range res.Mapped {
			fmt.Fprintf(&b, "  %-5s %8.1f GiB/s median, %.1f best\n", m.Op, m.GiBps, m.Best)
		}
	}
	if ov := res.Overlap; ov != nil {
		fmt.Fprintf(&b, "\ncopy/compute overlap: %s in %d chunks, H2D -> kernel -> D2H per chunk\n", humanBytes(ov.Bytes), ov.Chunks)
		fmt.Fprintf(&b, "  alone: H2D %.2f ms, kernel %.2f ms (%d FMAs per value), D2H %.2f ms; serial %.2f ms, bound %.2f ms\n",
			ov.H2DMs, ov.KernelMs, ov.KernelIters, ov.D2HMs, ov.SerialMs, ov.BoundMs)
		fmt.Fprintf(&b, "  %7s %10s %8s %8s %12s\n", "streams", "ms", "GiB/s", "speedup", "of bound")
		for _, r := range ov.Runs {
			frac := 0.0
			if r.Seconds > 0 {
				frac = ov.BoundMs / (r.Seconds * 1e3)
			}
			fmt.Fprintf(&b, "  %7d %10.2f %8.1f %7.2fx %11.0f%%\n", r.Streams, r.Seconds*1e3, r.GiBps, r.Speedup, 100*frac)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
