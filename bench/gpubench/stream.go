package gpubench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/assemble"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// `sigproc bench stream` is `sigproc run`'s engine (pipeline.Run with the
// CUDA backend built by assemble, as run builds it) on a memory, synthetic
// or file source and a null or file sink, beside a pinned host-to-device
// copy measured on the same GPU: the figure is how close the run's input
// rate comes to what PCIe allows, and the output is checked against the
// CPU filter, which run does neither of.

// Stream sources.
const (
	StreamMemory    = "memory"    // seeded noise in host memory
	StreamSynthetic = "synthetic" // a generated tone
	StreamFile      = "file"      // a raw float32 file
)

// Verification levels.
const (
	VerifyNone   = "none"
	VerifySample = "sample" // the first two blocks, and with a memory source a middle and the last ones
	VerifyAll    = "all"    // every sample (memory source)
)

// StreamTarget is the fraction of the pinned H2D rate a stream from memory
// should reach.
const StreamTarget = 0.8

// Tolerance is the largest error, relative to the output RMS, that a GPU
// output may have against the CPU filter.
const Tolerance = 1e-5

// StreamConfig configures Stream.
type StreamConfig struct {
	Device      int
	Taps        []float32
	Complex     bool
	Block       int            // samples per block (I/Q pairs when Complex)
	Slots       int            // ring slots, a power of two
	Transport   cuda.Transport // "" = explicit
	PTXDir      string         // cuda.ptx_dir
	MaxPinnedMB int            // cuda.max_pinned_mb; 0 = sized from the host
	PinSource   bool           // take the memory source's blocks in place (cuda.Options.PinSource)
	Method      filter.Method  // the explicit transport's method (cuda.Options.Method)
	Source      string         // StreamMemory, StreamSynthetic or StreamFile
	Input       string         // StreamFile: raw little-endian float32
	Output      string         // "" = null sink, else a raw float32 file
	Bytes       int64          // memory and synthetic sources: input size
	Seed        uint64         // memory source's noise
	Verify      string
	RefBytes    int64 // pinned H2D reference: bytes per copy
	RefReps     int   // and copies; 0 skips it
	Progress    func(pipeline.Stats)
	Log         zerolog.Logger
}

// StreamResult is what a stream measured.
type StreamResult struct {
	Device         string      `json:"device"`
	Transport      string      `json:"transport"`
	Method         string      `json:"method"` // the explicit transport's method as resolved for the taps
	Source         string      `json:"source"`
	Sink           string      `json:"sink"`
	Taps           int         `json:"taps"`
	Complex        bool        `json:"complex"`
	Block          int         `json:"block_samples"`
	Slots          int         `json:"ring_slots"`
	SamplesIn      uint64      `json:"samples_in"`
	SamplesOut     uint64      `json:"samples_out"`
	Drops          uint64      `json:"drops"` // capture and filter drops: zero unless the run failed
	StartupSeconds float64     `json:"startup_seconds"`
	WallSeconds    float64     `json:"wall_seconds"` // first block to last, startup excluded
	InGiBps        float64     `json:"in_gibps"`
	InOutGiBps     float64     `json:"inout_gibps"`
	GSps           float64     `json:"gsps"`
	PinnedH2D      *CopyResult `json:"pinned_h2d,omitempty"`
	PinnedFraction float64     `json:"pinned_fraction,omitempty"`
	Target         float64     `json:"target_pinned_fraction"`
	SourceBusy     float64     `json:"source_busy"` // fraction of the wall time in the source's reads
	SinkBusy       float64     `json:"sink_busy"`   // and in the sink's writes
	Interrupted    bool        `json:"interrupted"`
	Verify         string      `json:"verify"`
	VerifyErr      float64     `json:"verify_max_rel_err,omitempty"`
	Verified       *bool       `json:"verified,omitempty"`
}

// Stream runs one stream and returns what it measured. On cancellation the
// blocks already read are filtered and written, and the result comes back
// with Interrupted set and a nil error, as for `sigproc run`.
func Stream(ctx context.Context, cfg StreamConfig) (res StreamResult, err error) {
	ch := 1
	if cfg.Complex {
		ch = 2
	}
	format := capture.FormatRF32
	if cfg.Complex {
		format = capture.FormatCF32
	}
	res = StreamResult{Taps: len(cfg.Taps), Complex: cfg.Complex, Block: cfg.Block, Slots: cfg.Slots,
		Target: StreamTarget, Verify: cfg.Verify}
	// The backend as run builds and checks it, before any output exists.
	rc, chain := cfg.runConfig()
	pc := pipeline.Config{BlockSize: cfg.Block, Complex: cfg.Complex, Slots: cfg.Slots, Policy: pipeline.PolicyBlock}
	be, err := assemble.Backend(rc, chain, cfg.Log)
	if err == nil {
		if err = assemble.Preflight(rc, be, pc); err != nil {
			err = errors.Join(err, be.Close())
		}
	}
	if err != nil {
		return res, fmt.Errorf("bench stream: %w", err)
	}
	ran := false // once run, the backend is closed with the sink
	defer func() {
		if !ran {
			err = errors.Join(err, be.Close())
		}
	}()
	if cfg.RefReps > 0 {
		ref, err := PinnedH2D(cfg.Device, cfg.RefBytes, cfg.RefReps)
		if err != nil {
			return res, fmt.Errorf("bench stream: pinned H2D reference: %w", err)
		}
		res.PinnedH2D = &ref
	}

	var src capture.Source
	var x []float32 // the memory source's input, kept for verification
	info := capture.Info{SampleRate: 1, Complex: cfg.Complex}
	switch cfg.Source {
	case StreamMemory:
		x = pageAligned(int(cfg.Bytes / 4 / int64(ch) * int64(ch)))
		FillNoise(x, cfg.Seed)
		src, err = capture.NewMemory(x, info)
		res.Source = fmt.Sprintf("memory: %d MiB of uniform noise (seed %d)", int64(len(x))*4>>20, cfg.Seed)
	case StreamSynthetic:
		src, err = capture.NewSynthetic(capture.SyntheticConfig{Signal: capture.SignalTone, SampleRate: 1,
			Complex: cfg.Complex, FrequencyHz: 0.05, Amplitude: 1, NumSamples: cfg.Bytes / int64(4*ch)})
		res.Source = fmt.Sprintf("synthetic: %d MiB of a 0.05·fs tone", cfg.Bytes>>20)
	case StreamFile:
		src, err = capture.OpenFile(cfg.Input, format, 1)
		res.Source = fmt.Sprintf("file %s (%s)", cfg.Input, format)
	default:
		err = fmt.Errorf("unknown source %q", cfg.Source)
	}
	if err != nil {
		return res, fmt.Errorf("bench stream: %w", err)
	}
	defer src.Close()

	var out sink.Sink = sink.NewNull()
	res.Sink = "null"
	if cfg.Output != "" {
		if err := sink.CheckNotInput(cfg.Output, cfg.Input); err != nil {
			return res, fmt.Errorf("bench stream: %w", err)
		}
		if out, err = sink.CreateFile(cfg.Output, format); err != nil {
			return res, fmt.Errorf("bench stream: %w", err)
		}
		res.Sink = fmt.Sprintf("file %s (%s)", cfg.Output, format)
	}
	// What verification compares: output ranges (in samples) and, for a
	// source that is not kept whole, the input they need.
	var ranges [][2]int
	tee := &teeSource{Source: src}
	switch {
	case cfg.Verify == VerifyAll && x != nil:
		ranges = [][2]int{{0, len(x) / ch}}
	case cfg.Verify == VerifyAll:
		return res, errors.New("bench stream: --verify all needs the memory source (a streamed input is not kept); use sample")
	case cfg.Verify == VerifySample && x != nil:
		ranges = sampleRanges(len(x)/ch, cfg.Block)
	case cfg.Verify == VerifySample:
		ranges = [][2]int{{0, 2 * cfg.Block}}
		tee.keep = make([]float32, 0, 2*cfg.Block*ch)
	}
	check := &keepSink{Sink: out, ch: ch, ranges: ranges, keep: make([][]float32, len(ranges))}
	for i, r := range ranges {
		// Allocated and touched now, so that keeping the output costs the
		// stream a copy and no page faults.
		k := make([]float32, (r[1]-r[0])*ch)
		for j := 0; j < len(k); j += 1024 {
			k[j] = 1
		}
		check.keep[i] = k[:0]
	}

	ran = true
	st, runErr := pipeline.Run(ctx, tee, be, check, pc, pipeline.Options{Progress: cfg.Progress, Log: cfg.Log})
	if d, ok := be.(interface{ Device() cudrv.DeviceInfo }); ok {
		res.Device = d.Device().String()
	}
	res.Transport = be.Name()
	res.Method = cuda.ResolveMethod(cfg.Method, len(cfg.Taps)).String()
	runErr = errors.Join(runErr, be.Close(), out.Close())
	res.fill(st, ch)
	if runErr != nil {
		return res, fmt.Errorf("bench stream: %w", runErr)
	}
	if len(ranges) > 0 && st.SamplesOut > 0 {
		in := x
		if in == nil {
			in = tee.keep
		}
		e, err := verify(cfg.Taps, in, check, cfg.Complex)
		if err != nil {
			return res, fmt.Errorf("bench stream: verify: %w", err)
		}
		ok := e <= Tolerance
		res.VerifyErr, res.Verified = e, &ok
	}
	return res, nil
}

// runConfig is the `sigproc run` config and chain the stream runs: the
// backend is built the way run builds it (assemble.Backend), so that the
// figures are run's.
func (cfg StreamConfig) runConfig() (*config.Config, stage.Chain) {
	transport := cfg.Transport
	if transport == "" {
		transport = cuda.TransportExplicit
	}
	rc := &config.Config{Backend: config.BackendCUDA, BlockSize: cfg.Block, RingSlots: cfg.Slots,
		CUDA: config.CUDA{Device: cfg.Device, Transport: string(transport), MaxPinnedMB: cfg.MaxPinnedMB,
			PTXDir: cfg.PTXDir, PinSource: &cfg.PinSource}}
	chain := stage.FIR(1, cfg.Complex, cfg.Taps)
	chain.Stages[0].Method = cfg.Method.String() // a config's filter.method
	return rc, chain
}

func (r *StreamResult) fill(st pipeline.Stats, ch int) {
	r.SamplesIn, r.SamplesOut = st.SamplesIn, st.SamplesOut
	r.Drops = st.DroppedSamples + st.DroppedFilterSamples
	r.StartupSeconds, r.WallSeconds = st.Startup.Seconds(), st.Wall.Seconds()
	r.Interrupted = st.Interrupted
	r.SourceBusy, r.SinkBusy = st.Busy()
	if r.WallSeconds > 0 {
		in := float64(st.SamplesIn) * float64(4*ch)
		r.InGiBps = in / r.WallSeconds / GiB
		r.InOutGiBps = (in + float64(st.SamplesOut)*float64(4*ch)) / r.WallSeconds / GiB
		r.GSps = float64(st.SamplesOut) / r.WallSeconds / 1e9
	}
	if p := r.PinnedH2D; p != nil && p.GiBps > 0 {
		r.PinnedFraction = r.InGiBps / p.GiBps
	}
}

// pageAligned returns n float32s starting on a page boundary, whole pages
// long where n allows, so a backend can pin them and take blocks in place.
func pageAligned(n int) []float32 {
	const page = 4096
	b := make([]byte, 4*n+page)
	off := int(-uintptr(unsafe.Pointer(&b[0])) & (page - 1))
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[off])), n)
}

// FillNoise fills x with uniform noise in [-1, 1), in parallel blocks each
// seeded by (seed, block index), so the content depends only on seed.
func FillNoise(x []float32, seed uint64) {
	const block = 1 << 20
	nb := (len(x) + block - 1) / block
	work := make(chan int, nb)
	for b := range nb {
		work <- b
	}
	close(work)
	var wg sync.WaitGroup
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

// sampleRanges picks the output ranges (samples) a sampled check covers:
// the first two blocks (the first block boundary), a middle block and the
// last two.
func sampleRanges(samples, block int) [][2]int {
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
	blocks := (samples + block - 1) / block
	add(0, 2*block)
	mid := blocks / 2
	add(mid*block, (mid+1)*block)
	add((blocks-2)*block, samples)
	return r
}

// teeSource keeps the first cap(keep) values its source yields.
type teeSource struct {
	capture.Source
	keep []float32
}

func (t *teeSource) Read(ctx context.Context, dst []float32) (int, error) {
	n, err := t.Source.Read(ctx, dst)
	if room := cap(t.keep) - len(t.keep); room > 0 && n > 0 {
		t.keep = append(t.keep, dst[:min(n, room)]...)
	}
	return n, err
}

// keepSink copies the output that falls in ranges (samples) aside and
// passes everything on.
type keepSink struct {
	sink.Sink
	ch     int
	ranges [][2]int
	keep   [][]float32
	off    int // values written so far
}

func (k *keepSink) Write(v []float32) error {
	for i, r := range k.ranges {
		lo, hi := max(r[0]*k.ch, k.off), min(r[1]*k.ch, k.off+len(v))
		if lo < hi {
			k.keep[i] = append(k.keep[i], v[lo-k.off:hi-k.off]...)
		}
	}
	k.off += len(v)
	return k.Sink.Write(v)
}

// verify compares the kept output ranges with the CPU filter of x and
// returns the largest error relative to each range's output RMS.
func verify(taps, x []float32, k *keepSink, complex bool) (float64, error) {
	ch := k.ch
	worst := 0.0
	for i, rg := range k.ranges {
		got := k.keep[i]
		end := min(rg[1], rg[0]+len(got)/ch, len(x)/ch)
		if end <= rg[0] {
			continue
		}
		// Prime the CPU filter with the ntaps−1 samples before the range.
		p := max(0, rg[0]-(len(taps)-1))
		ref, err := ReferenceFIR(taps, x[p*ch:end*ch], complex, runtime.GOMAXPROCS(0))
		if err != nil {
			return 0, err
		}
		worst = max(worst, filter.MaxErrRMS(got[:(end-rg[0])*ch], ref[(rg[0]-p)*ch:]))
	}
	return worst, nil
}

// ReferenceFIR filters x with filter.FIR, the CPU backend's filter, split
// over workers goroutines. Each worker primes a fresh filter with the
// ntaps−1 samples before its range, so the result equals one filter over
// all of x.
func ReferenceFIR(taps, x []float32, complex bool, workers int) ([]float32, error) {
	const block = 1 << 16
	ch := 1
	if complex {
		ch = 2
	}
	n := len(x) / ch
	y := make([]float32, len(x))
	workers = max(1, min(workers, n/block+1))
	per := (n + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		s0, s1 := w*per, min(n, (w+1)*per)
		if s0 >= s1 {
			continue
		}
		wg.Go(func() {
			fir, err := filter.NewFIR(taps, complex, block)
			if err != nil {
				errs[w] = err
				return
			}
			scratch := make([]float32, block*ch)
			for p := max(0, s0-(len(taps)-1)); p < s0; p += block {
				e := min(p+block, s0)
				if err := fir.Process(scratch[:(e-p)*ch], x[p*ch:e*ch]); err != nil {
					errs[w] = err
					return
				}
			}
			for p := s0; p < s1; p += block {
				e := min(p+block, s1)
				if err := fir.Process(y[p*ch:e*ch], x[p*ch:e*ch]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return y, errors.Join(errs...)
}
