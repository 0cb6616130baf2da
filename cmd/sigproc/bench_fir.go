package main

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
	"github.com/sigproc/sigproc/filter"
)

// defaultFIRSweep is the tap counts "bench fir" times by default.
var defaultFIRSweep = []int{16, 32, 64, 129, 256, 512, 1024}

// benchFIROptions are the flags of "bench fir".
type benchFIROptions struct {
	overwrite bool // replace an existing output file (checkNew)
	samples   int
	taps      []int
	tapsSet   bool // --taps given explicitly
	tapsFile  string
	complex   bool
	channels  int
	reps      int
	warmup    int
	seed      uint64
	device    int
	input     string
	output    string
	verify    bool
	json      string // writeReport's json (jsonFlag)
	png       string
	ptx       string
	threads   int
	hbmPeak   float64 // GB/s; 0 = from the device attributes
	method    string  // auto, direct or fft
	fftSize   int     // overlap-save transform size; 0 = automatic
	olsChunk  int     // overlap-save values per pass; 0 = default
	strided   bool    // overlap-save: transform full passes straight from the input
	fused     bool    // overlap-save in one shared-memory kernel, no cuFFT
	radix4    bool    // the fused kernel two stages at a time
}

// benchFIRReport is the --json output of "bench fir".
type benchFIRReport struct {
	Device          string        `json:"device"`
	Samples         int           `json:"samples"`
	Complex         bool          `json:"complex"`
	Channels        int           `json:"channels"`
	Reps            int           `json:"reps"`
	Warmup          int           `json:"warmup"`
	Input           string        `json:"input"` // a file name, or "noise seed N"
	HBMPeakGBps     float64       `json:"hbm_peak_gbps"`
	HBMPeakSource   string        `json:"hbm_peak_source"`
	MemClockKHz     int           `json:"mem_clock_khz"`
	MemBusWidthBits int           `json:"mem_bus_width_bits"`
	SMs             int           `json:"sms"`
	ClockKHz        int           `json:"clock_khz"`
	Verified        bool          `json:"verified"`
	Tolerance       float64       `json:"tolerance,omitempty"`
	Results         []benchFIRRow `json:"results"`
}

// benchFIRRow is one tap count's result. Rates use the median pass;
// *_best the fastest.
type benchFIRRow struct {
	Taps        int     `json:"taps"`
	Method      string  `json:"method"`
	FFTSize     int     `json:"fft_size,omitempty"`
	Segments    int     `json:"segments,omitempty"`
	Transforms  string  `json:"transforms,omitempty"` // the cuFFT library, or "fused"
	Ms          float64 `json:"ms"`
	MsBest      float64 `json:"ms_best"`
	GSps        float64 `json:"gsps"`
	GSpsBest    float64 `json:"gsps_best"`
	GBps        float64 `json:"gbps"`
	HBMFraction float64 `json:"hbm_fraction"`
	GFLOPs      float64 `json:"gflops"`
	Threads     int     `json:"threads"`
	Blocks      int     `json:"blocks"`
	SharedBytes int     `json:"shared_bytes"`
	MaxRelErr   float64 `json:"max_rel_err,omitempty"`
	Match       *bool   `json:"match,omitempty"`
}

func newBenchFIRCmd() *cobra.Command {
	o := benchFIROptions{verify: true}
	cmd := &cobra.Command{
		Use:   "fir",
		Short: "Time the GPU batch FIR kernel on data already in device memory",
		Long: `Time the GPU FIR (the tiled batch kernel of kernels/batch.cu, or overlap-save) on a buffer already in
GPU memory: no host transfers are timed. The input (seeded noise, or a raw
float32 file with --input) is copied to the device once per tap count,
behind a zero history, and each timed pass is one kernel launch over all
of it, timed with CUDA events after --warmup untimed passes.

For each tap count it reports the median pass time, the throughput in
GS/s (giga-samples per second; an I/Q pair counts as one sample, and
each channel's sample counts), the
effective memory bandwidth (bytes read + written per pass / time), that
bandwidth as a fraction of the device's HBM peak (memory clock × 2 × bus
width / 8, from the device attributes, or --hbm-peak), and GFLOP/s
(2 × taps per output value).

Taps are a 0.1·fs Hamming lowpass of each --taps length unless
--taps-file names a taps file (one filter). --verify (on by default)
checks every output against the CPU backend (filter.FIR, run in parallel
on all cores) and fails if the largest difference exceeds 1e-5 of the
output RMS. --output writes the GPU's filtered output (one filter only)
as raw little-endian float32, which is how bench/cupy_compare.py checks
it against CuPy.

--method chooses the convolution: direct (the batch kernel, up to
` + fmt.Sprint(cuda.BatchMaxTaps) + ` taps), fft (overlap-save with cuFFT, opened at run time;
$SIGPROC_CUFFT may name the library or its folder) or auto (fft from
` + fmt.Sprint(cuda.FFTCrossoverTaps) + ` taps up).

Needs the CUDA build (make cuda; build/sigproc-cuda).`,
		Example: `  # the default sweep (16 … 1024 taps) over 64 Mi real samples, as a table
  sigproc-cuda bench fir

  # one filter, JSON, and a plot of GS/s against taps
  sigproc-cuda bench fir --taps 129 --json
  sigproc-cuda bench fir --png fir.png

  # complex (interleaved I/Q) samples, 16 Mi of them, 50 timed passes
  sigproc-cuda bench fir --complex --samples 16777216 --reps 50

  # 8 channels of 8 Mi frames in one launch (channels as a batch
  # dimension), against one channel of the same 64 Mi samples
  sigproc-cuda bench fir --channels 8 --samples 8388608 --taps 129
  sigproc-cuda bench fir --samples 67108864 --taps 129

  # filter a file with a taps file and keep the output (what
  # bench/cupy_compare.py runs)
  sigproc-cuda bench fir --input x.f32 --taps-file taps.txt --output y.f32 --json`,
		Args: jsonArgs(&o.json),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.tapsSet = cmd.Flags().Changed("taps")
			return runBenchFIR(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.samples, "samples", 64<<20, "samples to filter per pass (IQ pairs with --complex, frames with --channels); ignored with --input")
	f.IntSliceVar(&o.taps, "taps", defaultFIRSweep, "tap counts to time, comma-separated (1 to "+fmt.Sprint(cuda.BatchMaxTaps)+")")
	f.StringVar(&o.tapsFile, "taps-file", "", "time the filter in this taps file (as written by sigproc design) instead of designed lowpasses")
	f.BoolVar(&o.complex, "complex", false, "interleaved I/Q samples, both components filtered with the same taps")
	f.IntVar(&o.channels, "channels", 1, "channels per frame, interleaved, each filtered on its own in the same launch (--samples counts frames)")
	f.IntVar(&o.reps, "reps", 20, "timed passes per tap count; the median is reported (and the best)")
	f.IntVar(&o.warmup, "warmup", 5, "untimed passes per tap count before timing")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the random input")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.input, "input", "", "raw little-endian float32 input file (overrides --samples and --seed)")
	f.StringVar(&o.output, "output", "", "write the GPU output as raw little-endian float32 (one tap count only)")
	f.BoolVar(&o.verify, "verify", true, "check the output against the CPU backend (max error <= 1e-5 of the output RMS)")
	jsonFlag(cmd, &o.json)
	f.StringVar(&o.png, "png", "", "write a plot of GS/s against taps (log scale) to this PNG file")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an output file that exists (without it one is refused)")
	f.StringVar(&o.ptx, "ptx", "", "load the batch kernels from this PTX file instead of the embedded ones")
	f.IntVar(&o.threads, "threads", 0, "threads per block, a multiple of 32 up to 256 (0: the default, 128)")
	f.Float64Var(&o.hbmPeak, "hbm-peak", 0, "HBM peak in GB/s for the bandwidth fraction (0: from the device attributes)")
	f.StringVar(&o.method, "method", "auto", "direct (the batch kernel), fft (overlap-save with cuFFT) or auto (fft from "+fmt.Sprint(cuda.FFTCrossoverTaps)+" taps up)")
	f.IntVar(&o.fftSize, "fft-size", 0, "overlap-save transform size, a power of two >= taps (0: 4·taps rounded up, at least 256)")
	f.IntVar(&o.olsChunk, "ols-chunk", 0, "overlap-save float32 values per pass (0: 4 Mi, L2-resident)")
	f.BoolVar(&o.fused, "ols-fused", false, "overlap-save in one shared-memory kernel instead of cuFFT (transforms up to "+fmt.Sprint(cuda.OLSFusedMaxFFT)+" points)")
	f.BoolVar(&o.radix4, "ols-r4", false, "with --ols-fused: two transform stages at a time in registers (radix 2²)")
	f.BoolVar(&o.strided, "ols-strided", false, "overlap-save: full passes transform their segments straight from the input (no gather)")
	return cmd
}

// check validates the flags that do not need the input.
func (o benchFIROptions) check() error {
	switch {
	case o.input == "" && o.samples <= 0:
		return fmt.Errorf("bench fir: --samples must be > 0, got %d", o.samples)
	case o.reps <= 0:
		return fmt.Errorf("bench fir: --reps must be > 0, got %d", o.reps)
	case o.warmup < 0:
		return fmt.Errorf("bench fir: --warmup must be >= 0, got %d", o.warmup)
	case o.threads < 0 || o.threads%32 != 0 || o.threads > 256:
		return fmt.Errorf("bench fir: --threads must be 0 or a multiple of 32 up to 256, got %d", o.threads)
	case o.channels < 1 || cuda.CheckBatchLanes(o.lanes()) != nil:
		return fmt.Errorf("bench fir: --channels %d: want 1 to %d real or %d complex channels", o.channels, cuda.BatchMaxLanes, cuda.BatchMaxLanes/2)
	case o.device < 0:
		return fmt.Errorf("bench fir: --device must be >= 0, got %d", o.device)
	case o.hbmPeak < 0 || math.IsNaN(o.hbmPeak) || math.IsInf(o.hbmPeak, 0):
		return fmt.Errorf("bench fir: --hbm-peak must be a finite value >= 0 GB/s, got %g", o.hbmPeak)
	case o.tapsFile != "" && o.tapsSet:
		return errors.New("bench fir: use --taps or --taps-file, not both")
	case o.tapsFile == "" && len(o.taps) == 0:
		return errors.New("bench fir: --taps is empty")
	}
	method, err := filter.ParseMethod(o.method)
	if err != nil {
		return fmt.Errorf("bench fir: --method: %w", err)
	}
	if o.fftSize < 0 || o.olsChunk < 0 {
		return fmt.Errorf("bench fir: --fft-size %d and --ols-chunk %d must be >= 0", o.fftSize, o.olsChunk)
	}
	if o.tapsFile == "" {
		for _, n := range o.taps {
			if lim := maxBenchTaps(method, n); n < 1 || n > lim {
				return fmt.Errorf("bench fir: --taps %d out of range (1 to %d with --method %s)", n, lim, method)
			}
		}
		if o.output != "" && len(o.taps) != 1 {
			return fmt.Errorf("bench fir: --output needs exactly one tap count, got %d (--taps %s)", len(o.taps), joinInts(o.taps))
		}
	}
	ch := o.lanes()
	if o.input == "" && o.samples > maxBenchValues/ch {
		return fmt.Errorf("bench fir: --samples %d exceeds the limit %d", o.samples, maxBenchValues/ch)
	}
	if err := checkFileOutputs([]string{o.input, o.tapsFile, o.ptx}, o.overwrite, outputFlag{"--output", o.output}, outputFlag{"--png", o.png}, outputFlag{"--json", o.json}); err != nil {
		return fmt.Errorf("bench fir: %w", err)
	}
	return nil
}

// lanes is the values per frame: channels × (2 with --complex).
func (o benchFIROptions) lanes() int {
	if o.complex {
		return 2 * o.channels
	}
	return o.channels
}

// maxBenchTaps is the most taps the method that m resolves to takes.
func maxBenchTaps(m filter.Method, n int) int {
	if cuda.ResolveMethod(m, n) == filter.MethodDirect {
		return cuda.BatchMaxTaps
	}
	return cuda.OLSMaxTaps
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// benchFIRTaps returns the tap sets to time.
func (o benchFIROptions) tapSets() ([][]float32, error) {
	if o.tapsFile != "" {
		taps, err := filter.LoadTaps(o.tapsFile)
		if err != nil {
			return nil, fmt.Errorf("bench fir: %w", err)
		}
		m, _ := filter.ParseMethod(o.method)
		if lim := maxBenchTaps(m, len(taps)); len(taps) > lim {
			return nil, fmt.Errorf("bench fir: %s has %d taps, method %s takes at most %d", o.tapsFile, len(taps), m, lim)
		}
		return [][]float32{taps}, nil
	}
	sets := make([][]float32, len(o.taps))
	for i, n := range o.taps {
		taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: n})
		if err != nil {
			return nil, fmt.Errorf("bench fir: design %d taps: %w", n, err)
		}
		sets[i] = taps
	}
	return sets, nil
}

// input returns the samples to filter and a description of them.
func (o benchFIROptions) inputData() ([]float32, string, error) {
	ch := o.lanes()
	if o.input != "" {
		x, err := readRawFloat32(o.input, ch)
		if err != nil {
			return nil, "", fmt.Errorf("bench fir: %w", err)
		}
		return x, o.input, nil
	}
	x := uniformNoise(o.samples*ch, o.seed)
	return x, fmt.Sprintf("uniform noise, seed %d", o.seed), nil
}

func runBenchFIR(ctx context.Context, o benchFIROptions, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.check(); err != nil {
		return err
	}
	if !cuda.Built() {
		return fmt.Errorf("bench fir: %w", cuda.ErrNotBuilt)
	}
	sets, err := o.tapSets()
	if err != nil {
		return err
	}
	if o.output != "" && len(sets) != 1 {
		return errors.New("bench fir: --output needs exactly one tap count")
	}
	x, desc, err := o.inputData()
	if err != nil {
		return err
	}
	ch := o.lanes()

	type check struct {
		err  float64
		done bool
	}
	checks := make([]check, len(sets))
	next := 0
	var cbErr error // an error of the Output callback, already worded
	cfg := gpubench.BenchFIRConfig{
		Device: o.device, Input: x, Complex: o.complex, Lanes: ch, Taps: sets,
		Warmup: o.warmup, Reps: o.reps, PTXPath: o.ptx, Threads: o.threads,
		FFTSize: o.fftSize, ChunkValues: o.olsChunk, Strided: o.strided, Fused: o.fused, Radix4: o.radix4,
	}
	cfg.Method, _ = filter.ParseMethod(o.method) // checked above
	if o.verify || o.output != "" {
		cfg.Output = func(_ int, y []float32) error {
			i := next
			next++
			if o.verify {
				ref, err := gpubench.ReferenceFIRLanes(sets[i], x, ch, runtime.GOMAXPROCS(0))
				if err != nil {
					cbErr = fmt.Errorf("bench fir: CPU reference: %w", err)
					return cbErr
				}
				checks[i] = check{err: filter.MaxErrRMS(y, ref), done: true}
			}
			if o.output != "" {
				if err := writeRawFloat32(o.output, y); err != nil {
					cbErr = fmt.Errorf("bench fir: %w", err)
					return cbErr
				}
			}
			return nil
		}
	}
	res, err := gpubench.BenchFIR(ctx, cfg)
	if err != nil {
		if cbErr != nil {
			return cbErr
		}
		return fmt.Errorf("bench fir: %w", err)
	}

	rep := benchFIRReport{
		Device: res.Device.String(), Samples: len(x) / ch, Complex: o.complex, Channels: o.channels,
		Reps: o.reps, Warmup: o.warmup, Input: desc,
		MemClockKHz: res.MemClockKHz, MemBusWidthBits: res.MemBusWidthBits,
		SMs: res.SMs, ClockKHz: res.ClockKHz, Verified: o.verify,
		HBMPeakGBps: res.PeakBytesPerSec / 1e9, HBMPeakSource: "device attributes",
	}
	if o.hbmPeak > 0 {
		rep.HBMPeakGBps, rep.HBMPeakSource = o.hbmPeak, "--hbm-peak"
	}
	if o.verify {
		rep.Tolerance = gpubench.Tolerance
	}
	var bad []string
	for i, run := range res.Runs {
		row := firRow(run, len(x), ch, ch/o.channels, rep.HBMPeakGBps)
		if c := checks[i]; c.done {
			ok := c.err <= gpubench.Tolerance
			row.MaxRelErr, row.Match = c.err, &ok
			if !ok {
				bad = append(bad, fmt.Sprintf("%d taps: max error %.3g of the output RMS", run.Taps, c.err))
			}
		}
		rep.Results = append(rep.Results, row)
	}

	if err := writeReport(o.json, out, rep, writeFIRTable); err != nil {
		return fmt.Errorf("bench fir: %w", err)
	}
	if o.png != "" {
		if err := plotFIR(o.png, rep); err != nil {
			return fmt.Errorf("bench fir: %w", err)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("bench fir: GPU output differs from the CPU backend beyond %g: %s", gpubench.Tolerance, strings.Join(bad, "; "))
	}
	return nil
}

// firRow turns one run's pass times into rates. nvals is the float32
// values per pass, ch the values per frame, per those of one channel's
// sample (GS/s counts every channel's samples).
func firRow(run gpubench.BenchFIRRun, nvals, ch, per int, peakGBps float64) benchFIRRow {
	sec := slices.Clone(run.Seconds)
	sort.Float64s(sec)
	med := sec[len(sec)/2]
	if len(sec)%2 == 0 {
		med = (sec[len(sec)/2-1] + sec[len(sec)/2]) / 2
	}
	best := sec[0]
	samples := float64(nvals / per)
	// Read: history + input; write: output.
	bytes := 4 * float64((run.Taps-1)*ch+2*nvals)
	flops := 2 * float64(run.Taps) * float64(nvals)
	row := benchFIRRow{
		Taps: run.Taps, Method: run.Method, FFTSize: run.FFTSize, Segments: run.Segments, Transforms: run.CuFFT, Ms: med * 1e3, MsBest: best * 1e3,
		Threads: run.Threads, Blocks: run.Blocks, SharedBytes: run.SharedBytes,
	}
	if med > 0 {
		row.GSps = samples / med / 1e9
		row.GBps = bytes / med / 1e9
		row.GFLOPs = flops / med / 1e9
		if peakGBps > 0 {
			row.HBMFraction = row.GBps / peakGBps
		}
	}
	if best > 0 {
		row.GSpsBest = samples / best / 1e9
	}
	return row
}

func writeFIRTable(w io.Writer, rep benchFIRReport) error {
	kind := "real"
	if rep.Complex {
		kind = "complex (I/Q)"
	}
	ver := "not verified"
	if rep.Verified {
		ver = fmt.Sprintf("verified against the CPU backend (max error / output RMS <= %g)", rep.Tolerance)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "device: %s\n", rep.Device)
	fmt.Fprintf(&b, "HBM peak %.0f GB/s (%s: %d MHz x %d bit x 2 / 8), %d SMs at %d MHz\n",
		rep.HBMPeakGBps, rep.HBMPeakSource, rep.MemClockKHz/1000, rep.MemBusWidthBits, rep.SMs, rep.ClockKHz/1000)
	if rep.Channels > 1 {
		kind = fmt.Sprintf("frames of %d %s channels (GS/s counts every channel's samples)", rep.Channels, kind)
	} else {
		kind += " samples"
	}
	fmt.Fprintf(&b, "input: %d %s (%s), median of %d passes after %d warmup; %s\n",
		rep.Samples, kind, rep.Input, rep.Reps, rep.Warmup, ver)
	fmt.Fprintf(&b, "%6s %7s %10s %9s %9s %9s %7s %9s %10s\n", "taps", "method", "ms/pass", "GS/s", "best GS/s", "GB/s", "HBM", "GFLOP/s", "max err")
	for _, r := range rep.Results {
		e := "-"
		if r.Match != nil {
			e = fmt.Sprintf("%.2g", r.MaxRelErr)
			if !*r.Match {
				e += " FAIL"
			}
		}
		m := r.Method
		if r.FFTSize > 0 {
			m = fmt.Sprintf("fft%d", r.FFTSize)
			switch r.Transforms {
			case "fused":
				m = fmt.Sprintf("fus%d", r.FFTSize)
			case "fused-r4":
				m = fmt.Sprintf("f4_%d", r.FFTSize)
			}
		}
		fmt.Fprintf(&b, "%6d %7s %10.4f %9.1f %9.1f %9.0f %6.1f%% %9.0f %10s\n",
			r.Taps, m, r.Ms, r.GSps, r.GSpsBest, r.GBps, 100*r.HBMFraction, r.GFLOPs, e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plotFIR writes GS/s (median pass) against taps on a log x axis, with
// the HBM bound (peak bandwidth / bytes per sample) for reference.
func plotFIR(path string, rep benchFIRReport) error {
	rows := slices.Clone(rep.Results)
	sort.Slice(rows, func(i, j int) bool { return rows[i].Taps < rows[j].Taps })
	p := plot.New()
	kind := "real"
	if rep.Complex {
		kind = "complex"
	}
	p.Title.Text = fmt.Sprintf("sigproc batch FIR, %d %s samples\n%s", rep.Samples, kind, rep.Device)
	p.X.Label.Text = "taps"
	p.Y.Label.Text = "GS/s"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	top := 0.0
	for _, r := range rows {
		ticks = append(ticks, plot.Tick{Value: float64(r.Taps), Label: fmt.Sprint(r.Taps)})
		top = max(top, r.GSps)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(rows) == 1 {
		p.X.Min, p.X.Max = float64(rows[0].Taps)/2, float64(rows[0].Taps)*2
	}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())

	meas := make(plotter.XYs, len(rows))
	bound := make(plotter.XYs, len(rows))
	ch := 1
	if rep.Complex {
		ch = 2
	}
	for i, r := range rows {
		meas[i] = plotter.XY{X: float64(r.Taps), Y: r.GSps}
		// Bytes per sample: ch values read and ch written.
		bound[i] = plotter.XY{X: float64(r.Taps), Y: rep.HBMPeakGBps / float64(8*ch)}
	}
	line, points, err := plotter.NewLinePoints(meas)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	line.Color = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	points.Color = line.Color
	p.Add(line, points)
	p.Legend.Add("sigproc fir_batch (median)", line, points)
	if rep.HBMPeakGBps > 0 {
		bl, err := plotter.NewLine(bound)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		bl.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
		bl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(bl)
		p.Legend.Add(fmt.Sprintf("HBM bound (%.0f GB/s / %d B per sample)", rep.HBMPeakGBps, 8*ch), bl)
	}
	if rep.HBMPeakGBps > 0 {
		top = max(top, rep.HBMPeakGBps/float64(8*ch))
	}
	p.Y.Max = 1.3 * top // room for the legend above the lines
	p.Legend.Top = true
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	return nil
}
