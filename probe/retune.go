package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// retuner drives Config.RetuneEvery: on a goroutine of its own it retunes
// the path's fir every so often, alternating two tap sets, and records
// where each retune took effect, so that the shadow check switches its
// reference at the same sample, and how long each took from the Retune
// call to the consumer's first block filtered with the new taps.
type retuner struct {
	every time.Duration
	sets  [2][]float32

	mu       sync.Mutex
	cond     *sync.Cond
	inflight bool       // a Retune call is under way: its sample is not known yet
	sched    []switchAt // retunes accepted, in order

	// Consumer side: the retune whose first block has not been seen yet.
	pendingAt atomic.Int64 // its sample, -1 = none
	pendingT  atomic.Int64 // its Retune call, ns since t0
	t0        time.Time
	frames    int64     // consumer: frames delivered before the current block
	applyUs   []float64 // consumer: Retune call → its first output block, µs
	err       error     // the retune goroutine's first error; read after it exits
	count     int       // retunes accepted; read after it exits
}

type switchAt struct {
	at  int64
	set int
}

func newRetuner(cfg Config) *retuner {
	alt := cfg.RetuneTaps
	if len(alt) == 0 {
		// Same length, a different response (and output) from Taps.
		alt = make([]float32, len(cfg.Taps))
		for i, t := range cfg.Taps {
			alt[i] = -0.5 * t
		}
	}
	r := &retuner{every: cfg.RetuneEvery, sets: [2][]float32{cfg.Taps, alt}, t0: time.Now()}
	r.cond = sync.NewCond(&r.mu)
	r.pendingAt.Store(-1)
	return r
}

// run retunes be every r.every until ctx ends or stop closes, from when
// started closes (the backend is running then).
func (r *retuner) run(ctx context.Context, be pipeline.Backend, started, stop <-chan struct{}) {
	rt, ok := be.(pipeline.Retuner)
	if !ok {
		r.err = fmt.Errorf("probe: --retune-every: backend %s cannot retune", be.Name())
		return
	}
	select {
	case <-started:
	case <-stop:
		return
	case <-ctx.Done():
		return
	}
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for set := 1; ; set ^= 1 {
		select {
		case <-tick.C:
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
		r.mu.Lock()
		r.inflight = true
		r.mu.Unlock()
		tc := time.Since(r.t0)
		res, err := rt.Retune(stage.Retune{Index: 0, Stage: stage.NewFIR(r.sets[set], 0)})
		r.mu.Lock()
		r.inflight = false
		if err == nil && len(res) == 1 {
			r.sched = append(r.sched, switchAt{at: res[0].ChainAt, set: set})
			r.count++
			r.pendingT.Store(int64(tc))
			r.pendingAt.Store(res[0].ChainAt)
		}
		r.cond.Broadcast()
		r.mu.Unlock()
		if err != nil {
			r.err = fmt.Errorf("probe: retune %d: %w", r.count+1, err)
			return
		}
	}
}

// seen is called by the consumer for every block of frames frames: when
// it is the first block of a pending retune, it records the time since
// that retune's call.
func (r *retuner) seen(frames int) {
	if at := r.pendingAt.Load(); at >= 0 && r.frames >= at {
		r.applyUs = append(r.applyUs, float64(time.Since(r.t0)-time.Duration(r.pendingT.Load()))/1e3)
		r.pendingAt.Store(-1)
	}
	r.frames += int64(frames)
}

// setAt returns the tap set in force at frame f (the check's goroutine),
// waiting for a Retune call under way to report where it lands.
func (r *retuner) setAt(f int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.inflight {
		r.cond.Wait()
	}
	set := 0
	for i := len(r.sched) - 1; i >= 0; i-- {
		if r.sched[i].at <= f {
			set = r.sched[i].set
			break
		}
	}
	return set
}

// report fills the result's retune figures.
func (r *retuner) report(res *Result) {
	res.Retunes = r.count
	if len(r.applyUs) > 0 {
		s := slices.Clone(r.applyUs)
		slices.Sort(s)
		res.RetuneApplyP50, res.RetuneApplyMax = s[len(s)/2], s[len(s)-1]
	}
}

// errRetuneConfig is wrapped by validate's retune errors.
var errRetuneConfig = errors.New("probe: retune-every")
