package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// Params is what a run needs beyond its config.
type Params struct {
	ConfigPath string         // the config file: an input the sink never overwrites
	Stdin      io.Reader      // what a stdin source reads
	Stdout     io.Writer      // where a sink path "-" writes
	Version    string         // in a SigMF output's description
	Log        zerolog.Logger // warnings from the source and sink as they happen
}

// Run is an assembled run: the source and backend are open, the sink is
// planned (checked) but not yet created. Create it by passing Started to
// pipeline.Options; after pipeline.Run, call Finish, then Close.
type Run struct {
	Source     capture.Source
	Info       capture.Info
	Chain      stage.Chain // the config's chain at the source's rate, complexness and channels
	Format     string      // the sink's sample format
	Sink       *sink.Deferred
	Backend    pipeline.Backend
	Pipeline   pipeline.Config // the ring's geometry, policy and bound
	MaxSamples int64           // the run's bound (0 = none)

	cfg    *config.Config
	log    zerolog.Logger
	unlink func()   // logs the zmq sink's counters
	closes []func() // logs at Close, last first
}

// Open assembles the run cfg describes, in the order that keeps outputs
// safe: the realtime settings are checked, the source is opened (it names
// the inputs the sink must not overwrite), the chain and sink format
// follow from it, the sink is planned without creating anything, and the
// backend is built last and checked against the stream (Preflight). On
// error everything opened is closed again.
func Open(ctx context.Context, cfg *config.Config, p Params) (r *Run, err error) {
	rt, err := Realtime(cfg)
	if err != nil {
		return nil, err
	}
	src, err := Source(ctx, cfg, p.Stdin)
	if err != nil {
		return nil, err
	}
	r = &Run{Source: src, cfg: cfg, log: p.Log, unlink: func() {}}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
			r = nil
		}
	}()
	r.watchSource()
	r.Info = src.Info()
	if r.MaxSamples, err = cfg.MaxSamples(r.Info.SampleRate); err != nil {
		return r, err
	}
	if r.Chain, err = cfg.ChainOf(r.Info.SampleRate, r.Info.Complex, r.Info.ChannelCount()); err != nil {
		return r, err
	}
	if r.Format, err = cfg.SinkFormat(r.Chain.OutComplex()); err != nil {
		return r, err
	}
	if cfg.Sink.Type == config.SinkWAV && cfg.Sink.Format == "" {
		r.Format = WAVFormat(src)
	}
	// Checked now, created only once the backend and ring have started.
	r.Sink, err = planSink(ctx, cfg, sinkPlan{format: r.Format, chain: r.Chain, inputs: Inputs(cfg, p.ConfigPath, src),
		src: src, stdout: p.Stdout, version: p.Version, log: p.Log})
	if err != nil {
		return r, err
	}
	// The block follows the source unless block_size is given: the CPU's
	// size first, which a CPU backend is built with, then a GPU's. It is
	// resolved in the config, so the control API and the log show it.
	given := cfg.BlockSize
	stored := storedFrameBytes(src, r.Info)
	cfg.BlockSize, _ = sourceBlock(cfg, "cpu", r.Info, stored, runtime.GOMAXPROCS(0), r.Chain)
	if r.Backend, err = Backend(cfg, r.Chain, p.Log); err != nil {
		return r, cfg.Wrap("backend", err)
	}
	var why string
	if cfg.BlockSize, why = sourceBlock(cfg, r.Backend.Name(), r.Info, stored, runtime.GOMAXPROCS(0), r.Chain); cfg.BlockSize != given {
		p.Log.Info().Int("block_size", cfg.BlockSize).Str("reason", why).Msg("block size follows the source (block_size sets it)")
	}
	policy := pipeline.PolicyBlock
	if cfg.EffectiveOverrun() == config.OverrunDrop {
		policy = pipeline.PolicyDrop
	}
	r.Pipeline = pipeline.Config{
		BlockSize:   cfg.BlockSize,
		Complex:     r.Info.Complex,
		Channels:    r.Info.ChannelCount(),
		OutChannels: r.Chain.OutChannels(),
		OutComplex:  r.Chain.OutComplex(),
		Slots:       cfg.RingSlots,
		Source:      ringSource(cfg, src, r.Info),
		Policy:      policy,
		MaxSamples:  r.MaxSamples,
		Realtime:    rt,
	}
	if cfg.RingSlots == 0 {
		// Left to pipeline.Run, which lowers a ring sized for views
		// where the blocks are read into it after all.
		if r.Backend.Name() != "cpu" {
			r.Pipeline.Source.MinSlots = gpuRingMin(cfg, src)
			if c, ok := r.Backend.(interface{ LiveSlotCeiling(pipeline.Layout) int }); ok && r.Pipeline.Source.Live {
				r.Pipeline.Source.MaxSlots = c.LiveSlotCeiling(r.Pipeline.Layout())
			}
		} else {
			// A locked ring is faulted in whole: views gain it nothing.
			r.Pipeline.Source.Views = floatViews(cfg, src) && !rt.Mlock
		}
		rs, l := r.Pipeline.Source, r.Pipeline.Layout()
		p.Log.Debug().Int("ring_slots", l.Slots).Bool("live", rs.Live).Int("max_slots", rs.MaxSlots).Bool("views", rs.Views).Int64("frames", rs.Frames).
			Int("ring_mib", l.Size()>>20).Msg("ring sized from its budget: bytes for an unpaced source (more where its blocks may be views), seconds of slack for a live one")
	}
	// The config checks ring_slots against a block_size it gives; a block
	// chosen here is checked here.
	if l := r.Pipeline.Layout(); cfg.RingSlots > 0 {
		if bytes := int64(l.Slots) * int64(l.SlotStride()); bytes > config.MaxRingBytes {
			return r, cfg.Wrap("ring_slots", fmt.Errorf("%d slots of the %d-frame blocks chosen for this source (block_size unset) need %d MiB, more than the %d MiB limit; lower ring_slots or give a smaller block_size",
				l.Slots, cfg.BlockSize, bytes>>20, int64(config.MaxRingBytes)>>20))
		}
	}
	return r, preflightRing(cfg, r.Backend, &r.Pipeline, p.Log)
}

// preflightRing runs Preflight, and where a default ring of file readers
// needs more pinned memory than the host allows (a small host), halves
// the readers' room down to what any source gets. A live source keeps
// its slack, and a ring_slots given is never changed.
func preflightRing(cfg *config.Config, be pipeline.Backend, pc *pipeline.Config, log zerolog.Logger) error {
	err := Preflight(cfg, be, *pc)
	for errors.Is(err, cuda.ErrPinnedLimit) && cfg.RingSlots == 0 && !cfg.LiveSource() && pc.Source.MinSlots > gpuMinSlots {
		pc.Source.MinSlots = max(gpuMinSlots, pc.Source.MinSlots/2)
		log.Debug().Int("ring_slots", pc.Layout().Slots).Msg("the pinned budget holds no larger ring of file readers")
		err = Preflight(cfg, be, *pc)
	}
	return err
}

// Started creates the outputs (binds a zmq sink); it is the run's
// pipeline.Options.Started, called once the backend and ring have started.
// ctx ends the wait for a FIFO output's reader.
func (r *Run) Started(ctx context.Context) error {
	if err := r.Sink.Open(ctx); err != nil {
		return err
	}
	r.unlink = linkZMQSink(r.Source, r.Sink.Sink(), r.log)
	return nil
}

// Retuned records a retune in the output (control.Options.Retuned): where
// it changed the chain's frequency shift, a SigMF recording starts a
// capture segment at the first output sample the new shift applies to,
// with the centre frequency it gives.
func (r *Run) Retuned(now stage.Chain, done []stage.Retune) {
	if len(done) == 0 {
		return
	}
	r.Sink.Recentre(uint64(done[0].ChainAt), r.Chain.Shift()-now.Shift())
}

// Finish closes the sink after pipeline.Run, exactly once, whatever
// happened: buffered samples are flushed and the SigMF metadata written,
// with a live source's first-sample time. st is made to describe what
// reached the sink (see FinishSink). It returns the sink's error.
func (r *Run) Finish(st *pipeline.Stats) error {
	if ts, ok := r.Source.(capture.Timestamped); ok {
		r.Sink.SetDatetime(ts.FirstSampleTime())
	}
	return FinishSink(r.Sink, st)
}

// Close closes the backend and the source and logs the source's and
// sink's loss counters (ALSA overruns, zmq reconnects).
func (r *Run) Close() error {
	var errs []error
	r.unlink()
	r.unlink = func() {}
	if r.Backend != nil {
		if err := r.Backend.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s backend: %w", r.Backend.Name(), err))
		}
		r.Backend = nil
	}
	if r.Source != nil {
		if err := r.Source.Close(); err != nil && !errors.Is(err, capture.ErrClosed) {
			errs = append(errs, fmt.Errorf("close source: %w", err))
		}
	}
	for i := len(r.closes) - 1; i >= 0; i-- {
		r.closes[i]()
	}
	r.closes = nil
	return errors.Join(errs...)
}

// NonFinite returns the NaN and infinite values the source has delivered
// so far (0 for a source that cannot hold them).
func (r *Run) NonFinite() uint64 {
	if c, ok := r.Source.(capture.NonFiniteCounter); ok {
		return c.NonFinite()
	}
	return 0
}

// watchSource logs a live source's losses as they happen and once more at
// Close: ALSA overruns, a zmq source's malformed messages and reconnects;
// and NaN or infinite input values, at the first and in all.
func (r *Run) watchSource() {
	log := r.log
	if c, ok := r.Source.(capture.NonFiniteCounter); ok {
		// A NaN spreads over a filter's length of output (over whole FFT
		// segments, before it too, by overlap-save); an empty or
		// flat spectrum must not be the only sign of it.
		c.SetNonFiniteHandler(func(total uint64) {
			log.Warn().Uint64("values", total).Msg("input holds NaN or infinite values: each spreads over the filter's length of output after it, and with an FFT filter (method fft, or auto on long filters) over the whole FFT segments around it, outputs before it too (counted in sigproc_input_nonfinite_values_total and at the end)")
		})
		r.closes = append(r.closes, func() {
			if n := c.NonFinite(); n > 0 {
				log.Warn().Uint64("values", n).Msg("NaN or infinite values read from the input in all")
			}
		})
	}
	if z, ok := r.Source.(*capture.ZMQ); ok {
		r.closes = append(r.closes, watchZMQSource(z, log))
	}
	if a, ok := r.Source.(*capture.ALSA); ok {
		// Overruns lose samples: warn at each and in the end, never hide them.
		a.SetOverrunHandler(func(total uint64) {
			log.Warn().Str("device", a.Device()).Uint64("overruns", total).Msg("alsa overrun: samples lost, capture restarted")
		})
		r.closes = append(r.closes, func() {
			if n := a.Overruns(); n > 0 {
				log.Warn().Str("device", a.Device()).Uint64("overruns", n).Msg("alsa overruns during the run: the output has gaps")
			}
		})
	}
}

// watchZMQSource logs a zmq source's malformed messages and reconnections
// as they happen; the returned function logs its counters at the end.
func watchZMQSource(z *capture.ZMQ, log zerolog.Logger) func() {
	z.OnMalformed(func(err error, total uint64) {
		log.Warn().Err(err).Uint64("malformed", total).Str("endpoint", z.Endpoint()).Msg("zmq: malformed message discarded")
	})
	z.OnReconnect(func(total uint64) {
		log.Warn().Uint64("reconnects", total).Str("endpoint", z.Endpoint()).Msg("zmq: sender went away; reconnected (messages in flight are lost)")
	})
	return func() {
		st := z.Stats()
		ev := log.Info()
		if st.Malformed > 0 || st.LostSamples > 0 || st.Reconnects > 0 || st.Restarts > 0 {
			ev = log.Warn()
		}
		ev.Str("endpoint", z.Endpoint()).Uint64("messages", st.Messages).Uint64("malformed", st.Malformed).
			Uint64("reconnects", st.Reconnects).Uint64("lost_samples", st.LostSamples).Uint64("restarts", st.Restarts).
			Uint64("tags_dropped", st.TagsDropped).Msg("zmq source")
	}
}

// linkZMQSink makes a zmq sink forward a zmq source's tags; the returned
// function logs the sink's counters at the end.
func linkZMQSink(src capture.Source, snk sink.Sink, log zerolog.Logger) func() {
	z, ok := snk.(*sink.ZMQ)
	if !ok {
		return func() {}
	}
	if ts, ok := src.(*capture.ZMQ); ok {
		z.ForwardTags(ts)
	}
	log.Info().Str("endpoint", z.Endpoint()).Msg("zmq sink bound")
	return func() {
		st := z.Stats()
		ev := log.Info()
		if st.DroppedMessages > 0 || st.QueueFull > 0 {
			ev = log.Warn()
		}
		ev.Str("endpoint", z.Endpoint()).Uint64("messages", st.Messages).Uint64("dropped_messages", st.DroppedMessages).
			Uint64("dropped_samples", st.DroppedSamples).Uint64("queue_full", st.QueueFull).
			Uint64("connects", st.Connects).Uint64("disconnects", st.Disconnects).Msg("zmq sink")
	}
}

// ringSource is what the default ring depth is sized for: a live source's
// rate, and the frames a source of known length holds.
func ringSource(cfg *config.Config, src capture.Source, info capture.Info) pipeline.RingSource {
	rs := pipeline.RingSource{Live: cfg.LiveSource(), Rate: info.SampleRate}
	if l, ok := src.(interface{ Len() (int64, bool) }); ok {
		if n, known := l.Len(); known && n > 0 {
			rs.Frames = n
		}
	}
	return rs
}

// floatViews says whether a CPU backend may take src's blocks in place
// from its memory: a file source that offers views of float32 values
// (stdin is a capture.Raw too, but can't be mapped).
func floatViews(cfg *config.Config, src capture.Source) bool {
	v, ok := src.(pipeline.Viewer)
	if !ok || cfg.Source.Type != config.SourceFile {
		return false
	}
	ev, ok := v.(pipeline.EncodedViewer)
	return !ok || ev.Encoding() == ""
}

// gpuMinSlots is the least ring a CUDA backend gets from an unpaced
// source: room for the explicit transport's 8 blocks in flight, and as
// many for the producer to fill meanwhile. A file read
// several blocks at once (pipeline.ParallelSource) gets gpuFileSlots, room
// for its readers to take the next blocks meanwhile, where the pinned
// budget holds it, else gpuMinSlots (preflightRing): 16 slots ran a
// 16 GiB file 20-30 % slower than 32 on the H200 host.
const (
	gpuMinSlots  = 16
	gpuFileSlots = 32
)

// gpuRingMin is the least ring a CUDA backend gets for src: the CUDA
// transports keep part of the ring in flight (explicitGeometry), a
// file read several blocks at once gets room for its readers besides,
// and a live source keeps its slack. Only a regular file is read several
// blocks at once, so stdin, which is a capture.Raw too, gets the least.
func gpuRingMin(cfg *config.Config, src capture.Source) int {
	if cfg.LiveSource() {
		return pipeline.LiveSlots
	}
	if _, ok := src.(pipeline.ParallelSource); ok && cfg.Source.Type == config.SourceFile {
		return gpuFileSlots
	}
	return gpuMinSlots
}

// ThroughputBlockBytes is the block a CUDA backend gets from an unpaced
// source when block_size is not given, in float32 on the device (a ring
// slot's size), and so at most that as the source stores it: large
// enough that the per-block costs (a copy's setup, a launch, the
// hand-off) vanish beside the copy at PCIe speed, and that the blocks in
// flight cover the pinning of a file's next window (backend/cuda's
// DefaultPinWindow). On the H200 host a 16 GiB cf32 file ran at 3.1 GS/s
// with 8 MiB blocks and 3.85 with 16 MiB. Stored integers are fewer bytes
// a block, and more blocks did not pay: on an H100 host (2026-12-06) a
// 16 GiB cs8 file ran at 20.0–21.1 GS/s in 2 Mi-sample blocks (4 MiB as
// stored) against 16.8–20.0 in 4 Mi (32 MiB slots, twice this), its
// readers busy 0.06–0.15 of the wall rather than 0.92–0.98: the slots
// the readers fill keep up best at 64–128 MiB in all (bench/feedprobe.cu
// staging, 14 threads: 38.2–40.5 GiB/s for 32 slots of 8 MiB, 46.6–47.9
// for 16 of 8 MiB or 32 of 2 MiB, 39.8–42.4 for 16 of 2 MiB).
const ThroughputBlockBytes = 16 << 20

// MaxBlockBytes bounds a block chosen for throughput, as float32, and
// what each stage outputs for it.
const MaxBlockBytes = 4 * ThroughputBlockBytes

// chainBytes is the most bytes of float32 a stage of c outputs for a
// block of n input frames.
func chainBytes(c stage.Chain, n int) int64 {
	var most int64
	for i := range c.Stages {
		head := c
		head.Stages = c.Stages[:i+1]
		most = max(most, int64(head.MaxOut(n))*int64(pipeline.FrameValues(head.OutChannels(), head.OutComplex()))*4)
	}
	return most
}

// CPUThroughputBlock is the block, in frames, the CPU backend gets from an
// unpaced source on one core when block_size is not given: the size every
// one-core figure of docs/BENCHMARKS.md was measured at. On more cores it
// gets cpu.BlockFrames, the block the backend cuts into segments of a
// size that pays for their hand-off.
const CPUThroughputBlock = 1 << 16

// storedFrameBytes is the bytes of one frame as src stores it: a GPU
// copies integer recordings as stored and converts them there, so what
// crosses PCIe a block is these, not the float32 frames.
func storedFrameBytes(src capture.Source, info capture.Info) int {
	if ev, ok := src.(pipeline.EncodedViewer); ok {
		if enc := ev.Encoding(); enc != "" {
			return pipeline.EncodingSize(enc) * info.Channels()
		}
	}
	return 4 * info.Channels()
}

// sourceBlock returns the run's block size and why it differs from
// block_size: block_size when given; for a file or unpaced synthetic
// source, on the CPU the sizes above for procs cores, and on a GPU
// ThroughputBlockBytes of float32 frames (powers of two, at least
// CPUThroughputBlock). A live source, stdin (a pipe may be live) and zmq
// keep small blocks, for latency.
func sourceBlock(cfg *config.Config, backend string, info capture.Info, stored, procs int, chain stage.Chain) (int, string) {
	throughput := cfg.Source.Type == config.SourceFile || (cfg.Source.Type == config.SourceSynthetic && !cfg.Source.Paced)
	if !cfg.BlockSizeDefault() || !throughput {
		return cfg.BlockSize, ""
	}
	block := CPUThroughputBlock
	switch {
	case backend != "cpu":
		// Doubled while the next block fits ThroughputBlockBytes as
		// float32, and so as stored (at most 4 bytes a value).
		for next := 2 * block; block < config.MaxBlockSize && next*4*info.Channels() <= ThroughputBlockBytes; next *= 2 {
			block = next
		}
	case procs > 1:
		block = min(cpu.BlockFrames(procs), config.MaxBlockSize)
	}
	// Frames of many channels (a channelizer's recording read back) come
	// fewer to a block, and so do those a stage makes many of (a
	// channelizer with little decimation): at most MaxBlockBytes of
	// float32 in and out of every stage, which leaves a block of one
	// complex channel, and of a few, as it was.
	for block > 1 && (block*4*info.Channels() > MaxBlockBytes || chainBytes(chain, block) > MaxBlockBytes) {
		block /= 2
	}
	return block, fmt.Sprintf("an unpaced %s source on the %s backend (%d cores): blocks of %d KiB as stored, for throughput", cfg.Source.Type, backend, procs, block*stored>>10)
}
