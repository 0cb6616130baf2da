//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

// useRegion lets the explicit transport copy blocks to the device straight
// from the source's memory (pipeline.RegionBackend): a recording mapped
// from the page cache, samples in memory. The region is pinned window by
// window ahead of the blocks (planRegion), read-only where the device
// allows, as a mapped file needs. Windows no block reads again are
// unpinned, so pinned memory stays within the budget
// (cuda.max_pinned_mb, or the default sized from the host) whatever the
// recording's size; a region that fits the budget whole stays pinned to
// the end. A share of the windows (Options.ReadShare) is not pinned: the
// pipeline's readers read them into the ring (inPlace), as the CPU's
// copies and the pinning add up. The zero-copy transport writes tagged
// words and takes no views.
//
// The first window is pinned here: a device or host that refuses to pin
// the source (a kernel without the support, a memlock limit) falls back
// to reading it into the ring, with one log line.
//
// A region of stored integers (encoding, a pipeline Enc* name) is copied
// as stored and converted on the device (converter); an encoding the
// kernel does not know is read into the ring instead.
func (x *explicit) useRegion(region []byte, encoding string) (bool, error) {
	if x.pageable || !x.b.opts.PinSource {
		return false, nil
	}
	if encoding != "" {
		if code, _ := convertCode(encoding); code == 0 {
			x.b.opts.Log.Info().Str("encoding", encoding).Msg("no GPU conversion for the source's encoding: blocks are read into the ring")
			return false, nil
		}
	}
	// The CPU reads a share of the windows into the ring
	// (pipeline.RegionSharer), as stored: the copies add up. Decided
	// first: a share of 1 pins nothing, so it needs no room in the budget.
	share := DefaultReadShare
	if encoding != "" {
		share = DefaultReadShareEncoded
	}
	if s := x.b.opts.ReadShare; s != nil {
		share = *s
	}
	if share >= 1 {
		if encoding != "" {
			if err := x.convertOnDevice(encoding); err != nil {
				return false, err
			}
		}
		x.readAll = true
		x.b.opts.Log.Info().Float64("read_share", share).Msg("the CPU reads the source into the ring as stored, several blocks at once; no window is pinned")
		return true, nil
	}
	room := x.b.regionLimit
	window := x.b.opts.PinWindow
	if window <= 0 {
		window = pinWindow(int64(x.inFlight) * int64(x.l.BlockValues()*pipeline.EncodingSize(encoding)))
	}
	plan, ok := planRegion(int64(len(region)), room, window, x.b.opts.PinThreads)
	if !ok {
		x.b.opts.Log.Info().Int64("room_mib", room>>20).
			Msg("the pinned budget (cuda.max_pinned_mb) leaves too little room to pin the source in place: blocks are read into the ring")
		return false, nil
	}
	plan.share = share
	ro, err := cudrv.ReadOnlyRegister(x.b.ctx.Dev)
	if err != nil {
		return false, err
	}
	p := newPinnedRegion(x.b.ctx, region, plan, ro)
	p.log, p.timeline = x.b.opts.Log, x.timeline
	if err := p.first(); err != nil {
		x.b.opts.Log.Warn().Err(err).Msg("pinning the source in place was refused: blocks are read into the ring (cuda.pin_source: false skips the attempt)")
		return false, p.close()
	}
	if encoding != "" {
		if err := x.convertOnDevice(encoding); err != nil {
			return false, errors.Join(err, p.close())
		}
	}
	x.region = p
	x.b.opts.Log.Info().Int64("window_mib", plan.window>>20).Int("ahead", plan.ahead).Int("threads", plan.threads).
		Bool("whole", plan.keep).Float64("read_share", plan.share).Msg("source pinned in place, window by window ahead of the copies, but for the share of windows the CPU reads into the ring")
	return true, nil
}

// pinnedRegion is a source's memory pinned window by window just ahead
// of the blocks that read it, and unpinned behind them.
//
// Everything happens on the backend's goroutine, between its submissions.
// The driver holds a lock while it pins, and a copy or launch queued from
// another thread meanwhile waits for it: pinners running free on threads
// of their own starve the copies, and the two cost their sum (22–25 GiB/s
// on the H200 host, bench/feedprobe.cu's overlap phase). Copies already
// queued run on through a pin, though, so pinning here, right after the
// blocks in flight are queued, overlaps it with their copies. A window is
// small enough to pin within the time the blocks in flight take to copy,
// and plan.threads windows are pinned at once on threads of their own
// (cuda.pin_threads; one by default, as a second gained nothing), the
// backend's goroutine waiting for them.
type pinnedRegion struct {
	mem  []byte
	plan regionPlan
	wins []regionWindow
	next int // the next window to pin
	low  int // the window of the latest block's first byte: none below it is read again
	end  int // the offset just past the latest block
	live int // windows pinned and not yet unpinned
	jobs chan int
	wg   sync.WaitGroup
	// What the end-of-run log line reports: the time spent pinning, and
	// the part of it a block's copy waited for its own window.
	pinning, waited time.Duration
	log             zerolog.Logger
	timeline        *timeline // at log level trace: each pin, on the transport's clock
}

type regionWindow struct {
	done  chan struct{} // closed once pinned (or failed)
	buf   *cudrv.HostBuf
	err   error
	last  uint64 // ring index of the last block that reads it
	freed bool
}

func newPinnedRegion(ctx *cudrv.Context, mem []byte, plan regionPlan, ro bool) *pinnedRegion {
	n := (len(mem) + int(plan.window) - 1) / int(plan.window)
	p := &pinnedRegion{mem: mem, plan: plan, wins: make([]regionWindow, n), jobs: make(chan int, n)}
	for i := range p.wins {
		p.wins[i].done = make(chan struct{})
	}
	window := int(plan.window)
	for range min(plan.threads, n) {
		p.wg.Go(func() {
			onThread(ctx, func(cerr error) {
				for w := range p.jobs {
					win := &p.wins[w]
					lo, hi := w*window, min(len(mem), (w+1)*window)
					switch {
					case cerr != nil:
						win.err = cerr
					case ro:
						win.buf, win.err = cudrv.RegisterHostReadOnly(mem[lo:hi])
					default:
						win.buf, win.err = cudrv.RegisterHost(mem[lo:hi], false)
					}
					close(win.done)
				}
			})
		})
	}
	return p
}

// onThread runs f on a locked OS thread with ctx current, giving f the
// error of making it current, and leaves no context current on the thread
// once it is destroyed.
func onThread(ctx *cudrv.Context, f func(cerr error)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cerr := ctx.MakeCurrent()
	if cerr == nil {
		defer cudrv.ClearCurrent()
	}
	f(cerr)
}

// first pins the first windows before the run.
func (p *pinnedRegion) first() error {
	return p.pin(min(p.plan.threads, len(p.wins)))
}

// pin pins the next n windows, on the pinners at once, and waits for them;
// windows read into the ring are passed over.
func (p *pinnedRegion) pin(n int) error {
	from := p.next
	t0 := time.Now()
	for ; n > 0 && p.next < len(p.wins); p.next++ {
		if p.plan.read(p.next) {
			continue
		}
		p.live++
		p.jobs <- p.next
		n--
	}
	var errs []error
	for w := from; w < p.next; w++ {
		if p.plan.read(w) {
			continue
		}
		win := &p.wins[w]
		<-win.done
		if win.err != nil {
			p.live--
			errs = append(errs, fmt.Errorf("pin the source's bytes %d to %d: %w", w*int(p.plan.window), min(len(p.mem), (w+1)*int(p.plan.window)), win.err))
		}
	}
	p.pinning += time.Since(t0)
	if p.timeline != nil {
		p.log.Trace().Int("from", from).Int("to", p.next).Float64("start_ms", p.timeline.since(t0)).
			Float64("end_ms", p.timeline.since(time.Now())).Msg("pin timeline")
	}
	return errors.Join(errs...)
}

// ahead pins the next windows, as many as there are pinners, when fewer
// bytes than that are pinned beyond the latest block, within the bound:
// called once the blocks in flight are queued, so that their copies run
// while it pins. Pinning further ahead would only stall the blocks behind
// it: each pin holds the backend's goroutine, which queues one block for
// each that completes.
func (p *pinnedRegion) ahead() error {
	n := min(p.plan.threads, len(p.wins)-p.next, p.plan.ahead-p.live)
	if n <= 0 || p.next*int(p.plan.window)-p.end >= p.plan.threads*int(p.plan.window) {
		return nil
	}
	return p.pin(n)
}

// holds reports whether p lies in the region: a block taken in place,
// not one read into the ring (plan.share).
func (p *pinnedRegion) holds(ptr unsafe.Pointer) bool {
	off := uintptr(ptr) - uintptr(unsafe.Pointer(&p.mem[0]))
	return off < uintptr(len(p.mem))
}

// copyIn enqueues the copy of block k's view (its bytes in the region) to
// dst, window by window, pinning a window the pinning ahead has not
// reached (even beyond the bound, for a block straddling into it).
func (p *pinnedRegion) copyIn(k uint64, dst cudrv.DevicePtr, view []byte, st cudrv.Stream) error {
	base := uintptr(unsafe.Pointer(&p.mem[0]))
	off := int(uintptr(unsafe.Pointer(&view[0])) - base)
	end := off + len(view)
	if off < 0 || end > len(p.mem) {
		return fmt.Errorf("block at offset %d outside the source's region of %d bytes", off, len(p.mem))
	}
	window := int(p.plan.window)
	p.low, p.end = off/window, end
	for lo := off; lo < end; {
		w := lo / window
		hi := min(end, (w+1)*window)
		if p.plan.read(w) {
			return fmt.Errorf("block at offset %d is in window %d, which is read into the ring", off, w)
		}
		if p.next <= w {
			t0 := time.Now()
			err := p.pin(p.plan.pinned(p.next, w+1))
			p.waited += time.Since(t0)
			if err != nil {
				return err
			}
		}
		win := &p.wins[w]
		if win.err != nil {
			return fmt.Errorf("pin the source's bytes %d to %d: %w", w*window, min(len(p.mem), (w+1)*window), win.err)
		}
		win.last = k
		if err := st.CopyHtoD(dst+cudrv.DevicePtr(lo-off), unsafe.Pointer(&p.mem[lo]), int64(hi-lo)); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// release unpins the windows below the latest block's that no block in
// flight reads (every block before ring index done has been copied),
// unless the whole region stays pinned.
func (p *pinnedRegion) release(done uint64) error {
	if p.plan.keep {
		return nil
	}
	for w := range p.wins[:min(p.low, p.next)] {
		if win := &p.wins[w]; !win.freed && win.buf != nil && win.last < done {
			if err := p.unpin(win); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *pinnedRegion) unpin(win *regionWindow) error {
	win.freed = true
	p.live--
	if err := win.buf.Free(); err != nil {
		return fmt.Errorf("unpin the source: %w", err)
	}
	return nil
}

// close stops the pinners and unpins every window. Nothing may read the
// region any more.
func (p *pinnedRegion) close() error {
	close(p.jobs)
	p.wg.Wait()
	var errs []error
	pinned := 0
	for w := range p.wins[:p.next] {
		win := &p.wins[w]
		if win.buf != nil {
			pinned++
		}
		if win.buf != nil && !win.freed {
			errs = append(errs, p.unpin(win))
		}
	}
	if pinned > 0 {
		gib := float64(pinned) * float64(p.plan.window) / (1 << 30)
		p.log.Info().Int("windows", pinned).Float64("pinning_s", p.pinning.Seconds()).
			Float64("pin_gibps", gib/max(p.pinning.Seconds(), 1e-9)).Float64("copies_waited_s", p.waited.Seconds()).
			Msg("source pinned in place: the time spent pinning, and the part of it a copy waited for its window")
	}
	return errors.Join(errs...)
}

// convertOnDevice makes the transport take blocks stored in encoding: a
// staging buffer a set for the stored bytes, and the kernel that converts
// them into the set's input.
func (x *explicit) convertOnDevice(encoding string) error {
	c, err := newConverter(encoding, cudrv.PTXFile(x.b.opts.PTXDir, "convert.ptx"))
	if err != nil {
		return err
	}
	x.conv = c
	for i := range x.sets {
		if x.sets[i].dRaw, err = x.b.alloc(int64(x.l.BlockValues() * c.size)); err != nil {
			return err
		}
	}
	return nil
}

// inPlace implements regionTransport: blocks that touch a window read
// into the ring are read, and every block with a share of 1.
func (x *explicit) inPlace(off, n int64) bool {
	if x.readAll {
		return false
	}
	return x.region == nil || x.region.plan.inPlace(off, n)
}

var _ regionTransport = (*explicit)(nil)
