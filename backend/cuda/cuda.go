//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// spinWait is how long the consumer busy-waits for the next input block
// before it parks until the producer wakes it.
const spinWait = 50 * time.Millisecond

// Built reports whether this binary was built with CUDA support.
func Built() bool { return true }

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

// backend is the CUDA backend of one run: its configuration, and what
// every transport shares once Start has run (the context,
// a stream, the device taps, the allocations freed at Close). The moving
// and filtering of blocks is the transport's, which Start chooses, and
// every method that depends on it delegates to it.
type backend struct {
	taps    []float32
	complex bool
	opts    Options
	chain   *stage.Chain // stages beyond a plain FIR (explicit transport, or zero-copy where configured)

	info      cudrv.DeviceInfo
	transport Transport // resolved by Start
	pinLimit  int64     // pinned host memory the run may take, set by Start
	// regionLimit is what a source pinned in place may take besides the
	// ring and buffers, set by Start (RegionBudget).
	regionLimit int64
	ctx         *cudrv.Context // nil before Start and after Close
	stream      cudrv.Stream
	dtaps       cudrv.DevicePtr
	dev         []cudrv.DevicePtr // device allocations to free
	host        []*cudrv.HostBuf  // pinned allocations to free

	tr transport // nil before Start
	// live is the transport once Start has set it up, nil before and
	// after Close: what a retune, on any goroutine, dispatches to.
	live atomic.Pointer[running]
}

// running is the transport a retune reaches, with its kind.
type running struct {
	kind Transport
	tr   transport
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
	b.tr = newTransport(b.transport, b)
	if r, err = b.tr.start(l); err != nil {
		return nil, err
	}
	// The consumer waits for the producer between blocks; parked there,
	// its wake would cost tens of microseconds of latency.
	r.SetSpin(spinWait)
	b.live.Store(&running{kind: b.transport, tr: b.tr})
	return r, nil
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
	if err := deviceRefusal(t, info); err != nil {
		return 0, err
	}
	host := b.opts.HostMemory
	if host == 0 {
		host = ReadHostMemory()
	}
	need := transportPinned(t, l, len(b.taps), info.SharedOptin, b.opts.Timing, b.maxOutValues(l))
	if t == TransportZeroCopy && b.chain != nil {
		var err error
		if need, err = zcChainPinned(*b.chain, l, info.SharedOptin); err != nil {
			return 0, err
		}
	}
	hm := HostMemory{Bytes: host, Integrated: info.Integrated}
	budget, err := PinnedBudget(need, b.opts.MaxPinned, hm)
	if err != nil {
		return 0, err
	}
	b.regionLimit = RegionBudget(budget, b.opts.MaxPinned, hm) - need
	return budget, nil
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

// LiveSlotCeiling is the deepest default ring a live source should get
// on the transport Start would pick for l (pipeline.RingSource.MaxSlots):
// on zero-copy, as many slots as zeroCopyLiveBytes of tagged words hold (a
// power of two, at least pipeline.LiveSlots); 0, no ceiling, on the
// other transports or where the device does not answer (Preflight says
// why).
func (b *backend) LiveSlotCeiling(l pipeline.Layout) int {
	_, info, err := cudrv.GetDevice(b.opts.Device)
	if err != nil {
		return 0
	}
	if t, _ := b.resolveTransport(info, l); t != TransportZeroCopy {
		return 0
	}
	return zeroCopyLiveSlots(l)
}

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

// Next returns the next block's output from the transport. It must run
// on the goroutine that called Start.
func (b *backend) Next(ctx context.Context) (pipeline.Output, error) { return b.tr.next(ctx) }

// ComputeTimes returns the transport's GPU compute times in µs, where it
// measures them (the zero-copy transport with Options.Timing; see
// zeroCopy.ComputeTimes). Call it before Close.
func (b *backend) ComputeTimes() []float64 {
	if t, ok := b.tr.(timedTransport); ok {
		return t.ComputeTimes()
	}
	return nil
}

// Breakdown returns the transport's per-stage latency samples in µs,
// where it measures them (the zero-copy transport with Options.Timing;
// see zeroCopy.Breakdown). Call it before Close.
func (b *backend) Breakdown() map[string][]float64 {
	if t, ok := b.tr.(timedTransport); ok {
		return t.Breakdown()
	}
	return nil
}

// DeviceBusy returns the transport's copy and kernel times, where it
// measures them: the explicit transport does (pipeline.DeviceTimer).
func (b *backend) DeviceBusy() (pipeline.DeviceBusy, bool) {
	if t, ok := b.tr.(interface{ DeviceBusy() pipeline.DeviceBusy }); ok {
		return t.DeviceBusy(), true
	}
	return pipeline.DeviceBusy{}, false
}

// UseRegion lets the transport copy blocks to the device straight from
// the source's memory (pipeline.RegionBackend), where it can: the
// explicit transport's pinned variant, with Options.PinSource (see
// explicit.useRegion).
func (b *backend) UseRegion(region []byte, encoding string) (bool, error) {
	if t, ok := b.tr.(regionTransport); ok {
		return t.useRegion(region, encoding)
	}
	return false, nil
}

// InPlace reports whether the region's n bytes at off are taken in place
// (pipeline.RegionSharer); the others are read into the ring.
func (b *backend) InPlace(off, n int64) bool {
	if t, ok := b.tr.(regionTransport); ok {
		return t.inPlace(off, n)
	}
	return true
}

// Close stops the transport (bounded by the watchdog), and frees every
// device and pinned allocation and the context. It must run on the
// goroutine that called Start.
func (b *backend) Close() error {
	b.live.Store(nil)
	var errs []error
	if b.tr != nil {
		keep, err := b.tr.close()
		b.tr = nil
		if keep {
			// The device may still read the transport's memory: freeing it
			// could crash, and destroying the context would wait for the
			// kernel. Leave both to process exit.
			b.ctx.Abandon()
			b.ctx = nil
			return err
		}
		errs = append(errs, err)
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
