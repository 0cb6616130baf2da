//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

// The explicit transport keeps up to explicitGeometry's inFlight blocks
// between the ring and the consumer, on three streams, so that one
// block's copy in, another's filtering and a third's copy out overlap.
// Block k (absolute ring index) uses device and host buffer set k mod sets,
// where sets = inFlight+1:
//
//	in:   H2D ring slot → dIn[k][hist:]        then record copied[k] (the slot stays acquired)
//	run:  wait copied[k]; convert stored integers; filt dIn[k] → dOut[k]
//	      ([history | block] layout); D2D tail of dIn[k] → dIn[k+1][:hist]
//	      then record hist[k]
//	out:  wait hist[k]; D2H dOut[k] → hOut[k]  then record done[k]
//
// Each step waits only for what it reads: the copies in follow one
// another on the copy engine whatever the kernels and the copies back
// do. (With each block's steps on one of four streams in turn, a copy in
// waited behind the kernels and copy back queued before it on its stream,
// and the copy engine ran dry a quarter of the time.) The run stream
// orders the kernels, so block k reads the history block k-1 wrote.
//
// Next submits every published block it may, then waits for the oldest
// one's done event, releases its ring slot (its input has been copied) and
// returns hOut of it. A set is
// reused by block k+sets only after block k was returned and the consumer
// called Next again, so a returned Output stays valid until the next call,
// and block k+1's history write never lands in a buffer still in use
// (block k+1-sets finished before block k was submitted).

// The explicit transport's streams, in explicit.streams.
const (
	sIn      = iota // copies to the device
	sRun            // conversions, retunes, kernels and history carries, in block order
	sOut            // copies back
	nStreams        // how many
)

// blockFilter is what the explicit transport runs on each block once it
// is in device memory. Blocks are launched strictly in order on one
// stream, so a filter may keep state on the device (a chain's stage
// histories, a phase) and on the host (a decimation phase) from one Launch
// to the next. It is used from the consumer's goroutine only.
type blockFilter interface {
	// HistoryValues is how many input values the transport keeps before
	// each block in the [history | block] layout Launch reads (zeros at
	// the start of the stream); 0 when the filter keeps its own.
	HistoryValues() int
	// MaxOutValues bounds the output values of a block of n input values.
	MaxOutValues(n int) int
	// Launch enqueues the filter of the block of n new input values at
	// in (after HistoryValues() values of history) on stream st, writing
	// its outputs to out, and returns how many output values it writes.
	Launch(st cudrv.Stream, in, out cudrv.DevicePtr, n int) (int, error)
	// Close frees what the filter holds; its launches have finished.
	Close() error
}

// batchBlocks runs a BatchFIR as the explicit transport's blockFilter:
// one output per input value, history (ntaps−1)·channels values.
type batchBlocks struct{ *BatchFIR }

func (f batchBlocks) MaxOutValues(n int) int { return n }

func (f batchBlocks) Launch(st cudrv.Stream, in, out cudrv.DevicePtr, n int) (int, error) {
	return n, f.BatchFIR.Launch(st, in, out, n/f.Channels())
}

type explicitSet struct {
	dIn, dOut cudrv.DevicePtr
	hOut      []float32
	hist      cudrv.Event // this block's tail is in the next set's history
	done      cudrv.Event // this block's output is in hOut
	// copyIn and copied bracket the copy to the device, and launch (to
	// hist) the filter: with hist and done they time the block's steps
	// for the busy shares (DeviceBusy).
	copyIn, copied, launch cudrv.Event
	dRaw                   cudrv.DevicePtr // stored values before conversion (conv), else 0
	queued                 time.Time       // when enqueue began (with a timeline)
	inPlace                bool            // copied from the source's pinned memory
	seq                    uint64          // the block's sequence number and capture time,
	ts                     int64           // handed to the consumer with its output
	n                      int             // input values
	nOut                   int             // output values
}

// explicit is the explicit transport: blocks copied to device memory,
// filtered by a blockFilter and copied back, several in flight (see the
// top of this file). Its ring and output buffers are pinned, unless
// pageable (transport explicit-pageable), where they are Go memory and
// the driver stages each copy.
type explicit struct {
	b        *backend // the run's configuration, context and allocations
	pageable bool

	l        pipeline.Layout
	ring     *pipeline.Ring
	region   *pinnedRegion // the source's memory, when blocks come in place
	conv     *converter    // the region's stored integers to float32, or nil
	readAll  bool          // the region is offered, but every block is read into the ring (read_share 1)
	filt     blockFilter
	tune     explicitTune   // retunes waiting for the next block (x_retune_cuda.go)
	streams  []cudrv.Stream // sIn, sRun and sOut, once made
	sets     []explicitSet
	hist     int    // history values, filt.HistoryValues()
	inFlight int    // the most blocks submitted and not yet returned
	submit   uint64 // ring index of the next block to submit
	ret      uint64 // ring index of the next block to return
	busy     pipeline.DeviceBusy
	timeline *timeline // at log level trace: each block's steps, logged as it returns
}

// timeline is what a trace-level log needs to place each block's steps on
// one clock: an event recorded, and the host's time taken, at the start.
type timeline struct {
	base cudrv.Event
	t0   time.Time
}

// olsBlocks runs an OLSFIR as the explicit transport's blockFilter, with
// the same layout and output count as batchBlocks.
type olsBlocks struct{ *OLSFIR }

func (f olsBlocks) MaxOutValues(n int) int { return n }

func (f olsBlocks) Launch(st cudrv.Stream, in, out cudrv.DevicePtr, n int) (int, error) {
	return n, f.OLSFIR.Launch(st, in, out, n/f.Channels())
}

// start makes the filter, the streams, the buffer sets and the ring.
func (x *explicit) start(l pipeline.Layout) (*pipeline.Ring, error) {
	if err := x.setup(l); err != nil {
		return nil, err
	}
	return x.ring, nil
}

func (x *explicit) setup(l pipeline.Layout) error {
	x.l = l
	filt, err := x.b.newBlockFilter(l)
	if err != nil {
		return err
	}
	x.filt = filt
	x.inFlight = explicitGeometry(l.Slots)
	for range nStreams {
		s, err := cudrv.NewStream()
		if err != nil {
			return fmt.Errorf("gpu: create stream: %w", err)
		}
		x.streams = append(x.streams, s)
	}
	// A plain fir is retunable: history for the most taps it may take.
	// A chain takes new taps within its filters' history.
	switch f := filt.(type) {
	case batchBlocks:
		if err := x.retunable(f.BatchFIR); err != nil {
			return err
		}
	case *ChainFilter:
		x.chainRetunable(f)
	}
	x.hist = x.filt.HistoryValues()
	vals := l.BlockValues()
	outVals := x.filt.MaxOutValues(vals)
	inBytes, outBytes := int64(x.hist+vals)*4, int64(outVals)*4
	x.sets = make([]explicitSet, x.inFlight+1)
	for i := range x.sets {
		s := &x.sets[i]
		if s.dIn, err = x.b.alloc(inBytes); err != nil {
			return err
		}
		if s.dOut, err = x.b.alloc(outBytes); err != nil {
			return err
		}
		// Timing events: recording one costs about a microsecond more.
		evs, err := cudrv.MakeEvents(5)
		if err != nil {
			return err
		}
		s.hist, s.done, s.copyIn, s.copied, s.launch = evs[0], evs[1], evs[2], evs[3], evs[4]
		if !x.pageable {
			h, err := x.b.pin(outBytes, false, false)
			if err != nil {
				return err
			}
			s.hOut = unsafe.Slice((*float32)(h.Ptr()), outVals)
		} else {
			s.hOut = make([]float32, outVals)
		}
	}
	// The stream starts from rest: the first block's history is zeros,
	// cleared on the run stream (a non-blocking stream does not wait for
	// the legacy default stream).
	if x.hist > 0 {
		if err := x.streams[sRun].MemsetD32(x.sets[0].dIn, 0, int64(x.hist)); err != nil {
			return fmt.Errorf("gpu: clear history: %w", err)
		}
	}
	var mem []byte
	if !x.pageable {
		ringMem, err := x.b.pin(int64(l.Size()), false, false)
		if err != nil {
			return err
		}
		mem = ringMem.Bytes()[:l.Size()]
	} else {
		mem = pipeline.AlignedBytes(l.Size())
	}
	x.ring, err = pipeline.NewRing(mem, l)
	if err != nil {
		return err
	}
	if x.b.opts.Log.GetLevel() <= zerolog.TraceLevel && zerolog.GlobalLevel() <= zerolog.TraceLevel {
		evs, err := cudrv.MakeEvents(1)
		if err != nil {
			return err
		}
		x.timeline = &timeline{base: evs[0]}
		if err := x.timeline.base.Record(x.streams[sIn]); err != nil {
			return fmt.Errorf("gpu: record event: %w", err)
		}
		x.timeline.t0 = time.Now()
	}
	return nil
}

// next submits what the producer has published, up to the in-flight
// bound, and returns the oldest block's output once its copy back is done.
func (x *explicit) next(ctx context.Context) (pipeline.Output, error) {
	// Submit what has been published, up to the in-flight bound; with
	// nothing in flight, wait for the producer.
	for x.submit-x.ret < uint64(x.inFlight) {
		blk, ok := x.ring.Peek(x.submit)
		if !ok {
			if x.submit > x.ret {
				break
			}
			if _, err := x.ring.Next(ctx); err != nil {
				return pipeline.Output{}, err // io.EOF once drained
			}
			continue // published now: Peek has it
		}
		if err := x.enqueue(x.submit, blk); err != nil {
			return pipeline.Output{}, err
		}
		x.submit++
	}
	if x.region != nil { // with the blocks in flight queued: see pinnedRegion
		if err := x.region.ahead(); err != nil {
			return pipeline.Output{}, fmt.Errorf("gpu: %w", err)
		}
	}
	s := &x.sets[x.ret%uint64(len(x.sets))]
	if err := s.done.Synchronize(); err != nil {
		return pipeline.Output{}, fmt.Errorf("gpu: block %d: %w", s.seq, err)
	}
	if s.n > 0 {
		if err := x.time(s); err != nil {
			return pipeline.Output{}, fmt.Errorf("gpu: block %d: %w", s.seq, err)
		}
	}
	// The block's input has been copied: its ring slot is free again, and
	// so are the source's windows that no later block reads.
	x.ring.Release()
	x.ret++
	if x.region != nil {
		if err := x.region.release(x.ret); err != nil {
			return pipeline.Output{}, fmt.Errorf("gpu: %w", err)
		}
	}
	return blockOutput(s.seq, s.ts, s.n, x.l.Channels, s.hOut[:s.nOut]), nil
}

// enqueue submits ring block k (see the top of this file).
func (x *explicit) enqueue(k uint64, blk pipeline.Block) error {
	nsets := uint64(len(x.sets))
	s, next := &x.sets[k%nsets], &x.sets[(k+1)%nsets]
	in, run, out := x.streams[sIn], x.streams[sRun], x.streams[sOut]
	s.seq, s.ts, s.n = blk.Seq, blk.Timestamp, len(blk.Samples)
	if blk.Raw != nil {
		if x.conv == nil {
			return fmt.Errorf("gpu: block %d is stored encoded, and no conversion was set up", blk.Seq)
		}
		s.n = len(blk.Raw) / x.conv.size
	}
	taps, changes := x.tune.take(s.n) // new taps from this block on, if a retune came
	s.inPlace = false
	if x.timeline != nil {
		s.queued = time.Now()
	}
	if err := s.copyIn.Record(in); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	if s.n > 0 {
		var err error
		switch {
		case blk.Raw != nil:
			// As stored, in place or read into the ring; converted into
			// the set's input on the run stream.
			raw := blk.Raw[:s.n*x.conv.size]
			if x.region != nil && x.region.holds(unsafe.Pointer(&raw[0])) {
				s.inPlace = true
				err = x.region.copyIn(k, s.dRaw, raw, in)
			} else {
				err = in.CopyHtoD(s.dRaw, unsafe.Pointer(&raw[0]), int64(len(raw)))
			}
		case x.region != nil && x.region.holds(unsafe.Pointer(&blk.Samples[0])):
			s.inPlace = true
			err = x.region.copyIn(k, s.dIn+cudrv.DevicePtr(x.hist*4), unsafe.Slice((*byte)(unsafe.Pointer(&blk.Samples[0])), 4*s.n), in)
		default:
			err = in.CopyHtoD(s.dIn+cudrv.DevicePtr(x.hist*4), unsafe.Pointer(&blk.Samples[0]), int64(s.n)*4)
		}
		if err != nil {
			return fmt.Errorf("gpu: copy block %d to device: %w", blk.Seq, err)
		}
	}
	if err := s.copied.Record(in); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	if err := run.Wait(s.copied); err != nil {
		return fmt.Errorf("gpu: stream wait: %w", err)
	}
	if blk.Raw != nil && s.n > 0 {
		if err := x.conv.launch(run, s.dRaw, s.dIn+cudrv.DevicePtr(x.hist*4), s.n); err != nil {
			return fmt.Errorf("gpu: convert block %d: %w", blk.Seq, err)
		}
	}
	if taps != nil {
		if err := x.loadTaps(run, taps); err != nil {
			return fmt.Errorf("gpu: retune at block %d: %w", blk.Seq, err)
		}
	}
	if changes != nil {
		if err := x.tune.chain.Retune(run, changes); err != nil {
			return fmt.Errorf("gpu: retune at block %d: %w", blk.Seq, err)
		}
	}
	if err := s.launch.Record(run); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	var err error
	if s.nOut, err = x.filt.Launch(run, s.dIn, s.dOut, s.n); err != nil {
		return fmt.Errorf("gpu: block %d: %w", blk.Seq, err)
	}
	if x.hist > 0 {
		if err := run.CopyDtoD(next.dIn, s.dIn+cudrv.DevicePtr(s.n*4), int64(x.hist)*4); err != nil {
			return fmt.Errorf("gpu: carry history of block %d: %w", blk.Seq, err)
		}
	}
	if err := s.hist.Record(run); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	if err := out.Wait(s.hist); err != nil {
		return fmt.Errorf("gpu: stream wait: %w", err)
	}
	if s.nOut > 0 {
		if err := out.CopyDtoH(unsafe.Pointer(&s.hOut[0]), s.dOut, int64(s.nOut)*4); err != nil {
			return fmt.Errorf("gpu: copy block %d to host: %w", blk.Seq, err)
		}
	}
	if err := s.done.Record(out); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	return nil
}

// time adds the steps of the block of set s, which is done, to the busy
// times. The copies in follow one another on their stream, each timed
// from when the one before ended (or from when it was queued, if later),
// so their share is the copy engine's; the kernels' likewise, and a copy
// back counts from its block's kernels' end, its wait behind the copy
// back before it included.
func (x *explicit) time(s *explicitSet) error {
	steps := [...]struct {
		from, to cudrv.Event
		sum      *time.Duration
	}{{s.copyIn, s.copied, &x.busy.CopyIn}, {s.launch, s.hist, &x.busy.Kernel}, {s.hist, s.done, &x.busy.CopyOut}}
	for _, st := range steps {
		sec, err := cudrv.Elapsed(st.from, st.to)
		if err != nil {
			return err
		}
		*st.sum += time.Duration(sec * float64(time.Second))
	}
	if x.timeline != nil {
		return x.timeline.log(x.b.opts.Log, s)
	}
	return nil
}

// log writes the steps of the block of set s, which is done, in ms since
// the start: when the host queued it, when its copy in began (its stream
// reached it) and ended, when its kernels began and ended (with the
// history carry), when its copy back ended, and when it was returned.
func (t *timeline) log(log zerolog.Logger, s *explicitSet) error {
	ev := log.Trace().Uint64("block", s.seq).Bool("in_place", s.inPlace).
		Float64("queued_ms", t.since(s.queued))
	for _, e := range [...]struct {
		name string
		ev   cudrv.Event
	}{{"copy_in_ms", s.copyIn}, {"copied_ms", s.copied}, {"launch_ms", s.launch}, {"hist_ms", s.hist}, {"done_ms", s.done}} {
		sec, err := cudrv.Elapsed(t.base, e.ev)
		if err != nil {
			return err
		}
		ev = ev.Float64(e.name, sec*1e3)
	}
	ev.Float64("returned_ms", t.since(time.Now())).Msg("block timeline")
	return nil
}

// since is the host's time from the start to at, in ms.
func (t *timeline) since(at time.Time) float64 { return float64(at.Sub(t.t0).Microseconds()) / 1e3 }

// DeviceBusy returns the copy and kernel times of the blocks returned so
// far (pipeline.DeviceTimer).
func (x *explicit) DeviceBusy() pipeline.DeviceBusy { return x.busy }

// close waits for everything submitted and frees the streams, events,
// kernels and the source's pinned windows; the device and pinned buffers
// are the backend's to free.
func (x *explicit) close() (keep bool, err error) {
	if x.filt == nil {
		return false, nil // start made nothing to stop
	}
	x.tune.shut()
	var errs []error
	for _, s := range x.streams {
		if err := s.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: explicit transport: %w", err))
		}
	}
	if x.region != nil {
		errs = append(errs, x.region.close())
	}
	for i := range x.sets {
		s := &x.sets[i]
		errs = append(errs, cudrv.DestroyEvents([]cudrv.Event{s.hist, s.done, s.copyIn, s.copied, s.launch}))
	}
	if x.timeline != nil {
		errs = append(errs, cudrv.DestroyEvents([]cudrv.Event{x.timeline.base}))
	}
	for _, s := range x.streams {
		if err := s.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: destroy stream: %w", err))
		}
	}
	errs = append(errs, x.filt.Close())
	if x.conv != nil {
		errs = append(errs, x.conv.close())
	}
	return false, errors.Join(errs...)
}
