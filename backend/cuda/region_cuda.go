//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/internal/cudrv"
)

// useRegion lets the explicit transport copy blocks to the device straight
// from the source's memory (pipeline.RegionBackend): a recording mapped
// from the page cache, samples in memory. The region is pinned window by
// window ahead of the blocks (planRegion), read-only where the device
// allows, as a mapped file needs. Windows no block reads again are
// unpinned off the copy path, so pinned memory stays within the budget
// (cuda.max_pinned_mb, or the default sized from the host) whatever the
// recording's size; a region that fits the budget whole stays pinned to
// the end. The zero-copy transport writes tagged words and takes no views.
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
	room := x.b.regionLimit
	plan, ok := planRegion(int64(len(region)), room, x.b.opts.PinWindow, x.b.opts.PinThreads)
	if !ok {
		x.b.opts.Log.Info().Int64("room_mib", room>>20).
			Msg("the pinned budget (cuda.max_pinned_mb) leaves too little room to pin the source in place: blocks are read into the ring")
		return false, nil
	}
	ro, err := cudrv.ReadOnlyRegister(x.b.ctx.Dev)
	if err != nil {
		return false, err
	}
	p := newPinnedRegion(x.b.ctx, region, plan, ro)
	p.log = x.b.opts.Log
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
		Bool("whole", plan.keep).Msg("source pinned in place, window by window ahead of the copies")
	return true, nil
}

// pinnedRegion is a source's memory pinned window by window, ahead of the
// blocks that read it, by pinner goroutines, and unpinned by an unpinner
// goroutine, each on a thread of its own with the context current. Its
// methods run on the backend's goroutine.
type pinnedRegion struct {
	mem     []byte
	plan    regionPlan
	wins    []regionWindow
	next    int          // the next window to hand to the pinners
	low     int          // the window of the latest block's first byte: none below it is read again
	live    atomic.Int64 // windows handed out and not yet unpinned
	jobs    chan int
	frees   chan *cudrv.HostBuf
	freeErr error       // the unpinner's first error, read after it stopped
	stop    atomic.Bool // close: the pinners skip what is left
	wg      sync.WaitGroup
	// What the end-of-run log line reports: the time the pinners spent
	// pinning (summed over threads), and the time the copies waited for
	// a window to be pinned.
	pinning atomic.Int64
	waited  time.Duration
	log     zerolog.Logger
}

type regionWindow struct {
	done   chan struct{} // closed once pinned (or failed)
	buf    *cudrv.HostBuf
	err    error
	last   uint64 // ring index of the last block that reads it
	queued bool
	freed  bool // handed to the unpinner
}

func newPinnedRegion(ctx *cudrv.Context, mem []byte, plan regionPlan, ro bool) *pinnedRegion {
	n := (len(mem) + int(plan.window) - 1) / int(plan.window)
	p := &pinnedRegion{mem: mem, plan: plan, wins: make([]regionWindow, n), jobs: make(chan int, n), frees: make(chan *cudrv.HostBuf, n)}
	for i := range p.wins {
		p.wins[i].done = make(chan struct{})
	}
	window := int(plan.window)
	for range min(plan.threads, n) {
		p.wg.Go(func() {
			onThread(ctx, func(cerr error) {
				for w := range p.jobs {
					win := &p.wins[w]
					switch {
					case p.stop.Load():
						win.err = errors.New("closed")
					case cerr != nil:
						win.err = cerr
					default:
						lo, hi := w*window, min(len(mem), (w+1)*window)
						t0 := time.Now()
						if ro {
							win.buf, win.err = cudrv.RegisterHostReadOnly(mem[lo:hi])
						} else {
							win.buf, win.err = cudrv.RegisterHost(mem[lo:hi], false)
						}
						p.pinning.Add(int64(time.Since(t0)))
					}
					close(win.done)
				}
			})
		})
	}
	// Unpinning a window takes milliseconds; on the backend's goroutine it
	// would stall the copies queued behind it.
	p.wg.Go(func() {
		onThread(ctx, func(cerr error) {
			for b := range p.frees {
				err := cerr
				if err == nil {
					err = b.Free()
				}
				if err != nil && p.freeErr == nil {
					p.freeErr = fmt.Errorf("unpin the source: %w", err)
				}
				p.live.Add(-1)
			}
		})
	})
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

// first pins the first window and waits for it, then hands the pinners
// the windows after it.
func (p *pinnedRegion) first() error {
	p.queue(0)
	<-p.wins[0].done
	if err := p.wins[0].err; err != nil {
		return fmt.Errorf("pin the source's first %d bytes: %w", min(len(p.mem), int(p.plan.window)), err)
	}
	p.fill()
	return nil
}

// fill hands windows to the pinners up to the bound.
func (p *pinnedRegion) fill() {
	for p.next < len(p.wins) && p.live.Load() < int64(p.plan.ahead) {
		p.queue(p.next)
	}
}

func (p *pinnedRegion) queue(w int) {
	p.wins[w].queued = true
	p.live.Add(1)
	p.next = w + 1
	p.jobs <- w
}

// copyIn enqueues the copy of block k's view (its bytes in the region) to
// dst, window by window, once the windows it reads are pinned.
func (p *pinnedRegion) copyIn(k uint64, dst cudrv.DevicePtr, view []byte, st cudrv.Stream) error {
	base := uintptr(unsafe.Pointer(&p.mem[0]))
	off := int(uintptr(unsafe.Pointer(&view[0])) - base)
	end := off + len(view)
	if off < 0 || end > len(p.mem) {
		return fmt.Errorf("block at offset %d outside the source's region of %d bytes", off, len(p.mem))
	}
	window := int(p.plan.window)
	p.low = off / window
	for lo := off; lo < end; {
		w := lo / window
		hi := min(end, (w+1)*window)
		for p.next <= w { // beyond the bound: a block straddling into a window not yet queued
			p.queue(p.next)
		}
		win := &p.wins[w]
		select {
		case <-win.done:
		default: // the copies wait for the pinners: time it
			t0 := time.Now()
			<-win.done
			p.waited += time.Since(t0)
		}
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

// release hands the unpinner the windows below the latest block's that no
// block in flight reads (every block before ring index done has been
// copied), unless the whole region stays pinned, and hands the pinners
// more.
func (p *pinnedRegion) release(done uint64) {
	if !p.plan.keep {
		for w := range p.wins[:min(p.low, len(p.wins))] {
			win := &p.wins[w]
			if win.queued && !win.freed && win.buf != nil && win.last < done {
				win.freed = true
				p.frees <- win.buf
			}
		}
	}
	p.fill()
}

// close stops the pinners and the unpinner and unpins every window.
// Nothing may read the region any more.
func (p *pinnedRegion) close() error {
	p.stop.Store(true)
	close(p.jobs)
	for w := range p.wins {
		win := &p.wins[w]
		if win.queued {
			<-win.done
		}
		if win.buf != nil && !win.freed {
			win.freed = true
			p.frees <- win.buf
		}
	}
	close(p.frees)
	p.wg.Wait()
	pinned := 0
	for w := range p.wins {
		if p.wins[w].err == nil && p.wins[w].queued {
			pinned++
		}
	}
	if pinned == 0 {
		return p.freeErr
	}
	pin := time.Duration(p.pinning.Load())
	gib := float64(pinned) * float64(p.plan.window) / (1 << 30)
	p.log.Info().Int("windows", pinned).Float64("pinning_s", pin.Seconds()).
		Float64("pin_gibps_per_thread", gib/max(pin.Seconds(), 1e-9)).Float64("copies_waited_s", p.waited.Seconds()).
		Msg("source pinned in place: the time spent pinning, and how long the copies waited for it")
	return p.freeErr
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

var _ regionTransport = (*explicit)(nil)
