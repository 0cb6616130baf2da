package probe

import (
	"context"
	"errors"
	"fmt"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// retuner drives Config.RetuneEvery: on a goroutine of its own it retunes
// the path every so often, alternating two sets of parameters (a plain
// FIR's taps; a chain's first shift, else its first fir's taps), and
// records where each retune took effect, so that the shadow check switches
// its reference at the same sample, and how long each took from the Retune
// call to the consumer's first block with the new parameters.
type retuner struct {
	every   time.Duration
	spin    bool              // wait for each retune by spinning (Config.RetuneSpin)
	changes [2][]stage.Retune // the retune to each set

	mu       sync.Mutex
	cond     *sync.Cond
	inflight bool       // a Retune call is under way: its sample is not known yet
	sched    []switchAt // retunes accepted, in order

	// Consumer side: the retune whose first block has not been seen yet.
	pendingAt atomic.Int64 // its sample, -1 = none
	pendingT  atomic.Int64 // its Retune call, ns since t0
	t0        time.Time
	frames    atomic.Int64 // consumer: frames delivered before the current block (read by the retuner)
	applyUs   []float64    // consumer: Retune call → its first output block, µs
	blockUs   []float64    // consumer: that block's own latency (its timestamp → seen), µs
	callUs    []float64    // the Retune calls' own time, µs; read after the retune goroutine exits
	lead      []float64    // blocks from the consumer's at each call to the retune's first; likewise
	block     int64        // frames a block
	err       error        // the retune goroutine's first error; read after it exits
	count     int          // retunes accepted; read after it exits
}

type switchAt struct {
	at  int64
	set int
}

func newRetuner(cfg Config) (*retuner, error) {
	r := &retuner{every: cfg.RetuneEvery, spin: cfg.RetuneSpin, t0: time.Now(), block: int64(cfg.BlockSize)}
	r.cond = sync.NewCond(&r.mu)
	r.pendingAt.Store(-1)
	if cfg.chain() {
		ch, err := chainRetunes(cfg.Chain)
		if err != nil {
			return nil, err
		}
		r.changes = ch
		return r, nil
	}
	alt := cfg.RetuneTaps
	if len(alt) == 0 {
		alt = otherTaps(cfg.Taps)
	}
	for k, taps := range [2][]float32{cfg.Taps, alt} {
		r.changes[k] = []stage.Retune{{Index: 0, Stage: stage.NewFIR(taps, 0)}}
	}
	return r, nil
}

// otherTaps is taps of the same length and a different response (and
// output): taps × −0.5.
func otherTaps(taps []float32) []float32 {
	alt := make([]float32, len(taps))
	for i, t := range taps {
		alt[i] = -0.5 * t
	}
	return alt
}

// chainRetunes returns a chain's two alternating retunes: its first shift
// at its frequency and the opposite one (a quarter of its input rate if
// it is 0), else its first fir's taps and otherTaps.
func chainRetunes(c stage.Chain) (ch [2][]stage.Retune, err error) {
	rate := c.SampleRate
	for i, s := range c.Stages {
		if s.Kind == stage.KindShift {
			other := -s.FrequencyHz
			if other == 0 {
				other = rate / 4
			}
			ch[0] = []stage.Retune{{Index: i, Stage: stage.NewShift(s.FrequencyHz)}}
			ch[1] = []stage.Retune{{Index: i, Stage: stage.NewShift(other)}}
			return ch, nil
		}
		rate = s.Rate(rate)
	}
	for i, s := range c.Stages {
		if s.Kind == stage.KindFIR {
			ch[0] = []stage.Retune{{Index: i, Stage: stage.NewFIR(s.Taps, s.Decimate)}}
			ch[1] = []stage.Retune{{Index: i, Stage: stage.NewFIR(otherTaps(s.Taps), s.Decimate)}}
			return ch, nil
		}
	}
	return ch, fmt.Errorf("%w: the chain %s has no shift or fir stage to retune", errRetuneConfig, c)
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
	var tick <-chan time.Time
	if !r.spin {
		t := time.NewTicker(r.every)
		defer t.Stop()
		tick = t.C
	}
	next := time.Now()
	for set := 1; ; set ^= 1 {
		if r.spin {
			// As the ticker does, a retune that fell behind (a slow call)
			// does not make the next ones fire back to back.
			next = next.Add(r.every)
			if now := time.Now(); now.After(next) {
				next = now
			}
			if !spinUntil(next, stop, ctx.Done()) {
				return
			}
		} else {
			select {
			case <-tick:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
		r.mu.Lock()
		r.inflight = true
		r.mu.Unlock()
		tc := time.Since(r.t0)
		f0 := r.frames.Load()
		reg := trace.StartRegion(ctx, "probe: Retune call") // sigproc probe --trace
		res, err := rt.Retune(r.changes[set]...)
		reg.End()
		r.callUs = append(r.callUs, float64(time.Since(r.t0)-tc)/1e3)
		if err == nil && len(res) > 0 {
			r.lead = append(r.lead, float64(res[0].ChainAt-f0)/float64(r.block))
		}
		r.mu.Lock()
		r.inflight = false
		if err == nil && len(res) > 0 {
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

// spinUntil spins until t and reports true, or false once stop or done
// closes (checked every 1024 spins).
func spinUntil(t time.Time, stop, done <-chan struct{}) bool {
	for spins := 0; time.Now().Before(t); spins++ {
		if spins&1023 == 1023 {
			select {
			case <-stop:
				return false
			case <-done:
				return false
			default:
			}
		}
	}
	return true
}

// seen is called by the consumer for every block of frames input frames,
// whose own latency was lat: when it is the first block of a pending
// retune, it records the time since that retune's call, and lat.
func (r *retuner) seen(frames int, lat time.Duration) {
	if at := r.pendingAt.Load(); at >= 0 && r.frames.Load() >= at {
		r.applyUs = append(r.applyUs, float64(time.Since(r.t0)-time.Duration(r.pendingT.Load()))/1e3)
		r.blockUs = append(r.blockUs, float64(lat)/1e3)
		r.pendingAt.Store(-1)
	}
	r.frames.Add(int64(frames))
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
		res.RetuneApplyMax = slices.Max(r.applyUs)
	}
	res.RetuneApplyP50, res.RetuneBlockP50 = median(r.applyUs), median(r.blockUs)
	res.RetuneCallP50, res.RetuneLeadP50 = median(r.callUs), median(r.lead)
}

// median is v's middle value once sorted (the upper one of an even count),
// 0 for none; v is left as it was.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// errRetuneConfig is wrapped by validate's retune errors.
var errRetuneConfig = errors.New("probe: retune-every")
