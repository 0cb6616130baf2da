package main

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/gpu"
	"github.com/sigproc/sigproc/sink"
)

// Sources of "bench stream".
const (
	streamSourceMemory    = "memory"
	streamSourceSynthetic = "synthetic"
	streamSourceFile      = "file"
)

// Verification levels of "bench stream".
const (
	verifyNone   = "none"
	verifySample = "sample"
	verifyAll    = "all"
)

// streamTarget is the fraction of the pinned H2D bandwidth the issue asks
// the memory-mode stream to reach.
const streamTarget = 0.8

// timelinePNGChunks is how many chunks the --timeline-png Gantt chart shows.
const timelinePNGChunks = 16

// benchStreamOptions are the flags of "bench stream".
type benchStreamOptions struct {
	source      string
	sourceSet   bool
	input       string
	output      string
	size        sizeFlag
	chunk       sizeFlag
	streams     int
	buffers     int
	taps        int
	tapsSet     bool
	tapsFile    string
	complex     bool
	verify      string
	json        string
	timeline    string
	timelinePNG string
	progress    bool
	progressSet bool
	device      int
	ptx         string
	seed        uint64
	refSize     sizeFlag
	refReps     int
}

// benchStreamReport is the JSON of "bench stream": the engine's result
// (without the per-chunk timeline, which --timeline writes) and what the
// command added.
type benchStreamReport struct {
	gpu.StreamResult
	Source    string  `json:"source"` // a description of the input
	Sink      string  `json:"sink"`
	Verify    string  `json:"verify"`
	VerifyErr float64 `json:"verify_max_rel_err,omitempty"`
	Verified  *bool   `json:"verified,omitempty"`
	Target    float64 `json:"target_pinned_fraction"`
}

func newBenchStreamCmd() *cobra.Command {
	o := benchStreamOptions{size: 4 << 30, chunk: 16 << 20, refSize: 256 << 20}
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Stream samples from host memory or a file through the GPU FIR and back",
		Long: `Stream samples from the host through the GPU batch FIR filter and back,
chunk by chunk: source → pinned buffers → H2D copy → filter kernel → D2H
copy → sink, with --buffers chunks in flight on --streams CUDA streams, so
that one chunk's H2D, another's kernel and a third's D2H run at once. Each
chunk is copied behind the previous chunk's last ntaps−1 samples, so the
output equals one filter over the whole input. Memory stays bounded by the
buffers however large the input is (a file is streamed, never read
whole), and nothing is dropped: the source waits for a free buffer.

Sources (--source):
  memory     (default) --size bytes of seeded noise generated in host
             memory; input and output buffers are pinned with
             cuMemHostRegister and each chunk is copied straight from the
             input and back into the output: no host copies, so the figure
             is the GPU pipeline against PCIe. This is the headline: it
             should reach 80 % of the pinned H2D bandwidth.
  synthetic  --size bytes of a test tone generated chunk by chunk into the
             pinned buffers (the CPU generator bounds the rate).
  file       --input FILE, raw little-endian float32 (interleaved I/Q with
             --complex), read chunk by chunk into the pinned buffers.
--output FILE writes the filtered samples (raw float32) with synthetic and
file sources; otherwise they are counted and discarded.

Before the stream it measures pinned H2D copies (--ref-size x --ref-reps)
in the same context, and reports the stream's end-to-end input rate
(host clock, first chunk in to last chunk out) as a fraction of it. CUDA
events around every stage give each stage's busy time (the union of its
chunks' intervals) as a fraction of the GPU wall time; their sum is the
overlap (1 = no overlap, up to 3). --timeline FILE writes every chunk's
stage intervals as JSON, --timeline-png FILE a Gantt chart of the first
16 chunks.

--verify checks the output against the CPU filter (filter.FIR): "sample"
(default) checks the first two chunks (the first chunk boundary) and, in
memory mode, a middle chunk and the last one too; "all" checks every
sample (memory mode); "none" skips it. It fails above 1e-5 of the output
RMS.

A progress bar goes to stderr when it is a terminal (or with --progress).
Ctrl-C stops reading, lets the chunks in flight finish and reach the sink,
flushes it, frees all pinned memory and prints the stats so far.

Needs the CUDA build (make cuda; build/sigproc-cuda).`,
		Example: `  # the headline: 8 GiB from registered host memory, 3 streams, JSON too
  sigproc-cuda bench stream --source memory --size 8GiB --json stream.json

  # complex samples, 4 streams, a Gantt chart of the first chunks
  sigproc-cuda bench stream --complex --streams 4 --timeline-png stream.png

  # a file in, a file out, in bounded memory
  sigproc-cuda bench stream --input big.f32 --output filtered.f32 --chunk 8Mi

  # a generated tone, 2 streams, JSON on stdout
  sigproc-cuda bench stream --source synthetic --size 2GiB --streams 2 --json -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			o.sourceSet, o.tapsSet, o.progressSet = fl.Changed("source"), fl.Changed("taps"), fl.Changed("progress")
			return runBenchStream(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.source, "source", streamSourceMemory, "input: memory, synthetic or file (--input implies file)")
	f.StringVar(&o.input, "input", "", "raw little-endian float32 input file (interleaved I/Q with --complex)")
	f.StringVar(&o.output, "output", "", "write the filtered samples to this raw float32 file (synthetic and file sources)")
	f.Var(&o.size, "size", "input bytes for the memory and synthetic sources, e.g. 4GiB, 512MiB")
	f.Var(&o.chunk, "chunk", "samples per chunk (I/Q pairs with --complex), e.g. 16Mi, 4194304")
	f.IntVar(&o.streams, "streams", 3, fmt.Sprintf("CUDA streams (1 to %d)", gpu.StreamMaxStreams))
	f.IntVar(&o.buffers, "buffers", 0, "chunks in flight, each with its own buffers (0: max(3, 2 x streams))")
	f.IntVar(&o.taps, "taps", 129, "taps of the designed 0.1·fs Hamming lowpass (ignored with --taps-file)")
	f.StringVar(&o.tapsFile, "taps-file", "", "filter with the taps in this file (as written by sigproc design)")
	f.BoolVar(&o.complex, "complex", false, "interleaved I/Q samples, both components filtered with the same taps")
	f.StringVar(&o.verify, "verify", verifySample, "check the output against the CPU filter: none, sample or all")
	f.StringVar(&o.json, "json", "", `also write the results as JSON to this file ("-": JSON on stdout instead of the text)`)
	f.StringVar(&o.timeline, "timeline", "", "write every chunk's stage intervals (ms from the start) as JSON to this file")
	f.StringVar(&o.timelinePNG, "timeline-png", "", fmt.Sprintf("write a Gantt chart of the first %d chunks' stages to this PNG file", timelinePNGChunks))
	f.BoolVar(&o.progress, "progress", false, "show progress on stderr even when it is not a terminal (--progress=false hides it)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.ptx, "ptx", "", "load the batch FIR kernels from this PTX file instead of the embedded ones")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the memory source's noise")
	f.Var(&o.refSize, "ref-size", "bytes per copy of the pinned H2D reference measurement")
	f.IntVar(&o.refReps, "ref-reps", 10, "copies of the pinned H2D reference measurement (0 skips it)")
	return cmd
}

// resolve checks the flags, settles the source and returns the values per
// sample.
func (o *benchStreamOptions) resolve() (int, error) {
	if o.input != "" && !o.sourceSet {
		o.source = streamSourceFile
	}
	ch := 1
	if o.complex {
		ch = 2
	}
	switch o.source {
	case streamSourceMemory, streamSourceSynthetic, streamSourceFile:
	default:
		return 0, fmt.Errorf("bench stream: --source %q: want memory, synthetic or file", o.source)
	}
	switch {
	case o.source == streamSourceFile && o.input == "":
		return 0, errors.New("bench stream: --source file needs --input FILE")
	case o.source != streamSourceFile && o.input != "":
		return 0, fmt.Errorf("bench stream: --input is for --source file, not %s", o.source)
	case o.source == streamSourceMemory && o.output != "":
		return 0, errors.New("bench stream: --output is for the synthetic and file sources (memory mode keeps the output in memory)")
	case o.source != streamSourceFile && int64(o.size) < int64(4*ch):
		return 0, fmt.Errorf("bench stream: --size %d bytes is less than one sample", o.size)
	case o.chunk <= 0 || int64(o.chunk) > (1<<30)/int64(ch)-gpu.BatchMaxTaps:
		return 0, fmt.Errorf("bench stream: --chunk %d samples out of range (1 to %d)", o.chunk, (1<<30)/int64(ch)-gpu.BatchMaxTaps)
	case o.streams < 1 || o.streams > gpu.StreamMaxStreams:
		return 0, fmt.Errorf("bench stream: --streams must be 1 to %d, got %d", gpu.StreamMaxStreams, o.streams)
	case o.buffers < 0 || o.buffers == 1 || o.buffers > gpu.StreamMaxBuffers:
		return 0, fmt.Errorf("bench stream: --buffers must be 0 (auto) or 2 to %d, got %d", gpu.StreamMaxBuffers, o.buffers)
	case o.buffers > 0 && o.buffers < o.streams:
		return 0, fmt.Errorf("bench stream: --buffers %d leaves some of the %d streams idle; give at least --streams buffers", o.buffers, o.streams)
	case o.tapsFile != "" && o.tapsSet:
		return 0, errors.New("bench stream: use --taps or --taps-file, not both")
	case o.tapsFile == "" && (o.taps < 1 || o.taps > gpu.BatchMaxTaps):
		return 0, fmt.Errorf("bench stream: --taps %d out of range (1 to %d)", o.taps, gpu.BatchMaxTaps)
	case o.verify != verifyNone && o.verify != verifySample && o.verify != verifyAll:
		return 0, fmt.Errorf("bench stream: --verify %q: want none, sample or all", o.verify)
	case o.verify == verifyAll && o.source != streamSourceMemory:
		return 0, errors.New("bench stream: --verify all needs --source memory (a streamed input is not kept); use sample")
	case o.refReps < 0:
		return 0, fmt.Errorf("bench stream: --ref-reps must be >= 0, got %d", o.refReps)
	case o.refReps > 0 && (o.refSize < gpu.MinBandwidthSize || o.refSize%4096 != 0):
		return 0, fmt.Errorf("bench stream: --ref-size %d must be a whole number of 4 KiB pages, at least 1MiB", o.refSize)
	case o.device < 0:
		return 0, fmt.Errorf("bench stream: --device must be >= 0, got %d", o.device)
	}
	return ch, nil
}

func (o benchStreamOptions) designTaps() ([]float32, error) {
	if o.tapsFile != "" {
		taps, err := filter.LoadTaps(o.tapsFile)
		if err != nil {
			return nil, fmt.Errorf("bench stream: %w", err)
		}
		if len(taps) > gpu.BatchMaxTaps {
			return nil, fmt.Errorf("bench stream: %s has %d taps, the GPU batch kernel takes at most %d", o.tapsFile, len(taps), gpu.BatchMaxTaps)
		}
		return taps, nil
	}
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: o.taps})
	if err != nil {
		return nil, fmt.Errorf("bench stream: design %d taps: %w", o.taps, err)
	}
	return taps, nil
}

func runBenchStream(ctx context.Context, o benchStreamOptions, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ch, err := o.resolve()
	if err != nil {
		return err
	}
	if !gpu.Built() {
		return fmt.Errorf("bench stream: %w", gpu.ErrNotBuilt)
	}
	taps, err := o.designTaps()
	if err != nil {
		return err
	}
	cfg := gpu.StreamConfig{
		Device: o.device, Taps: taps, Complex: o.complex, ChunkSamples: int(o.chunk),
		Streams: o.streams, Buffers: o.buffers, PTXPath: o.ptx,
		RefBytes: int64(o.refSize), RefReps: o.refReps,
		Timeline: o.timeline != "" || o.timelinePNG != "",
	}
	show := isTerminal(errw)
	if o.progressSet {
		show = o.progress
	}

	var rep benchStreamReport
	var runErr error
	switch o.source {
	case streamSourceMemory:
		rep, runErr = streamMemory(ctx, o, cfg, ch, show, errw)
	default:
		rep, runErr = streamSource(ctx, o, cfg, ch, show, errw)
	}
	interrupted := runErr != nil && rep.Interrupted && errors.Is(runErr, ctx.Err())
	if runErr != nil && !interrupted && rep.Chunks == 0 {
		return runErr
	}
	rep.Target = streamTarget
	if err := reportStream(o, rep, out); err != nil {
		return errors.Join(runErr, err)
	}
	if interrupted {
		return nil // the stats are printed; main exits 130
	}
	if runErr != nil {
		return runErr
	}
	if rep.Verified != nil && !*rep.Verified {
		return fmt.Errorf("bench stream: GPU output differs from the CPU filter: max error %.3g of the output RMS > %g", rep.VerifyErr, benchFIRTolerance)
	}
	return nil
}

// fillNoise fills x with uniform noise in [-1, 1), in parallel blocks
// each seeded by (seed, block index), so the content depends only on seed.
func fillNoise(x []float32, seed uint64) {
	const block = 1 << 20
	nb := (len(x) + block - 1) / block
	var wg sync.WaitGroup
	work := make(chan int, nb)
	for b := range nb {
		work <- b
	}
	close(work)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for b := range work {
				r := rand.New(rand.NewPCG(seed, uint64(b)))
				seg := x[b*block : min(len(x), (b+1)*block)]
				for i := range seg {
					seg[i] = float32(2*r.Float64() - 1)
				}
			}
		})
	}
	wg.Wait()
}

// streamMemory runs the memory-mode stream and verifies it.
func streamMemory(ctx context.Context, o benchStreamOptions, cfg gpu.StreamConfig, ch int, show bool, errw io.Writer) (benchStreamReport, error) {
	n := int(int64(o.size) / 4 / int64(ch) * int64(ch))
	in, err := gpu.AllocHostFloats(n)
	if err != nil {
		return benchStreamReport{}, fmt.Errorf("bench stream: input: %w", err)
	}
	defer in.Free()
	outBuf, err := gpu.AllocHostFloats(n)
	if err != nil {
		return benchStreamReport{}, fmt.Errorf("bench stream: output: %w", err)
	}
	defer outBuf.Free()
	fillNoise(in.Values, o.seed)

	var bar *progress
	if show {
		bar = newProgress(errw, int64(n/ch), "streaming", true)
		cfg.Progress = bar.set
	}
	res, err := gpu.RunStreamMemory(ctx, cfg, in, outBuf)
	bar.stop()
	rep := benchStreamReport{
		StreamResult: res,
		Source:       fmt.Sprintf("memory: %s of uniform noise (seed %d), pinned with cuMemHostRegister, no host copies", humanBytes(int64(n)*4), o.seed),
		Sink:         "memory (registered output buffer)",
		Verify:       o.verify,
	}
	if err != nil {
		return rep, fmt.Errorf("bench stream: %w", err)
	}
	if o.verify != verifyNone {
		e, err := verifyMemory(cfg.Taps, in.Values, outBuf.Values, o.complex, int(o.chunk), o.verify == verifyAll)
		if err != nil {
			return rep, fmt.Errorf("bench stream: verify: %w", err)
		}
		ok := e <= benchFIRTolerance
		rep.VerifyErr, rep.Verified = e, &ok
	}
	return rep, nil
}

// sampleRanges are the sample ranges "--verify sample" checks in memory
// mode: the first two chunks, a middle one and the last one (with the
// chunk before it), merged where they overlap.
func sampleRanges(samples, chunk int) [][2]int {
	var r [][2]int
	add := func(s0, s1 int) {
		s0, s1 = max(0, s0), min(samples, s1)
		if s0 >= s1 {
			return
		}
		if len(r) > 0 && s0 <= r[len(r)-1][1] {
			r[len(r)-1][1] = max(r[len(r)-1][1], s1)
			return
		}
		r = append(r, [2]int{s0, s1})
	}
	chunks := (samples + chunk - 1) / chunk
	add(0, 2*chunk)
	mid := chunks / 2
	add(mid*chunk, (mid+1)*chunk)
	add((chunks-2)*chunk, samples)
	return r
}

// verifyMemory compares y with the CPU filter of x over the sample ranges
// (all of it when all is set) and returns the largest error relative to
// the output RMS of each range.
func verifyMemory(taps, x, y []float32, complex bool, chunk int, all bool) (float64, error) {
	ch := 1
	if complex {
		ch = 2
	}
	samples := len(x) / ch
	ranges := [][2]int{{0, samples}}
	if !all {
		ranges = sampleRanges(samples, chunk)
	}
	worst := 0.0
	for _, rg := range ranges {
		// Prime the CPU filter with the ntaps−1 samples before the range.
		p := max(0, rg[0]-(len(taps)-1))
		ref, err := cpuFIRParallel(taps, x[p*ch:rg[1]*ch], complex, runtime.GOMAXPROCS(0))
		if err != nil {
			return 0, err
		}
		worst = max(worst, filter.MaxErrRMS(y[rg[0]*ch:rg[1]*ch], ref[(rg[0]-p)*ch:]))
	}
	return worst, nil
}

// teeSource keeps the first values a source yields.
type teeSource struct {
	src  capture.Source
	keep []float32
	max  int
}

func (t *teeSource) Read(ctx context.Context, dst []float32) (int, error) {
	n, err := t.src.Read(ctx, dst)
	if room := t.max - len(t.keep); room > 0 && n > 0 {
		t.keep = append(t.keep, dst[:min(n, room)]...)
	}
	return n, err
}

// teeSink keeps the first values written to a sink.
type teeSink struct {
	snk  sink.Sink
	keep []float32
	max  int
}

func (t *teeSink) Write(v []float32) error {
	if room := t.max - len(t.keep); room > 0 {
		t.keep = append(t.keep, v[:min(len(v), room)]...)
	}
	return t.snk.Write(v)
}

// streamSource runs the synthetic or file stream.
func streamSource(ctx context.Context, o benchStreamOptions, cfg gpu.StreamConfig, ch int, show bool, errw io.Writer) (rep benchStreamReport, err error) {
	format := "rf32_le"
	if o.complex {
		format = "cf32_le"
	}
	var src capture.Source
	var total int64 // samples, 0 = unknown
	switch o.source {
	case streamSourceFile:
		st, err := os.Stat(o.input)
		if err != nil {
			return rep, fmt.Errorf("bench stream: %w", err)
		}
		if st.Size()%int64(4*ch) != 0 || st.Size() == 0 {
			return rep, fmt.Errorf("bench stream: input %s: %d bytes is not a positive whole number of %d-byte samples", o.input, st.Size(), 4*ch)
		}
		total = st.Size() / int64(4*ch)
		if src, err = capture.OpenFile(o.input, format, 1); err != nil {
			return rep, fmt.Errorf("bench stream: %w", err)
		}
		rep.Source = fmt.Sprintf("file %s (%s, %s), read chunk by chunk into pinned buffers", o.input, format, humanBytes(st.Size()))
	default:
		total = int64(o.size) / int64(4*ch)
		s, err := capture.NewSynthetic(capture.SyntheticConfig{
			Signal: capture.SignalTone, SampleRate: 1, Complex: o.complex,
			FrequencyHz: 0.05, Amplitude: 1, NumSamples: total,
		})
		if err != nil {
			return rep, fmt.Errorf("bench stream: %w", err)
		}
		src = s
		rep.Source = fmt.Sprintf("synthetic: %s of a 0.05·fs tone, generated chunk by chunk into pinned buffers", humanBytes(total*int64(4*ch)))
	}
	defer src.Close()

	var snk sink.Sink = sink.NewNull()
	rep.Sink = "null (counted, discarded)"
	if o.output != "" {
		if err := sink.CheckNotInput(o.output, o.input); err != nil {
			return rep, fmt.Errorf("bench stream: %w", err)
		}
		if snk, err = sink.CreateFile(o.output, format); err != nil {
			return rep, fmt.Errorf("bench stream: %w", err)
		}
		rep.Sink = fmt.Sprintf("file %s (%s)", o.output, format)
	}
	keep := 0
	if o.verify != verifyNone {
		keep = int(min(int64(2)*int64(o.chunk), total) * int64(ch))
	}
	tsrc := &teeSource{src: src, max: keep}
	tsnk := &teeSink{snk: snk, max: keep}

	var bar *progress
	if show {
		bar = newProgress(errw, total, "streaming", true)
		cfg.Progress = bar.set
	}
	res, runErr := gpu.RunStream(ctx, cfg, tsrc, tsnk)
	bar.stop()
	// The sink is closed whatever happened: it flushes what was written.
	if cerr := snk.Close(); cerr != nil {
		runErr = errors.Join(runErr, fmt.Errorf("close sink: %w", cerr))
	}
	rep.StreamResult, rep.Verify = res, o.verify
	if runErr != nil {
		return rep, fmt.Errorf("bench stream: %w", runErr)
	}
	if o.verify != verifyNone && len(tsnk.keep) > 0 {
		m := min(len(tsrc.keep), len(tsnk.keep))
		ref, err := cpuFIRParallel(cfg.Taps, tsrc.keep[:m], o.complex, runtime.GOMAXPROCS(0))
		if err != nil {
			return rep, fmt.Errorf("bench stream: verify: %w", err)
		}
		e := filter.MaxErrRMS(tsnk.keep[:m], ref)
		ok := e <= benchFIRTolerance
		rep.VerifyErr, rep.Verified = e, &ok
	}
	return rep, nil
}

// reportStream writes the text (or JSON) report and the timeline files.
func reportStream(o benchStreamOptions, rep benchStreamReport, out io.Writer) error {
	tl := rep.Timeline
	rep.Timeline = nil
	if o.json != "-" {
		if err := writeStreamText(out, rep); err != nil {
			return fmt.Errorf("bench stream: %w", err)
		}
	}
	if o.json != "" {
		if err := writeJSONTo(o.json, out, rep); err != nil {
			return fmt.Errorf("bench stream: %w", err)
		}
	}
	if o.timeline != "" {
		doc := struct {
			Device       string            `json:"device"`
			Mode         string            `json:"mode"`
			Streams      int               `json:"streams"`
			Buffers      int               `json:"buffers"`
			ChunkSamples int               `json:"chunk_samples"`
			Note         string            `json:"note"`
			Chunks       []gpu.ChunkTiming `json:"chunks"`
		}{rep.Device, rep.Mode, rep.Streams, rep.Buffers, rep.ChunkSamples,
			"ms from the run's start event; each stage interval begins when the chunk's stream reaches it, so an H2D or D2H interval includes waiting for a copy engine busy with another stream",
			tl}
		if err := writeJSONTo(o.timeline, out, doc); err != nil {
			return fmt.Errorf("bench stream: timeline: %w", err)
		}
	}
	if o.timelinePNG != "" && len(tl) > 0 {
		if err := plotTimeline(o.timelinePNG, rep, tl[:min(len(tl), timelinePNGChunks)]); err != nil {
			return fmt.Errorf("bench stream: %w", err)
		}
	}
	return nil
}

func writeStreamText(w io.Writer, rep benchStreamReport) error {
	var b strings.Builder
	kind := "real"
	if rep.Complex {
		kind = "complex (I/Q)"
	}
	fmt.Fprintf(&b, "device: %s\n", rep.Device)
	fmt.Fprintf(&b, "source: %s\nsink:   %s\n", rep.Source, rep.Sink)
	fmt.Fprintf(&b, "filter: %d taps, %s samples; %d chunks of %d samples, %d streams, %d buffers in flight\n",
		rep.Taps, kind, rep.Chunks, rep.ChunkSamples, rep.Streams, rep.Buffers)
	status := "ok"
	if rep.Drops != 0 {
		status = "MISMATCH"
	}
	if rep.Interrupted {
		status += " (interrupted)"
	}
	fmt.Fprintf(&b, "samples: %d in, %d out, %d dropped: %s\n", rep.SamplesIn, rep.SamplesOut, rep.Drops, status)
	fmt.Fprintf(&b, "end to end: %.1f ms, %.2f GiB/s in (%.2f GiB/s in+out), %.2f GS/s; GPU %.1f ms\n",
		rep.WallSeconds*1e3, rep.InGiBps, rep.InOutGiBps, rep.GSps, rep.GPUSeconds*1e3)
	if p := rep.PinnedH2D; p != nil {
		verdict := ""
		if rep.Mode == gpu.StreamModeMemory {
			verdict = fmt.Sprintf(" (target %.0f%%: %s)", 100*rep.Target, passFail(rep.PinnedFraction >= rep.Target))
		}
		fmt.Fprintf(&b, "pinned H2D in this run (%s x %d): %.2f GiB/s; stream = %.1f%% of pinned H2D%s\n",
			humanBytes(p.Bytes), p.Reps, p.GiBps, 100*rep.PinnedFraction, verdict)
	}
	st := rep.Stages
	fmt.Fprintf(&b, "stages (CUDA events; busy = union of the chunks' intervals, %% of GPU time):\n")
	for _, s := range []struct {
		name string
		v    gpu.StageStats
	}{{"H2D", st.H2D}, {"kernel", st.Kernel}, {"D2H", st.D2H}} {
		per := 0.0
		if rep.Chunks > 0 {
			per = s.v.BusyMs / float64(rep.Chunks)
		}
		fmt.Fprintf(&b, "  %-6s busy %9.2f ms %5.1f%%  (%.3f ms per chunk)\n", s.name, s.v.BusyMs, 100*s.v.BusyFraction, per)
	}
	fmt.Fprintf(&b, "overlap: %.2f (stage busy times / GPU time; 1 = serial)\n", rep.Overlap)
	switch {
	case rep.Verified != nil:
		fmt.Fprintf(&b, "verify (%s): max error %.2g of the output RMS: %s\n", rep.Verify, rep.VerifyErr, passFail(*rep.Verified))
	case rep.Verify == verifyNone:
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

// plotTimeline draws a Gantt chart: one row per chunk, a bar per stage.
func plotTimeline(path string, rep benchStreamReport, tl []gpu.ChunkTiming) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("sigproc bench stream (%s): first %d chunks, %d streams\n%s", rep.Mode, len(tl), rep.Streams, rep.Device)
	p.X.Label.Text = "ms from start (CUDA events)"
	p.Y.Label.Text = "chunk"
	p.Add(plotter.NewGrid())
	stages := []struct {
		name string
		col  color.RGBA
		get  func(gpu.ChunkTiming) [2]float64
		dy   float64
	}{
		{"H2D", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, func(t gpu.ChunkTiming) [2]float64 { return t.H2D }, -0.25},
		{"kernel", color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, func(t gpu.ChunkTiming) [2]float64 { return t.Kernel }, 0},
		{"D2H", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, func(t gpu.ChunkTiming) [2]float64 { return t.D2H }, 0.25},
	}
	for _, s := range stages {
		for i, t := range tl {
			iv := s.get(t)
			y := float64(t.Chunk) + s.dy
			l, err := plotter.NewLine(plotter.XYs{{X: iv[0], Y: y}, {X: math.Max(iv[1], iv[0]+1e-3), Y: y}})
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			l.Color = s.col
			l.Width = vg.Points(5)
			p.Add(l)
			if i == 0 {
				p.Legend.Add(s.name, l)
			}
		}
	}
	p.Y.Min, p.Y.Max = float64(tl[0].Chunk)-1, float64(tl[len(tl)-1].Chunk)+1
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	return nil
}
