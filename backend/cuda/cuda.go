//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/kernels"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// spinWait is how long the consumer busy-waits for the next input block
// before it sleeps.
const spinWait = 50 * time.Millisecond

// Built reports whether this binary was built with CUDA support.
func Built() bool { return true }

// timesCap is the number of blocks the optional timing array holds
// (TIMES_CAP in kernels/fir.cu), timesWords the words per block
// (TIMES_WORDS): globaltimer in and out, clock64 in and out.
const (
	timesCap   = 65536
	timesWords = 4
	hostStride = 5
)

// Control block offsets, mirrored from struct Ctrl in kernels/fir.cu.
const (
	ctrlStop      = 0
	ctrlHeartbeat = 128
	ctrlError     = 256
	ctrlRunning   = 384
	ctrlSize      = 512
)

// Probe reports the device that Options select, or why it is not usable.
func Probe(o Options) (cudrv.DeviceInfo, error) {
	_, info, err := cudrv.GetDevice(o.Device)
	return info, err
}

// NewBackend returns the CUDA FIR backend. The transport is resolved when
// the pipeline starts it, once the block size is known.
func NewBackend(taps []float32, complex bool, opts Options) (pipeline.Backend, error) {
	if len(taps) == 0 {
		return nil, errors.New("gpu: no taps")
	}
	for i, t := range taps {
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return nil, fmt.Errorf("gpu: tap %d is %v", i, t)
		}
	}
	if _, err := ParseTransport(string(opts.Transport)); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Transport == "" {
		opts.Transport = TransportAuto
	}
	return &backend{taps: append([]float32(nil), taps...), complex: complex, opts: opts}, nil
}

type backend struct {
	taps    []float32
	complex bool
	opts    Options

	info      cudrv.DeviceInfo
	transport Transport
	pinLimit  int64          // pinned host memory the run may take, set by Start
	ctx       *cudrv.Context // nil before Start and after Close
	mod       cudrv.Module
	stream    cudrv.Stream
	l         pipeline.Layout
	ring      *pipeline.Ring
	next      uint64 // index of the next block Next returns
	out       []float32
	dtaps     cudrv.DevicePtr
	dev       []cudrv.DevicePtr // device allocations to free
	host      []*cudrv.HostBuf  // pinned allocations to free

	// zero-copy
	ctrl     []byte
	inWords  []uint64
	outWords []uint64
	words    int      // tagged words per slot
	times    []uint64 // optional timesWords per block, see kernels/fir.cu
	clockKHz int      // SM clock, to turn clock64 cycles into time
	hostT    []int64  // optional hostStride per block: write start, published, first output word seen, all seen, last word seen (ns)
	t0       time.Time
	launched bool
	deadline time.Duration
	zr       zcRetune // retunes, see zc_retune_cuda.go

	x     *explicitState // explicit transports
	xtune explicitTune   // retunes handed to the explicit transport (x_retune_cuda.go)
	// live is the transport once Start has set it up, nil before and
	// after Close: what a retune, on any goroutine, dispatches on.
	live atomic.Pointer[Transport]

	chain *stage.Chain // stages beyond a plain FIR (explicit transport only)
}

func (b *backend) Name() string {
	if b.transport == "" {
		return "cuda"
	}
	return "cuda/" + string(b.transport)
}

// Transport returns the transport in use once started.
func (b *backend) Transport() Transport { return b.transport }

// Device returns the device in use once started.
func (b *backend) Device() cudrv.DeviceInfo { return b.info }

// Start creates the context on the calling goroutine's OS thread, which it
// locks: Next and Close must be called from the same goroutine (the
// pipeline's consumer). A configuration that needs more pinned memory than
// allowed is refused before any is allocated (see Preflight, which says
// so before the run).
func (b *backend) Start(ctx context.Context, l pipeline.Layout) (r *pipeline.Ring, err error) {
	b.l = l
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	if b.ctx, err = cudrv.NewContext(b.opts.Device, cudrv.SchedSpin|cudrv.MapHost); err != nil {
		return nil, err
	}
	info := b.ctx.Info
	b.info = info
	var why string
	b.transport, why = b.resolveTransport(info, l)
	b.opts.Log.Info().Str("device", info.String()).Str("transport", string(b.transport)).Str("reason", why).Msg("cuda backend")
	if b.pinLimit, err = b.plan(b.transport, info, l); err != nil {
		return nil, err
	}
	if b.mod, err = cudrv.LoadModule(cudrv.PTXFile(b.opts.PTXDir, "fir.ptx"), kernels.PTX, "FIR"); err != nil {
		return nil, err
	}
	if b.stream, err = cudrv.NewStream(); err != nil {
		return nil, fmt.Errorf("gpu: create stream: %w", err)
	}
	if len(b.taps) > 0 { // a chain of stages brings its own taps
		if b.dtaps, err = b.alloc(int64(len(b.taps)) * 4); err != nil {
			return nil, err
		}
		if err = cudrv.MemcpyHtoD(b.dtaps, unsafe.Pointer(&b.taps[0]), int64(len(b.taps))*4); err != nil {
			return nil, fmt.Errorf("gpu: copy taps: %w", err)
		}
		// A pageable copy may return before it lands, and the kernels run
		// on a non-blocking stream that does not wait for it.
		if err = cudrv.SyncUploads("taps"); err != nil {
			return nil, err
		}
	}
	b.out = make([]float32, l.BlockValues())
	b.next = 0
	if b.transport == TransportZeroCopy {
		err = b.startZeroCopy(l)
	} else {
		err = b.startExplicit(l)
	}
	if err != nil {
		return nil, err
	}
	// The consumer waits for the producer between blocks; sleeping there
	// would cost tens of microseconds of latency.
	b.ring.SetSpin(spinWait)
	live := b.transport
	b.live.Store(&live)
	return b.ring, nil
}

// resolveTransport resolves TransportAuto for the device and block size:
// a chain of stages runs on the explicit transport.
func (b *backend) resolveTransport(info cudrv.DeviceInfo, l pipeline.Layout) (Transport, string) {
	switch {
	case b.opts.Transport != TransportAuto:
	case b.chain != nil:
		return TransportExplicit, "stages run on the explicit transport"
	case ResolveMethod(b.opts.Method, len(b.taps)) == filter.MethodFFT:
		// The zero-copy kernel convolves directly (CheckChain).
		return TransportExplicit, "method fft runs on the explicit transport"
	}
	return chooseTransport(b.opts.Transport, info, l, len(b.taps))
}

// plan checks what transport t on the device needs for a stream of l
// and returns the pinned memory budget (PinnedBudget); nothing is
// allocated.
func (b *backend) plan(t Transport, info cudrv.DeviceInfo, l pipeline.Layout) (int64, error) {
	if l.Channels < 1 || (b.complex && l.Channels%2 != 0) {
		return 0, fmt.Errorf("gpu: backend built for complex=%v, stream has %d values per frame", b.complex, l.Channels)
	}
	if t == TransportZeroCopy && !info.CanMapHost {
		return 0, fmt.Errorf("gpu: %s cannot map host memory, so zero-copy is impossible; use transport: explicit", info.Name)
	}
	host := b.opts.HostMemory
	if host == 0 {
		host = ReadHostMemory()
	}
	return PinnedBudget(b.pinnedNeed(t, info, l), b.opts.MaxPinned, HostMemory{Bytes: host, Integrated: info.Integrated})
}

// Preflight checks, before the run starts, that the backend can start on
// a stream of layout l: the device answers, the transport suits it, and
// the pinned memory it needs fits the budget (cuda.max_pinned_mb, or the
// default sized from the host). Start checks the same again; a run that
// fails here has created nothing and printed no summary.
func (b *backend) Preflight(l pipeline.Layout) error {
	_, info, err := cudrv.GetDevice(b.opts.Device)
	if err != nil {
		return err
	}
	t, _ := b.resolveTransport(info, l)
	_, err = b.plan(t, info, l)
	return err
}

// pinnedNeed is the pinned host memory transport t will take on the
// device, computed before anything is allocated so a bad config is
// refused up front.
func (b *backend) pinnedNeed(t Transport, info cudrv.DeviceInfo, l pipeline.Layout) int64 {
	switch t {
	case TransportZeroCopy:
		words := int64(evenWords(l))
		hcap := retuneCapacity(len(b.taps), l.BlockSize, l.Channels, info.SharedOptin)
		n := cudrv.PageAlign(ctrlSize) + 2*cudrv.PageAlign(int64(l.Slots)*words*8) + cudrv.PageAlign(int64(paramFloats(hcap))*4)
		if b.opts.Timing {
			n += timesCap * timesWords * 8
		}
		return n
	case TransportExplicit:
		return explicitPinned(l, b.maxOutValues(l))
	}
	return 2 * cudrv.PageAlign(BatchMaxTaps*4) // explicit-pageable: a retunable fir's tap staging only
}

func evenWords(l pipeline.Layout) int { return (l.BlockValues() + 1) &^ 1 }

func (b *backend) alloc(n int64) (cudrv.DevicePtr, error) {
	p, err := cudrv.MemAlloc(n)
	if err != nil {
		return 0, fmt.Errorf("gpu: allocate %d bytes of device memory: %w", n, err)
	}
	b.dev = append(b.dev, p)
	return p, nil
}

func (b *backend) pin(n int64, mapped, wc bool) (*cudrv.HostBuf, error) {
	h, err := cudrv.AllocHost(n, mapped, wc)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	b.host = append(b.host, h)
	return h, nil
}

func (b *backend) startZeroCopy(l pipeline.Layout) error {
	ntaps := len(b.taps)
	b.words = evenWords(l)
	// Shared memory: padded taps, then three [history | block] buffers,
	// both sized for the most taps a retune may bring.
	hcap := retuneCapacity(ntaps, l.BlockSize, l.Channels, b.info.SharedOptin)
	smem := persistentSmem(hcap, l.BlockSize, l.Channels)
	if zeroCopySmem(ntaps, l, b.info.SharedOptin) > b.info.SharedOptin {
		return fmt.Errorf("gpu: zero-copy kernel needs %d KiB of shared memory for %d taps and %d-sample blocks of %d values per frame, %s has %d KiB; use smaller blocks, fewer channels or transport: explicit",
			smem>>10, ntaps, l.BlockSize, l.Channels, b.info.Name, b.info.SharedOptin>>10)
	}
	kernel := persistentKernel(l.Channels)
	fn, err := b.mod.Function(kernel)
	if err != nil {
		return fmt.Errorf("gpu: kernel %s: %w", kernel, err)
	}
	if smem+zcStaticSmem > 48<<10 {
		if err := fn.SetMaxDynamicSmem(smem); err != nil {
			return fmt.Errorf("gpu: %w", err)
		}
	}
	ctrl, err := b.pin(ctrlSize, true, false)
	if err != nil {
		return err
	}
	in, err := b.pin(int64(l.Slots*b.words)*8, true, b.opts.WriteCombined)
	if err != nil {
		return err
	}
	out, err := b.pin(int64(l.Slots*b.words)*8, true, false)
	if err != nil {
		return err
	}
	var timesDev cudrv.DevicePtr
	if b.opts.Timing {
		times, err := b.pin(timesCap*timesWords*8, true, false)
		if err != nil {
			return err
		}
		b.times = tagged.Words(times.Ptr(), timesWords*timesCap)
		timesDev = times.DevicePtr()
		b.hostT = make([]int64, hostStride*timesCap)
		b.t0 = time.Now()
		if b.clockKHz, err = cudrv.ClockKHz(b.opts.Device); err != nil {
			return err
		}
	}
	params, err := b.pin(int64(paramFloats(hcap))*4, true, false)
	if err != nil {
		return err
	}
	b.zr.init(params.Ptr(), hcap, b.taps)
	b.ctrl = ctrl.Bytes()
	b.inWords = tagged.Words(in.Ptr(), l.Slots*b.words)
	b.outWords = tagged.Words(out.Ptr(), l.Slots*b.words)

	ring, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return err
	}
	var stamp func(i uint64, k int)
	if hostT, t0 := b.hostT, b.t0; hostT != nil {
		stamp = func(i uint64, k int) { hostT[hostStride*(i&(timesCap-1))+uint64(k)] = int64(time.Since(t0)) }
	}
	if err := b.zr.attach(ring, b.inWords, b.words, stamp); err != nil {
		return err
	}
	b.ring = ring

	threads, split := persistentGeometry(b.words/2, ntaps, b.opts.Split)
	ctrlDev, inDev, outDev, paramsDev := ctrl.DevicePtr(), in.DevicePtr(), out.DevicePtr(), params.DevicePtr()
	args := []int64{int64(ntaps), int64(l.BlockSize), int64(l.Channels), int64(l.Slots), int64(split), b.opts.StallAt, int64(hcap)}
	kparams := []unsafe.Pointer{
		unsafe.Pointer(&ctrlDev), unsafe.Pointer(&inDev), unsafe.Pointer(&outDev), unsafe.Pointer(&b.dtaps),
		unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1]), unsafe.Pointer(&args[2]),
		unsafe.Pointer(&args[3]), unsafe.Pointer(&args[4]), unsafe.Pointer(&args[5]), unsafe.Pointer(&timesDev),
		unsafe.Pointer(&paramsDev), unsafe.Pointer(&args[6]),
	}
	if err := fn.Launch(1, threads, smem, b.stream, kparams); err != nil {
		return fmt.Errorf("gpu: launch %s (%d threads, %d B shared): %w", kernel, threads, smem, err)
	}
	b.launched = true
	// The kernel must report running within the watchdog, or it never will.
	if err := b.waitCtrl(ctrlRunning, 1, b.opts.watchdog()); err != nil {
		return fmt.Errorf("gpu: persistent kernel did not start: %w", err)
	}
	b.zr.live.Store(true)
	b.opts.Log.Debug().Int("threads", threads).Int("split", split).Int("smem", smem).Int("slots", l.Slots).
		Int("lanes", l.Channels).Int("retune_max_taps", hcap).Msg("persistent FIR kernel running")
	return nil
}

func (b *backend) ctrlWord(off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&b.ctrl[off]))
}

// waitCtrl spins until the control word at off reaches want.
func (b *backend) waitCtrl(off int, want uint64, limit time.Duration) error {
	t0 := time.Now()
	for b.ctrlWord(off).Load() < want {
		if e := b.ctrlWord(ctrlError).Load(); e != 0 {
			return fmt.Errorf("kernel reported error %d", e)
		}
		if _, err := b.stream.Done(); err != nil {
			return fmt.Errorf("kernel failed: %w", err)
		}
		if time.Since(t0) > limit {
			return fmt.Errorf("%w in %v (heartbeat %d)", ErrWatchdog, limit, b.ctrlWord(ctrlHeartbeat).Load())
		}
		runtime.Gosched()
	}
	return nil
}

// ComputeTimes returns, for the zero-copy transport with Options.Timing,
// the GPU time in µs from a block's last input word arriving to its output
// being written, for the blocks returned so far (the last timesCap of
// them), measured in SM cycles (globaltimer ticks too coarsely on some
// GPUs). Call it before Close.
func (b *backend) ComputeTimes() []float64 {
	if b.times == nil || b.clockKHz <= 0 {
		return nil
	}
	n := min(b.next, timesCap)
	out := make([]float64, 0, n)
	for i := b.next - n; i < b.next; i++ {
		if g, ok := b.gpuPhasesUs(i); ok {
			out = append(out, g[0])
		}
	}
	return out
}

// gpuPhasesUs reads block i's kernel clocks (see kernels/fir.cu, times) as
// µs: {compute: whole block seen → thread 0's output written, input wait:
// thread 0's own input pair → whole block seen, all stored: whole block
// seen → every thread's output store issued}.
func (b *backend) gpuPhasesUs(i uint64) ([3]float64, bool) {
	j := timesWords * (i & (timesCap - 1))
	var c [4]uint64
	for k := range c {
		c[k] = atomic.LoadUint64(&b.times[j+uint64(k)])
	}
	first, all, cin, cout := c[0], c[1], c[2], c[3]
	if cin == 0 || cout < cin || first == 0 || first > cin || all < cin {
		return [3]float64{}, false
	}
	us := func(d uint64) float64 { return float64(d) * 1e3 / float64(b.clockKHz) }
	return [3]float64{us(cout - cin), us(cin - first), us(all - cin)}, true
}

// Breakdown returns, with Options.Timing, per-stage latency samples in µs
// of the zero-copy transport for the blocks returned so far (the last
// timesCap): "host_write" (the tagged-word write into the mapped ring; for
// a pipeline.WordSource, which wrote the words itself, only the padding
// and demote),
// "gpu_compute" (ComputeTimes), "host_read" (first valid output word to the
// last), and "pcie_round_trip": publish to first output word, less the GPU
// compute, that is the input's detection plus the output's write-back and
// detection; "output_spread" (first output word → last output word seen) is
// the part of host_read spent waiting for the output to arrive rather than
// copying it. Two GPU-side figures split it further: "gpu_input_wait"
// (thread 0's own input words arrived → every thread's had: the spread of
// the input's arrival) and "gpu_all_stored" (whole block seen → the last
// thread issued its output stores, which bounds how spread out the output's
// arrival at the host can be). Call it before Close.
func (b *backend) Breakdown() map[string][]float64 {
	if b.hostT == nil || b.clockKHz <= 0 {
		return nil
	}
	n := min(b.next, timesCap)
	var wr, rt, comp, read, spread, wait, all []float64
	for i := b.next - n; i < b.next; i++ {
		j := hostStride * (i & (timesCap - 1))
		start, pub, first, last, lastw := b.hostT[j], b.hostT[j+1], b.hostT[j+2], b.hostT[j+3], b.hostT[j+4]
		g, ok := b.gpuPhasesUs(i)
		if !ok || pub == 0 || pub < start || first < pub || lastw < first || last < lastw {
			continue
		}
		wr = append(wr, float64(pub-start)/1e3)
		rt = append(rt, float64(first-pub)/1e3-g[0])
		comp = append(comp, g[0])
		read = append(read, float64(last-first)/1e3)
		spread = append(spread, float64(lastw-first)/1e3)
		wait = append(wait, g[1])
		all = append(all, g[2])
	}
	return map[string][]float64{"host_write": wr, "pcie_round_trip": rt, "gpu_compute": comp, "host_read": read,
		"output_spread": spread, "gpu_input_wait": wait, "gpu_all_stored": all}
}

// logBreakdown logs the median and p99 of each Breakdown stage once, when
// timing was asked for.
func (b *backend) logBreakdown() {
	m := b.Breakdown()
	if m == nil || b.next == 0 {
		return
	}
	ev := b.opts.Log.Info().Uint64("blocks", b.next)
	for _, k := range []string{"host_write", "pcie_round_trip", "gpu_input_wait", "gpu_compute", "gpu_all_stored", "output_spread", "host_read"} {
		v := m[k]
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		ev = ev.Float64(k+"_p50_us", v[len(v)/2]).Float64(k+"_p99_us", v[min(len(v)-1, len(v)*99/100)])
	}
	ev.Msg("zero-copy latency breakdown")
	b.hostT = nil // once
}

func (b *backend) Next(ctx context.Context) (pipeline.Output, error) {
	if b.transport == TransportZeroCopy {
		return b.nextZeroCopy(ctx)
	}
	return b.nextExplicit(ctx)
}

func (b *backend) nextZeroCopy(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	i := b.next
	s := int(i%uint64(b.l.Slots)) * b.words
	out := b.out[:len(blk.Samples)]
	// Spin on the output tags: the latency path. Every 4096 polls, check
	// the kernel's health and the watchdog (heartbeat must advance).
	spins := 0
	var t0 time.Time
	beat := b.ctrlWord(ctrlHeartbeat).Load()
	limit := b.opts.watchdog()
	words := b.outWords[s : s+len(out)]
	if b.hostT != nil && len(words) > 0 {
		// Timing only: wait for the first word alone, to split the host's
		// read from the round trip, then for the last, to split the
		// output's arrival from the host's copy.
		j := hostStride * (i & (timesCap - 1))
		for _, k := range [...]struct {
			w  int
			at uint64
		}{{0, 2}, {len(words) - 1, 4}} {
			w0 := time.Now()
			for n := 0; uint32(atomic.LoadUint64(&words[k.w])>>32) != uint32(i+1); n++ {
				if n&4095 == 4095 && time.Since(w0) > limit {
					return pipeline.Output{}, fmt.Errorf("%w for %v waiting for block %d", ErrWatchdog, limit, i)
				}
			}
			b.hostT[j+k.at] = int64(time.Since(b.t0))
		}
	}
	err = tagged.Read(out, words, uint32(i+1), func() error {
		spins++
		if spins&4095 != 0 {
			return nil
		}
		if t0.IsZero() {
			t0 = time.Now()
		}
		if e := b.ctrlWord(ctrlError).Load(); e != 0 {
			return fmt.Errorf("gpu: kernel reported error %d at block %d", e, i)
		}
		if h := b.ctrlWord(ctrlHeartbeat).Load(); h != beat {
			beat, t0 = h, time.Now()
		}
		if time.Since(t0) > limit {
			return fmt.Errorf("%w for %v waiting for block %d (heartbeat %d)", ErrWatchdog, limit, i, beat)
		}
		// No runtime.Gosched: this goroutine is locked to its OS thread,
		// and yielding would cost a futex hand-off (see pipeline.backoff).
		return nil
	})
	if err != nil {
		return pipeline.Output{}, err
	}
	if b.hostT != nil {
		b.hostT[hostStride*(i&(timesCap-1))+3] = int64(time.Since(b.t0))
	}
	b.ring.Release()
	b.next++
	return blockOutput(blk.Seq, blk.Timestamp, len(blk.Samples), b.l.Channels, out), nil
}

// Close stops the kernel through the stop flag, waits for it (bounded by
// the watchdog), and frees every device and pinned allocation. It must run
// on the goroutine that called Start.
func (b *backend) Close() error {
	b.live.Store(nil)
	var errs []error
	b.logBreakdown()
	b.zr.stop()
	if b.launched {
		b.ctrlWord(ctrlStop).Store(1)
		if err := b.waitCtrl(ctrlRunning, 2, b.opts.watchdog()); err != nil {
			// A kernel that ignores the stop flag still reads the mapped
			// rings: freeing them under it could crash, and destroying the
			// context would wait for it. Leave both to process exit.
			b.ctx.Abandon()
			b.ctx = nil
			return fmt.Errorf("gpu: stop persistent kernel (its memory is released at process exit): %w", err)
		}
		if err := b.stream.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: persistent kernel: %w", err))
		}
		b.launched = false
	}
	if b.x != nil {
		errs = append(errs, b.x.close())
		b.x = nil
	}
	if b.ctx != nil {
		for _, p := range b.dev {
			if err := cudrv.MemFree(p); err != nil {
				errs = append(errs, fmt.Errorf("gpu: free device memory: %w", err))
			}
		}
		for _, h := range b.host {
			if err := h.Free(); err != nil {
				errs = append(errs, fmt.Errorf("gpu: free pinned memory: %w", err))
			}
		}
		b.dev, b.host = nil, nil
		errs = append(errs, b.ctx.Close())
		b.ctx = nil
	}
	return errors.Join(errs...)
}
