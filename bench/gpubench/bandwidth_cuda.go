//go:build cuda

package gpubench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/sigproc/sigproc/internal/cudrv"

	"github.com/sigproc/sigproc/kernels"
)

// Geometry of the bandwidth kernels (kernels/bw.cu): threads per block and
// blocks per SM, enough 16-byte requests in flight to cover the PCIe round
// trip of mapped memory.
const (
	bwThreads      = 256
	bwBlocksPerSM  = 8
	bwCalibIters   = 64      // bw_compute iterations of the calibration pass
	bwMaxIters     = 1 << 20 // upper bound of the calibrated iterations
	overlapWarmups = 1
)

// touchPages writes one byte per page so the pages exist before a copy is
// timed (the first touch of anonymous memory faults every page in).
func touchPages(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
}

// hostMem is one host buffer of the copy test.
type hostMem struct {
	kind string
	mm   []byte         // mmap'd memory (pageable and registered)
	hb   *cudrv.HostBuf // pinned or registered
}

// newHostMem allocates size bytes of host memory of kind (MemPageable,
// MemPinned or MemRegistered), every page touched.
func newHostMem(kind string, size int64) (*hostMem, error) {
	h := &hostMem{kind: kind}
	var err error
	switch kind {
	case MemPinned:
		if h.hb, err = cudrv.AllocHost(size, false, false); err != nil { // allocHost zeroes it
			return nil, fmt.Errorf("gpu: %w", err)
		}
	case MemPageable, MemRegistered:
		if h.mm, err = cudrv.MmapBytes(cudrv.PageAlign(size)); err != nil {
			return nil, err
		}
		touchPages(h.mm)
		if kind == MemRegistered {
			if h.hb, err = cudrv.RegisterHost(h.mm, false); err != nil {
				_ = syscall.Munmap(h.mm)
				return nil, fmt.Errorf("gpu: register %d MiB of host memory: %w", size>>20, err)
			}
		}
	default:
		return nil, fmt.Errorf("gpu: unknown host memory kind %q", kind)
	}
	return h, nil
}

func (h *hostMem) ptr() unsafe.Pointer {
	if h.hb != nil {
		return h.hb.Ptr()
	}
	return unsafe.Pointer(&h.mm[0])
}

// free unpins (or frees) the buffer and unmaps it; idempotent.
func (h *hostMem) free() error {
	if h == nil {
		return nil
	}
	var errs []error
	if h.hb != nil {
		if err := h.hb.Free(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free %s host memory: %w", h.kind, err))
		}
		h.hb = nil
	}
	if h.mm != nil {
		if err := syscall.Munmap(h.mm); err != nil {
			errs = append(errs, fmt.Errorf("gpu: unmap host memory: %w", err))
		}
		h.mm = nil
	}
	return errors.Join(errs...)
}

// copyRig times copies between one device buffer and host memory on one
// stream. It needs a current context.
type copyRig struct {
	stream cudrv.Stream
	dev    cudrv.DevicePtr
	size   int64
}

func newCopyRig(size int64) (r *copyRig, err error) {
	r = &copyRig{size: size}
	defer func() {
		if err != nil {
			_ = r.close()
		}
	}()
	if r.stream, err = cudrv.NewStream(); err != nil {
		return nil, fmt.Errorf("gpu: create stream: %w", err)
	}
	if r.dev, err = cudrv.MemAlloc(size); err != nil {
		return nil, fmt.Errorf("gpu: allocate %d MiB of device memory: %w", size>>20, err)
	}
	return r, nil
}

func (r *copyRig) close() error {
	var errs []error
	if r.dev != 0 {
		if err := cudrv.MemFree(r.dev); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free device memory: %w", err))
		}
		r.dev = 0
	}
	if r.stream != (cudrv.Stream{}) {
		if err := r.stream.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: destroy stream: %w", err))
		}
	}
	return errors.Join(errs...)
}

// copyOnce enqueues one copy of the rig's size in direction dir.
func (r *copyRig) copyOnce(dir string, host unsafe.Pointer) error {
	var err error
	if dir == DirH2D {
		err = r.stream.CopyHtoD(r.dev, host, r.size)
	} else {
		err = r.stream.CopyDtoH(host, r.dev, r.size)
	}
	if err != nil {
		return fmt.Errorf("gpu: %s copy of %d MiB: %w", dir, r.size>>20, err)
	}
	return nil
}

// time runs warmup untimed copies, then reps copies back to back with an
// event between each two.
func (r *copyRig) time(mem, dir string, host unsafe.Pointer, reps, warmup int) (CopyResult, error) {
	t, err := timePasses(r.stream, mem+" "+dir, warmup, reps, backToBack, func() error { return r.copyOnce(dir, host) })
	if err != nil {
		return CopyResult{}, err
	}
	per, best := rates(r.size, t.per)
	bytes := float64(r.size) * float64(reps)
	return CopyResult{
		Memory: mem, Direction: dir, Bytes: r.size, Reps: reps, Seconds: t.span,
		GiBps: gibps(bytes, t.span), BestGiBps: best, MedianGiBps: median(per),
		HostGiBps: gibps(bytes, t.host),
	}, nil
}

// rates returns the GiB/s of size bytes in each of sec, and the best.
func rates(size int64, sec []float64) (per []float64, best float64) {
	per = make([]float64, len(sec))
	for i, s := range sec {
		per[i] = gibps(float64(size), s)
		best = max(best, per[i])
	}
	return per, best
}

// measureCopy allocates host memory of kind mem and a device buffer of
// size bytes, times dir copies and frees everything. It needs a current
// context.
func measureCopy(mem, dir string, size int64, reps, warmup int) (res CopyResult, err error) {
	h, err := newHostMem(mem, size)
	if err != nil {
		return CopyResult{}, err
	}
	defer func() {
		if e := h.free(); e != nil && err == nil {
			err = e
		}
	}()
	rig, err := newCopyRig(size)
	if err != nil {
		return CopyResult{}, err
	}
	defer func() {
		if e := rig.close(); e != nil && err == nil {
			err = e
		}
	}()
	return rig.time(mem, dir, h.ptr(), reps, warmup)
}

// Bandwidth measures host↔device copy bandwidth from pageable, pinned and
// registered memory, pinned copies in both directions at once, the
// zero-copy bandwidth of a kernel streaming over mapped host memory, and
// copy/compute overlap on several streams (cfg.Tests selects). It locks
// the calling goroutine's OS thread and creates (and destroys) its own
// context; ctx is checked between figures.
func Bandwidth(ctx context.Context, cfg BandwidthConfig) (res BandwidthResult, err error) {
	if err := cfg.validate(); err != nil {
		return BandwidthResult{}, err
	}
	cuctx, err := cudrv.NewContext(cfg.Device, cudrv.SchedSpin|cudrv.MapHost)
	if err != nil {
		return BandwidthResult{}, err
	}
	defer func() {
		if e := cuctx.Close(); e != nil && err == nil {
			err = e
		}
	}()
	dev, info := cuctx.Dev, cuctx.Info
	if cfg.runs(BWMapped) && len(cfg.Tests) > 0 && !info.CanMapHost {
		return BandwidthResult{}, fmt.Errorf("gpu: bandwidth: %s cannot map host memory, so the mapped test is impossible", info.Name)
	}
	sms, err := dev.Attribute(cudrv.MultiprocessorCount)
	if err != nil {
		return BandwidthResult{}, fmt.Errorf("gpu: multiprocessor count: %w", err)
	}
	res = BandwidthResult{Device: info.String(), Bytes: cfg.Size, Reps: cfg.Reps, Warmup: cfg.Warmup}

	var mod cudrv.Module
	if cfg.runs(BWMapped) || cfg.runs(BWOverlap) {
		if mod, err = loadBandwidthPTX(cfg.PTXPath); err != nil {
			return BandwidthResult{}, err
		}
		defer mod.Unload()
	}
	grid := max(1, sms*bwBlocksPerSM)

	if cfg.runs(BWCopy) {
		for _, mem := range []string{MemPageable, MemPinned, MemRegistered} {
			for _, dir := range []string{DirH2D, DirD2H} {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				c, err := measureCopy(mem, dir, cfg.Size, cfg.Reps, cfg.Warmup)
				if err != nil {
					return res, err
				}
				res.Copies = append(res.Copies, c)
			}
		}
		res.fillRatios()
	}
	if cfg.runs(BWBidir) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		b, err := measureBidir(cfg.Size, cfg.Reps, cfg.Warmup)
		if err != nil {
			return res, err
		}
		res.Bidir = &b
	}
	if cfg.runs(BWMapped) && info.CanMapHost {
		for _, op := range []string{"read", "write"} {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			m, err := measureMapped(mod, op, cfg.Size, cfg.Reps, cfg.Warmup, grid)
			if err != nil {
				return res, err
			}
			res.Mapped = append(res.Mapped, m)
		}
	}
	if cfg.runs(BWOverlap) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		o, err := measureOverlap(ctx, mod, cfg, grid)
		if err != nil {
			return res, err
		}
		res.Overlap = &o
	}
	return res, nil
}

func loadBandwidthPTX(path string) (cudrv.Module, error) {
	return cudrv.LoadModule(path, kernels.BandwidthPTX, "bandwidth")
}

// measureBidir runs reps pinned H2D copies on one stream and reps pinned
// D2H copies on another, started together.
func measureBidir(size int64, reps, warmup int) (res BidirResult, err error) {
	var frees []func() error
	defer func() {
		for i := len(frees) - 1; i >= 0; i-- {
			if e := frees[i](); e != nil && err == nil {
				err = e
			}
		}
	}()
	var rigs [2]*copyRig
	var hosts [2]*hostMem
	for i := range rigs {
		if hosts[i], err = newHostMem(MemPinned, size); err != nil {
			return BidirResult{}, err
		}
		frees = append(frees, hosts[i].free)
		if rigs[i], err = newCopyRig(size); err != nil {
			return BidirResult{}, err
		}
		frees = append(frees, rigs[i].close)
	}
	// evs[0] starts both streams; evs[1+i] ends rigs[i]'s.
	evs, err := cudrv.MakeEvents(3)
	if err != nil {
		return BidirResult{}, err
	}
	frees = append(frees, func() error { return cudrv.DestroyEvents(evs) })
	dirs := [2]string{DirH2D, DirD2H}
	for range warmup {
		for i := range rigs {
			if err := rigs[i].copyOnce(dirs[i], hosts[i].ptr()); err != nil {
				return BidirResult{}, err
			}
		}
	}
	for i := range rigs {
		if err := rigs[i].stream.Synchronize(); err != nil {
			return BidirResult{}, fmt.Errorf("gpu: bidirectional warmup: %w", err)
		}
	}
	start := evs[0]
	if err := start.Record(rigs[0].stream); err != nil {
		return BidirResult{}, fmt.Errorf("gpu: record event: %w", err)
	}
	if err := rigs[1].stream.Wait(start); err != nil {
		return BidirResult{}, fmt.Errorf("gpu: stream wait: %w", err)
	}
	for range reps {
		for i := range rigs {
			if err := rigs[i].copyOnce(dirs[i], hosts[i].ptr()); err != nil {
				return BidirResult{}, err
			}
		}
	}
	var sec [2]float64
	for i := range rigs {
		if err := evs[1+i].Record(rigs[i].stream); err != nil {
			return BidirResult{}, fmt.Errorf("gpu: record event: %w", err)
		}
	}
	for i := range rigs {
		if err := evs[1+i].Synchronize(); err != nil {
			return BidirResult{}, fmt.Errorf("gpu: bidirectional copies: %w", err)
		}
		if sec[i], err = cudrv.Elapsed(start, evs[1+i]); err != nil {
			return BidirResult{}, err
		}
	}
	bytes := float64(size) * float64(reps)
	long := max(sec[0], sec[1])
	return BidirResult{
		Bytes: size, Reps: reps, Seconds: long,
		H2DGiBps: gibps(bytes, sec[0]), D2HGiBps: gibps(bytes, sec[1]), TotalGiBps: gibps(2*bytes, long),
	}, nil
}

// measureMapped times bw_read or bw_write over size bytes of mapped pinned
// host memory.
func measureMapped(mod cudrv.Module, op string, size int64, reps, warmup, grid int) (res MappedResult, err error) {
	name := "bw_read"
	if op == "write" {
		name = "bw_write"
	}
	fn, err := mod.Function(name)
	if err != nil {
		return MappedResult{}, fmt.Errorf("gpu: kernel %s: %w", name, err)
	}
	hb, err := cudrv.AllocHost(size, true, false)
	if err != nil {
		return MappedResult{}, fmt.Errorf("gpu: %w", err)
	}
	defer func() {
		if e := hb.Free(); e != nil && err == nil {
			err = fmt.Errorf("gpu: free mapped memory: %w", e)
		}
	}()
	sink, err := cudrv.MemAlloc(8)
	if err != nil {
		return MappedResult{}, fmt.Errorf("gpu: allocate: %w", err)
	}
	defer cudrv.MemFree(sink)
	stream, err := cudrv.NewStream()
	if err != nil {
		return MappedResult{}, fmt.Errorf("gpu: create stream: %w", err)
	}
	defer stream.Destroy()
	p := hb.DevicePtr()
	n16 := size / 16
	var params []unsafe.Pointer
	if op == "write" {
		v := uint64(0x9e3779b97f4a7c15)
		params = []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&n16), unsafe.Pointer(&v)}
	} else {
		params = []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&n16), unsafe.Pointer(&sink)}
	}
	launch := func() error {
		if err := fn.Launch(grid, bwThreads, 0, stream, params); err != nil {
			return fmt.Errorf("gpu: launch %s: %w", name, err)
		}
		return nil
	}
	t, err := timePasses(stream, "mapped "+op, warmup, reps, backToBack, launch)
	runtime.KeepAlive(params)
	if err != nil {
		return MappedResult{}, err
	}
	per, best := rates(size, t.per)
	return MappedResult{Op: op, Bytes: size, Reps: reps, GiBps: median(per), Best: best, Blocks: grid, Threads: bwThreads}, nil
}

// overlapRig holds the buffers of the overlap test.
type overlapRig struct {
	hin, hout *hostMem
	dev       cudrv.DevicePtr
	size      int64
	fn        cudrv.Function
	grid      int
	iters     int64
	streams   []cudrv.Stream
	start     cudrv.Event
	ends      []cudrv.Event
}

func (o *overlapRig) close() error {
	var errs []error
	errs = append(errs, o.hin.free(), o.hout.free())
	if o.dev != 0 {
		if err := cudrv.MemFree(o.dev); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free device memory: %w", err))
		}
	}
	for i := range o.streams {
		if err := o.streams[i].Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: destroy stream: %w", err))
		}
	}
	errs = append(errs, cudrv.DestroyEvents(append(o.ends, o.start)))
	return errors.Join(errs...)
}

// compute enqueues bw_compute over n bytes at off on stream.
func (o *overlapRig) compute(off, n int64, stream cudrv.Stream) error {
	p := o.dev + cudrv.DevicePtr(off)
	n4 := n / 16
	iters := o.iters
	grid := int(min(int64(o.grid), max(1, (n4+bwThreads-1)/bwThreads)))
	params := []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&n4), unsafe.Pointer(&iters)}
	if err := o.fn.Launch(grid, bwThreads, 0, stream, params); err != nil {
		return fmt.Errorf("gpu: launch bw_compute: %w", err)
	}
	return nil
}

// stage runs one stage over the whole buffer on streams[0] and returns its
// time.
func (o *overlapRig) stage(which string) (float64, error) {
	s := o.streams[0]
	if err := o.start.Record(s); err != nil {
		return 0, fmt.Errorf("gpu: record event: %w", err)
	}
	var err error
	switch which {
	case DirH2D:
		err = s.CopyHtoD(o.dev, o.hin.ptr(), o.size)
	case DirD2H:
		err = s.CopyDtoH(o.hout.ptr(), o.dev, o.size)
	default:
		err = o.compute(0, o.size, s)
	}
	if err != nil {
		return 0, fmt.Errorf("gpu: overlap %s: %w", which, err)
	}
	if err := o.ends[0].Record(s); err != nil {
		return 0, fmt.Errorf("gpu: record event: %w", err)
	}
	if err := o.ends[0].Synchronize(); err != nil {
		return 0, fmt.Errorf("gpu: overlap %s: %w", which, err)
	}
	return cudrv.Elapsed(o.start, o.ends[0])
}

// pass runs the chunked H2D → compute → D2H of the whole buffer on the
// first ns streams and returns its time.
func (o *overlapRig) pass(ns, chunks int) (float64, error) {
	if err := o.start.Record(o.streams[0]); err != nil {
		return 0, fmt.Errorf("gpu: record event: %w", err)
	}
	for j := 1; j < ns; j++ {
		if err := o.streams[j].Wait(o.start); err != nil {
			return 0, fmt.Errorf("gpu: stream wait: %w", err)
		}
	}
	step := (o.size / int64(chunks)) &^ 15
	for c := range chunks {
		s := o.streams[c%ns]
		off := int64(c) * step
		n := step
		if c == chunks-1 {
			n = o.size - off
		}
		hin, hout := unsafe.Add(o.hin.ptr(), off), unsafe.Add(o.hout.ptr(), off)
		if err := s.CopyHtoD(o.dev+cudrv.DevicePtr(off), hin, n); err != nil {
			return 0, fmt.Errorf("gpu: overlap H2D: %w", err)
		}
		if err := o.compute(off, n, s); err != nil {
			return 0, err
		}
		if err := s.CopyDtoH(hout, o.dev+cudrv.DevicePtr(off), n); err != nil {
			return 0, fmt.Errorf("gpu: overlap D2H: %w", err)
		}
	}
	var long float64
	for j := range ns {
		if err := o.ends[j].Record(o.streams[j]); err != nil {
			return 0, fmt.Errorf("gpu: record event: %w", err)
		}
	}
	for j := range ns {
		if err := o.ends[j].Synchronize(); err != nil {
			return 0, fmt.Errorf("gpu: overlap pass on %d streams: %w", ns, err)
		}
		s, err := cudrv.Elapsed(o.start, o.ends[j])
		if err != nil {
			return 0, err
		}
		long = max(long, s)
	}
	return long, nil
}

// measureOverlap calibrates bw_compute to take about as long as the H2D of
// the buffer, then times chunked passes on each stream count.
func measureOverlap(ctx context.Context, mod cudrv.Module, cfg BandwidthConfig, grid int) (res OverlapResult, err error) {
	fn, err := mod.Function("bw_compute")
	if err != nil {
		return OverlapResult{}, fmt.Errorf("gpu: kernel bw_compute: %w", err)
	}
	counts := cfg.overlapStreams()
	maxStreams := 0
	for _, n := range counts {
		maxStreams = max(maxStreams, n)
	}
	o := &overlapRig{size: cfg.Size, fn: fn, grid: grid, iters: bwCalibIters}
	defer func() {
		if e := o.close(); e != nil && err == nil {
			err = e
		}
	}()
	if o.hin, err = newHostMem(MemPinned, cfg.Size); err != nil {
		return OverlapResult{}, err
	}
	if o.hout, err = newHostMem(MemPinned, cfg.Size); err != nil {
		return OverlapResult{}, err
	}
	if o.dev, err = cudrv.MemAlloc(cfg.Size); err != nil {
		return OverlapResult{}, fmt.Errorf("gpu: allocate %d MiB of device memory: %w", cfg.Size>>20, err)
	}
	for range maxStreams {
		s, err := cudrv.NewStream()
		if err != nil {
			return OverlapResult{}, fmt.Errorf("gpu: create stream: %w", err)
		}
		o.streams = append(o.streams, s)
	}
	evs, err := cudrv.MakeEvents(maxStreams + 1)
	if err != nil {
		return OverlapResult{}, err
	}
	o.start, o.ends = evs[0], evs[1:]

	// Calibrate: iterations ∝ time, so scale to the H2D time.
	h2d, err := o.stage(DirH2D)
	if err != nil {
		return OverlapResult{}, err
	}
	if _, err := o.stage("kernel"); err != nil { // warm (JIT, clocks)
		return OverlapResult{}, err
	}
	k, err := o.stage("kernel")
	if err != nil {
		return OverlapResult{}, err
	}
	if k > 0 {
		o.iters = min(bwMaxIters, max(1, int64(float64(bwCalibIters)*h2d/k+0.5)))
	}
	res = OverlapResult{Bytes: cfg.Size, Chunks: cfg.overlapChunks(), KernelIters: int(o.iters)}
	if res.KernelMs, err = o.stage("kernel"); err != nil {
		return OverlapResult{}, err
	}
	if res.H2DMs, err = o.stage(DirH2D); err != nil {
		return OverlapResult{}, err
	}
	if res.D2HMs, err = o.stage(DirD2H); err != nil {
		return OverlapResult{}, err
	}
	res.H2DMs, res.KernelMs, res.D2HMs = 1e3*res.H2DMs, 1e3*res.KernelMs, 1e3*res.D2HMs
	res.SerialMs = res.H2DMs + res.KernelMs + res.D2HMs
	res.BoundMs = max(res.H2DMs, res.KernelMs, res.D2HMs)

	for _, ns := range counts {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		for range overlapWarmups + cfg.Warmup {
			if _, err := o.pass(ns, res.Chunks); err != nil {
				return OverlapResult{}, err
			}
		}
		sec := make([]float64, cfg.Reps)
		for i := range sec {
			if sec[i], err = o.pass(ns, res.Chunks); err != nil {
				return OverlapResult{}, err
			}
		}
		run := OverlapRun{Streams: ns, Seconds: median(sec)}
		run.GiBps = gibps(float64(cfg.Size), run.Seconds)
		res.Runs = append(res.Runs, run)
	}
	res.fillSpeedups()
	return res, nil
}

// PinnedH2D measures reps pinned host-to-device copies of size bytes on
// device, in a context of its own: the reference a streaming run is
// compared with.
func PinnedH2D(device int, size int64, reps int) (CopyResult, error) {
	c, err := cudrv.NewContext(device, cudrv.SchedSpin|cudrv.MapHost)
	if err != nil {
		return CopyResult{}, err
	}
	res, err := measureCopy(MemPinned, DirH2D, size, reps, 2)
	return res, errors.Join(err, c.Close())
}
