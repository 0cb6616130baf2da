//go:build cuda

package gpubench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/internal/cudrv"

	"gorgonia.org/cu"
)

// The streaming pipeline: a bounded set of buffer sets (slots) cycles
// through four goroutines,
//
//	producer ──filled──▶ submitter ──submitted──▶ waiter ──done──▶ writer ──free──▶ producer
//
//   - the producer takes a free slot and fills its pinned input buffer from
//     the source behind the previous chunk's last ntaps−1 samples (source
//     mode), or just names the next range of the input (memory mode);
//   - the submitter, the caller's goroutine on its locked OS thread with
//     the context, enqueues H2D → BatchFIR.Launch → D2H on the slot's
//     stream with an event before and after each stage;
//   - the waiter, on a second locked OS thread with the same context
//     current, synchronises each chunk's last event in submission order and
//     reads the stage times;
//   - the writer hands the output to the sink and frees the slot.
//
// Every channel has room for all the slots, so no send ever blocks, and a
// slot is reused only after its D2H has finished: the pipeline holds
// Buffers chunks at most, whatever the input's size (back-pressure; nothing
// is dropped).

// maxZeroReads bounds consecutive (0, nil) reads from a source.
const maxZeroReads = 100

// HostFloats is page-aligned host memory outside the Go heap, the input or
// output of RunStreamMemory (which pins it with cuMemHostRegister for the
// run). Values is the usable view.
type HostFloats struct {
	Values []float32
	mem    []byte
}

// AllocHostFloats maps n float32 values of zeroed, page-aligned host
// memory. Free unmaps it.
func AllocHostFloats(n int) (*HostFloats, error) {
	if n <= 0 {
		return nil, fmt.Errorf("gpu: host floats: n must be > 0, got %d", n)
	}
	mem, err := cudrv.MmapBytes(cudrv.PageAlign(int64(n) * 4))
	if err != nil {
		return nil, err
	}
	return &HostFloats{Values: unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), n), mem: mem}, nil
}

// Free unmaps the memory; Values must not be used afterwards. Idempotent.
func (h *HostFloats) Free() error {
	if h == nil || h.mem == nil {
		return nil
	}
	mem := h.mem
	h.mem, h.Values = nil, nil
	if err := syscall.Munmap(mem); err != nil {
		return fmt.Errorf("gpu: unmap host floats: %w", err)
	}
	return nil
}

// streamSlot is one buffer set.
type streamSlot struct {
	dIn, dOut cu.DevicePtr
	hIn, hOut *cudrv.HostBuf // source mode only
	in, out   []float32      // views of hIn ([history | chunk]) and hOut
	ev        [4]cu.Event
	stream    int
}

// chunkJob travels through the pipeline's channels.
type chunkJob struct {
	slot   int
	chunk  int
	start  int64 // first new value's index in the input
	n      int   // new values
	failed bool  // submission failed part way: the waiter only drains the stream
	ok     bool  // finished on the GPU; the output is valid
	timing ChunkTiming
}

type streamEngine struct {
	cfg       StreamConfig
	mode      string
	ch        int
	hist      int // history values, (ntaps−1)·ch
	chunkVals int
	cuctx     *cudrv.Context
	fir       *cuda.BatchFIR
	streams   []cu.Stream
	slots     []streamSlot
	t0        cu.Event
	hostT0    time.Time

	// memory mode: the caller's buffers, pinned for the run
	in, out       []float32
	regIn, regOut *cudrv.HostBuf

	mu      sync.Mutex
	firstEr error
	cancel  context.CancelCauseFunc
}

// fail records the first error and stops the pipeline.
func (e *streamEngine) fail(err error) {
	e.mu.Lock()
	if e.firstEr == nil {
		e.firstEr = err
	}
	e.mu.Unlock()
	e.cancel(err)
}

func (e *streamEngine) err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.firstEr
}

// RunStream filters everything src yields through the GPU, chunk by chunk,
// and writes the output to dst in order: src → pinned input buffers → H2D
// → batch FIR → D2H → pinned output buffers → dst, on cfg.Streams streams
// with cfg.Buffers chunks in flight at most. Memory stays bounded by the
// buffers, whatever the input's length. It locks the calling goroutine's OS
// thread and creates (and destroys) its own context. Cancelling ctx stops
// reading, lets the chunks in flight finish and reach dst, frees
// everything and returns the stats with Interrupted set and ctx's error.
func RunStream(ctx context.Context, cfg StreamConfig, src StreamReader, dst StreamWriter) (StreamResult, error) {
	if src == nil || dst == nil {
		return StreamResult{}, errors.New("gpu: stream: nil source or sink")
	}
	if err := cfg.validate(); err != nil {
		return StreamResult{}, err
	}
	e := newStreamEngine(cfg, StreamModeSource)
	return e.run(ctx, func(ctx context.Context, free chan int, filled chan<- chunkJob) error {
		return e.readSource(ctx, src, free, filled)
	}, func(j *chunkJob) error {
		if err := dst.Write(e.slots[j.slot].out[:j.n]); err != nil {
			return fmt.Errorf("gpu: stream: write chunk %d: %w", j.chunk, err)
		}
		return nil
	})
}

// RunStreamMemory filters in into out (equal lengths, a whole number of
// samples) through the GPU with no host copies: both are pinned with
// cuMemHostRegister for the run, and each chunk is copied straight from in
// (with the ntaps−1 samples before it as history) to device memory, and
// its output straight back into out. The measurement is the GPU pipeline
// against PCIe. Otherwise as RunStream.
func RunStreamMemory(ctx context.Context, cfg StreamConfig, in, out *HostFloats) (StreamResult, error) {
	if err := cfg.validate(); err != nil {
		return StreamResult{}, err
	}
	switch {
	case in == nil || out == nil || in.mem == nil || out.mem == nil:
		return StreamResult{}, errors.New("gpu: stream: memory mode needs input and output from AllocHostFloats")
	case len(in.Values) != len(out.Values):
		return StreamResult{}, fmt.Errorf("gpu: stream: input has %d values, output %d; want equal", len(in.Values), len(out.Values))
	case len(in.Values)%cfg.channels() != 0:
		return StreamResult{}, fmt.Errorf("gpu: stream: complex input has odd length %d", len(in.Values))
	}
	e := newStreamEngine(cfg, StreamModeMemory)
	e.in, e.out = in.Values, out.Values
	return e.runMemory(ctx, in.mem, out.mem)
}

func newStreamEngine(cfg StreamConfig, mode string) *streamEngine {
	ch := cfg.channels()
	return &streamEngine{
		cfg: cfg, mode: mode, ch: ch,
		hist:      (len(cfg.Taps) - 1) * ch,
		chunkVals: cfg.ChunkSamples * ch,
	}
}

func (e *streamEngine) runMemory(ctx context.Context, inMem, outMem []byte) (StreamResult, error) {
	total := int64(len(e.in))
	return e.runWith(ctx, func() error {
		var err error
		if e.regIn, err = cudrv.RegisterHost(inMem, false); err != nil {
			return fmt.Errorf("gpu: stream: pin the input (%d MiB): %w", len(inMem)>>20, err)
		}
		if e.regOut, err = cudrv.RegisterHost(outMem, false); err != nil {
			return fmt.Errorf("gpu: stream: pin the output (%d MiB): %w", len(outMem)>>20, err)
		}
		return nil
	}, func(ctx context.Context, free chan int, filled chan<- chunkJob) error {
		chunk := 0
		for start := int64(0); start < total; start += int64(e.chunkVals) {
			var s int
			select {
			case <-ctx.Done():
				return nil
			case s = <-free:
			}
			if ctx.Err() != nil {
				free <- s
				return nil
			}
			n := int(min(int64(e.chunkVals), total-start))
			filled <- chunkJob{slot: s, chunk: chunk, start: start, n: n}
			chunk++
		}
		return nil
	}, nil)
}

func (e *streamEngine) run(ctx context.Context, produce func(context.Context, chan int, chan<- chunkJob) error,
	consume func(*chunkJob) error) (StreamResult, error) {
	return e.runWith(ctx, nil, produce, consume)
}

// runWith sets up the context and buffers (plus extra setup), runs the
// pipeline and tears everything down.
func (e *streamEngine) runWith(ctx context.Context, setup func() error,
	produce func(context.Context, chan int, chan<- chunkJob) error,
	consume func(*chunkJob) error) (res StreamResult, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if e.cuctx, err = cudrv.NewContext(e.cfg.Device, cu.SchedSpin|cu.MapHost); err != nil {
		return StreamResult{}, err
	}
	defer func() {
		if cerr := e.close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		err = errors.Join(err, e.cuctx.Close())
	}()
	info := e.cuctx.Info
	nbuf := e.cfg.buffers()
	res = StreamResult{
		Device: info.String(), Mode: e.mode, Taps: len(e.cfg.Taps), Complex: e.cfg.Complex,
		ChunkSamples: e.cfg.ChunkSamples, Streams: e.cfg.Streams, Buffers: nbuf,
	}

	if setup != nil {
		if err := setup(); err != nil {
			return res, err
		}
	}
	if e.cfg.RefReps > 0 {
		ref, err := measureCopy(MemPinned, DirH2D, e.cfg.RefBytes, e.cfg.RefReps, 2)
		if err != nil {
			return res, fmt.Errorf("gpu: stream: pinned H2D reference: %w", err)
		}
		res.PinnedH2D = &ref
	}
	if err := e.allocate(nbuf); err != nil {
		return res, err
	}

	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.cancel = cancel
	free := make(chan int, nbuf)
	filled := make(chan chunkJob, nbuf)
	submitted := make(chan chunkJob, nbuf)
	done := make(chan chunkJob, nbuf)
	for i := range nbuf {
		free <- i
	}
	var timeline []ChunkTiming
	var samplesOut int64
	var wg sync.WaitGroup

	// All streams start after t0, so every event time is relative to it.
	if err := e.t0.Record(e.streams[0]); err != nil {
		return res, fmt.Errorf("gpu: record event: %w", err)
	}
	for _, s := range e.streams[1:] {
		if err := s.Wait(e.t0, 0); err != nil {
			return res, fmt.Errorf("gpu: stream wait: %w", err)
		}
	}
	e.hostT0 = time.Now()

	// A source error ends the input like EOF: what was read before it
	// (and with it) is still filtered and written, then it is returned.
	var readErr error
	wg.Go(func() {
		defer close(filled)
		readErr = produce(ictx, free, filled)
	})
	wg.Go(func() {
		defer close(done)
		timeline = e.wait(submitted, done)
	})
	wg.Go(func() {
		var werr error
		for j := range done {
			// Chunks that finished are written even after a cancel (Ctrl-C
			// flushes them); after an error they are not.
			if j.ok && werr == nil && e.err() == nil {
				if consume != nil {
					if werr = consume(&j); werr != nil {
						e.fail(werr)
					}
				}
				if werr == nil {
					samplesOut += int64(j.n / e.ch)
					if e.cfg.Progress != nil {
						e.cfg.Progress(samplesOut)
					}
				}
			}
			free <- j.slot
		}
	})

	// The submitter: this goroutine, which owns the context.
	var samplesIn int64
	// Every chunk read is submitted, even after a cancel: only an error
	// stops submission.
	for j := range filled {
		if e.err() != nil {
			free <- j.slot
			continue
		}
		j.timing.HostSubmitMs = msSince(e.hostT0)
		if err := e.submit(&j); err != nil {
			e.fail(err)
			j.failed = true
		} else {
			samplesIn += int64(j.n / e.ch)
		}
		submitted <- j
	}
	close(submitted)
	wg.Wait()
	wall := time.Since(e.hostT0).Seconds()

	// Everything has been synchronised chunk by chunk; make sure of it
	// before the buffers go.
	for _, s := range e.streams {
		if serr := s.Synchronize(); serr != nil && e.err() == nil {
			e.fail(fmt.Errorf("gpu: stream: %w", serr))
		}
	}
	res.SamplesIn, res.SamplesOut = samplesIn, samplesOut
	if e.cfg.Timeline {
		res.Timeline = timeline
	}
	res.summarize(timeline, wall)
	if err := e.err(); err != nil {
		return res, err
	}
	if readErr != nil {
		return res, readErr
	}
	if err := ctx.Err(); err != nil {
		res.Interrupted = true
		return res, err
	}
	if res.SamplesIn != res.SamplesOut {
		return res, fmt.Errorf("%w: %d in, %d out", ErrStreamCount, res.SamplesIn, res.SamplesOut)
	}
	return res, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t)) / 1e6 }

// allocate makes the streams, the events, the batch FIR and nbuf slots.
func (e *streamEngine) allocate(nbuf int) error {
	var err error
	if e.fir, err = cuda.NewBatchFIRFromPTX(e.cfg.Taps, e.cfg.Complex, e.cfg.PTXPath); err != nil {
		return err
	}
	for range e.cfg.Streams {
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return fmt.Errorf("gpu: create stream: %w", err)
		}
		e.streams = append(e.streams, s)
	}
	if e.t0, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return fmt.Errorf("gpu: create event: %w", err)
	}
	inBytes := int64(e.hist+e.chunkVals) * 4
	outBytes := int64(e.chunkVals) * 4
	e.slots = make([]streamSlot, nbuf)
	for i := range e.slots {
		sl := &e.slots[i]
		sl.stream = i % len(e.streams)
		evs, err := cudrv.MakeEvents(len(sl.ev))
		if err != nil {
			return err
		}
		copy(sl.ev[:], evs)
		if sl.dIn, err = cu.MemAlloc(inBytes); err != nil {
			return fmt.Errorf("gpu: stream: allocate %d MiB of device memory for buffer %d: %w", inBytes>>20, i, err)
		}
		if sl.dOut, err = cu.MemAlloc(outBytes); err != nil {
			return fmt.Errorf("gpu: stream: allocate %d MiB of device memory for buffer %d: %w", outBytes>>20, i, err)
		}
		if e.mode != StreamModeSource {
			continue
		}
		if sl.hIn, err = cudrv.AllocHost(inBytes, false, false); err != nil {
			return fmt.Errorf("gpu: stream: pinned input buffer %d: %w", i, err)
		}
		if sl.hOut, err = cudrv.AllocHost(outBytes, false, false); err != nil {
			return fmt.Errorf("gpu: stream: pinned output buffer %d: %w", i, err)
		}
		sl.in = unsafe.Slice((*float32)(sl.hIn.Ptr()), e.hist+e.chunkVals)
		sl.out = unsafe.Slice((*float32)(sl.hOut.Ptr()), e.chunkVals)
	}
	return nil
}

// close frees everything allocate and the memory-mode setup made. The
// context must be current and idle.
func (e *streamEngine) close() error {
	var errs []error
	for i := range e.slots {
		sl := &e.slots[i]
		for _, p := range []cu.DevicePtr{sl.dIn, sl.dOut} {
			if p != 0 {
				if err := cu.MemFree(p); err != nil {
					errs = append(errs, fmt.Errorf("gpu: stream: free device memory: %w", err))
				}
			}
		}
		sl.dIn, sl.dOut = 0, 0
		for _, h := range []*cudrv.HostBuf{sl.hIn, sl.hOut} {
			if err := h.Free(); err != nil {
				errs = append(errs, fmt.Errorf("gpu: stream: free pinned memory: %w", err))
			}
		}
		sl.hIn, sl.hOut, sl.in, sl.out = nil, nil, nil, nil
		errs = append(errs, cudrv.DestroyEvents(sl.ev[:]))
	}
	e.slots = nil
	if e.t0 != (cu.Event{}) {
		errs = append(errs, cudrv.DestroyEvents([]cu.Event{e.t0}))
		e.t0 = cu.Event{}
	}
	for i := range e.streams {
		if err := e.streams[i].Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: stream: destroy stream: %w", err))
		}
	}
	e.streams = nil
	if err := e.fir.Close(); err != nil {
		errs = append(errs, err)
	}
	e.fir = nil
	for _, h := range []*cudrv.HostBuf{e.regIn, e.regOut} {
		if err := h.Free(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: stream: unpin host memory: %w", err))
		}
	}
	e.regIn, e.regOut = nil, nil
	return errors.Join(errs...)
}

// readSource is the source-mode producer: it fills free slots' pinned
// input buffers, each behind the history of the chunk before.
func (e *streamEngine) readSource(ctx context.Context, src StreamReader, free chan int, filled chan<- chunkJob) error {
	hist := make([]float32, e.hist) // zeros: the stream starts from rest
	chunk, zero := 0, 0
	var pos int64
	for {
		var s int
		select {
		case <-ctx.Done():
			return nil
		case s = <-free:
		}
		if ctx.Err() != nil {
			free <- s
			return nil
		}
		buf := e.slots[s].in
		copy(buf[:e.hist], hist)
		n, err := src.Read(ctx, buf[e.hist:])
		if n < 0 || n > e.chunkVals || n%e.ch != 0 {
			free <- s
			return fmt.Errorf("gpu: stream: source returned %d values for a %d-value buffer (%d per sample)", n, e.chunkVals, e.ch)
		}
		if n > 0 && ctx.Err() == nil {
			// The next history: the last hist values of [history | new].
			copy(hist, buf[n:n+e.hist])
			filled <- chunkJob{slot: s, chunk: chunk, start: pos, n: n}
			chunk++
			pos += int64(n)
			zero = 0
		} else {
			free <- s
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			if ctx.Err() != nil {
				return nil // stopped: not the source's fault
			}
			return fmt.Errorf("gpu: stream: read source: %w", err)
		case n == 0:
			if zero++; zero >= maxZeroReads {
				return fmt.Errorf("gpu: stream: read source: %w", io.ErrNoProgress)
			}
		}
	}
}

// submit enqueues one chunk on its slot's stream.
func (e *streamEngine) submit(j *chunkJob) error {
	sl := &e.slots[j.slot]
	st := e.streams[sl.stream]
	j.timing.Chunk, j.timing.Stream, j.timing.Samples = j.chunk, sl.stream, j.n/e.ch
	if err := sl.ev[0].Record(st); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	if err := e.copyIn(j, sl, st); err != nil {
		return fmt.Errorf("gpu: stream: chunk %d to device: %w", j.chunk, err)
	}
	if err := sl.ev[1].Record(st); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	if err := e.fir.Launch(st, sl.dIn, sl.dOut, j.n/e.ch); err != nil {
		return fmt.Errorf("gpu: stream: chunk %d: %w", j.chunk, err)
	}
	if err := sl.ev[2].Record(st); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	var dst unsafe.Pointer
	if e.mode == StreamModeSource {
		dst = unsafe.Pointer(&sl.out[0])
	} else {
		dst = unsafe.Pointer(&e.out[j.start])
	}
	if err := cu.MemcpyDtoHAsync(dst, sl.dOut, int64(j.n)*4, st); err != nil {
		return fmt.Errorf("gpu: stream: chunk %d to host: %w", j.chunk, err)
	}
	if err := sl.ev[3].Record(st); err != nil {
		return fmt.Errorf("gpu: record event: %w", err)
	}
	return nil
}

// copyIn enqueues the chunk's [history | new values] H2D copy.
func (e *streamEngine) copyIn(j *chunkJob, sl *streamSlot, st cu.Stream) error {
	if e.mode == StreamModeSource {
		return cu.MemcpyHtoDAsync(sl.dIn, unsafe.Pointer(&sl.in[0]), int64(e.hist+j.n)*4, st)
	}
	// Memory mode: the history is the hist values before start in the
	// input itself, zeros before the input's beginning.
	pre := int64(0)
	if j.start < int64(e.hist) {
		pre = int64(e.hist) - j.start
		if err := cu.MemsetD32Async(sl.dIn, 0, pre, st); err != nil {
			return err
		}
	}
	from := j.start - int64(e.hist) + pre
	n := int64(e.hist) - pre + int64(j.n)
	return cu.MemcpyHtoDAsync(sl.dIn+cu.DevicePtr(pre*4), unsafe.Pointer(&e.in[from]), n*4, st)
}

// wait is the waiter goroutine: it synchronises each submitted chunk in
// order on its own locked thread, reads the stage times and passes the
// chunk on. It returns the chunks' timings.
func (e *streamEngine) wait(submitted <-chan chunkJob, done chan<- chunkJob) []ChunkTiming {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var timeline []ChunkTiming
	ctxErr := e.cuctx.MakeCurrent()
	if ctxErr != nil {
		e.fail(fmt.Errorf("gpu: stream: make the context current on the waiter: %w", ctxErr))
	} else {
		// Leave no dangling current context on the thread once the
		// context is destroyed.
		defer cu.SetCurrentContext(cu.CUContext{})
	}
	for j := range submitted {
		sl := &e.slots[j.slot]
		switch {
		case ctxErr != nil:
			// No context here: the submitter synchronises the streams
			// before anything is freed.
		case j.failed:
			_ = e.streams[sl.stream].Synchronize() // its error is the one recorded
		default:
			if err := sl.ev[3].Synchronize(); err != nil {
				e.fail(fmt.Errorf("gpu: stream: chunk %d: %w", j.chunk, err))
				break
			}
			if err := e.readTimes(&j, sl); err != nil {
				e.fail(err)
				break
			}
			j.ok = true
			j.timing.HostDoneMs = msSince(e.hostT0)
			timeline = append(timeline, j.timing)
		}
		done <- j
	}
	return timeline
}

// readTimes fills the chunk's stage times from its slot's events.
func (e *streamEngine) readTimes(j *chunkJob, sl *streamSlot) error {
	var t [4]float64
	for i := range t {
		ms, err := e.t0.Elapsed(sl.ev[i])
		if err != nil {
			return fmt.Errorf("gpu: stream: chunk %d event time: %w", j.chunk, err)
		}
		t[i] = ms
	}
	j.timing.H2D = [2]float64{t[0], t[1]}
	j.timing.Kernel = [2]float64{t[1], t[2]}
	j.timing.D2H = [2]float64{t[2], t[3]}
	return nil
}
