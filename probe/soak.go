package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sigproc/sigproc/pipeline"
)

// Soak is the record of a soak run (Config.Duration > 0).
type Soak struct {
	DurationS   float64    `json:"duration_s"`
	IntervalS   float64    `json:"interval_s"`
	VerifyEvery int        `json:"verify_every"`
	BucketNs    int64      `json:"histogram_bucket_ns"`
	RangeUs     float64    `json:"histogram_range_us"`
	Intervals   []Interval `json:"intervals"`
	// Totals over the intervals (the warmup is not measured: its drops
	// are in the result's dropped_blocks only).
	Scheduled   uint64 `json:"scheduled_blocks"`
	Dropped     uint64 `json:"dropped_blocks"`
	Gaps        uint64 `json:"gaps"`
	Mismatches  int    `json:"mismatches"`
	Unverified  int    `json:"unverified_blocks"`
	OverRange   uint64 `json:"over_range_blocks"`
	Slow        uint64 `json:"slow_blocks"` // blocks of SlowLatency or more
	Interrupted bool   `json:"interrupted"`
	// Passed: the whole duration ran with no drop, gap, mismatch or
	// block left unverified that the check should have compared.
	Passed bool `json:"passed"`
}

// Interval is one soak interval. Times are from the start of measuring,
// latencies in µs; percentiles are within one histogram bucket (10 ns) of
// the exact ones, and latencies over the histogram range count in
// OverRange (a percentile that falls there reports the exact max).
type Interval struct {
	Index      int     `json:"interval"` // 1-based, as printed
	StartS     float64 `json:"start_s"`
	EndS       float64 `json:"end_s"`
	Scheduled  uint64  `json:"scheduled_blocks"` // blocks the source produced in it
	Blocks     uint64  `json:"blocks"`           // of those, filtered blocks the host saw
	Dropped    uint64  `json:"dropped_blocks"`   // scheduled - blocks
	Gaps       uint64  `json:"gaps"`             // sequence numbers found missing in it
	Verified   int     `json:"verified_blocks"`
	Unverified int     `json:"unverified_blocks"`
	Mismatches int     `json:"mismatches"`
	MaxRelErr  float64 `json:"max_rel_err"`
	Latency
	OverRange uint64 `json:"over_range_blocks"`
	Slow      uint64 `json:"slow_blocks"` // blocks of SlowLatency or more
}

// SlowLatency is the latency from which a soak counts a block as slow:
// the far tail a real-time loop misses its deadline in.
const SlowLatency = 100 * time.Microsecond

// OK reports whether the interval had no drop, gap, mismatch or block
// the check should have compared and could not.
func (iv Interval) OK() bool {
	return iv.Dropped == 0 && iv.Gaps == 0 && iv.Mismatches == 0 && iv.Unverified == 0
}

// ErrLoss is wrapped by Run's error when a soak interval dropped blocks or
// saw sequence gaps.
var ErrLoss = errors.New("probe: blocks lost during the soak")

// ErrUnverified is wrapped by Run's error when a soak left blocks the
// check should have compared unverified: their input records were gone
// (see recordSpan), and a chain's check stops there for the rest of the run.
var ErrUnverified = errors.New("probe: blocks left unverified during the soak")

// quantiles are the reported percentiles, ascending.
var quantiles = []float64{0.50, 0.90, 0.99, 0.999}

// acc is the consumer's running count of one interval.
type acc struct {
	index            int
	startSeq, endSeq uint64
	blocks, gaps     uint64
	submitted        uint64 // blocks queued for the check by the interval's end
	hist             *Histogram
	checks           // filled in by the summariser from meter.checks
}

// checks are the shadow check's counts, for one interval or a whole run.
type checks struct {
	verified, unverified, mismatches int
	maxRelErr                        float64
}

// add counts one verdict; e is the verified block's relative error.
func (c *checks) add(vd verdict, e, tol float64) {
	switch vd {
	case unverified:
		c.unverified++
	case verified:
		c.verified++
		if e > c.maxRelErr || math.IsNaN(e) {
			c.maxRelErr = e
		}
		if !(e <= tol) {
			c.mismatches++
		}
	}
}

// meter is the soak's consumer-side state. onBlock runs on the pipeline's
// consumer goroutine and is allocation-free except at an interval rollover,
// which hands the interval's histogram to the summariser goroutine (a mutex
// held for an append) and takes a spare one: a fresh allocation only if the
// summariser has not returned one yet. The shadow check runs on a checker
// goroutine (see checker), which counts each interval's verdicts into
// checks; the summariser waits for an interval's last check before it
// reports the interval.
type meter struct {
	cfg    Config
	path   string
	src    *source
	tol    float64
	res    *Result
	warmup uint64
	cur    acc
	next   uint64 // the sequence number expected next
	ctx    context.Context
	chk    *checker
	stall  *stallWatch // nil without Config.OnStall

	// Owned by the check goroutine; an interval's entry is read by the
	// summariser once chk has checked the blocks submitted before its end.
	checks []checks
	ck     int // interval of the last checked block

	mu      sync.Mutex
	pending []acc // rolled over, not yet summarised
	spare   []acc // the summariser's batch buffer, swapped with pending
	notify  chan struct{}
	free    chan *Histogram

	// Owned by the summariser goroutine until it has exited.
	intervals []Interval
	overall   *Histogram
}

func newMeter(ctx context.Context, cfg Config, path string, src *source, ver *verifier, ch int, tol float64, res *Result) (*meter, error) {
	m := &meter{cfg: cfg, path: path, src: src, tol: tol, res: res, warmup: uint64(cfg.Warmup), ctx: ctx,
		pending: make([]acc, 0, 4), spare: make([]acc, 0, 4),
		notify: make(chan struct{}, 1), free: make(chan *Histogram, 2),
		checks: make([]checks, cfg.intervals()), stall: newStallWatch(cfg)}
	var err error
	if m.overall, err = NewHistogram(HistBucket, HistRange); err != nil {
		return nil, err
	}
	if m.cur.hist, err = NewHistogram(HistBucket, HistRange); err != nil {
		return nil, err
	}
	for range cap(m.free) {
		h, _ := NewHistogram(HistBucket, HistRange)
		m.free <- h
	}
	m.cur.startSeq = m.warmup
	m.intervals = make([]Interval, 0, min(cfg.intervals(), 1024))
	if m.chk, err = startChecker(cfg, ch, ver, m.checked); err != nil {
		return nil, err
	}
	return m, nil
}

// checked counts one verdict, on the check goroutine: into the run's totals
// (the warmup included) and into its interval's checks.
func (m *meter) checked(seq uint64, vd verdict, e float64) {
	m.res.count(vd, e, m.tol)
	if seq < m.warmup {
		return
	}
	for m.ck+1 < len(m.src.bounds) && seq >= m.src.bounds[m.ck+1].Load() {
		m.ck++
	}
	if m.ck >= len(m.checks) {
		return
	}
	m.checks[m.ck].add(vd, e, m.tol)
}

// onBlock is the pipeline's OnBlock hook.
func (m *meter) onBlock(o pipeline.Output, seen int64) {
	m.stall.seen(o.Seq, seen-o.Timestamp)
	if o.Seq < m.warmup {
		m.chk.submit(m.ctx, o)
		m.next = o.Seq + 1
		return
	}
	for m.cur.index+1 < len(m.src.bounds) {
		b := m.src.bounds[m.cur.index+1].Load()
		if o.Seq < b {
			break
		}
		m.rollover(b)
	}
	m.chk.submit(m.ctx, o) // after the rollover: this block is the new interval's
	if from := max(m.next, m.warmup); o.Seq > from {
		m.cur.gaps += o.Seq - from
	}
	m.next = o.Seq + 1
	d := seen - o.Timestamp
	m.cur.blocks++
	m.cur.hist.Record(d)
	if m.cfg.onLatency != nil {
		m.cfg.onLatency(m.cur.index, d)
	}
}

// rollover ends the current interval at endSeq and starts the next.
func (m *meter) rollover(endSeq uint64) {
	m.push(endSeq)
	var h *Histogram
	select {
	case h = <-m.free:
	default:
		h, _ = NewHistogram(HistBucket, HistRange) // the summariser is behind
	}
	m.cur = acc{index: m.cur.index + 1, startSeq: endSeq, hist: h}
}

func (m *meter) push(endSeq uint64) {
	m.cur.endSeq = endSeq
	m.cur.submitted = m.chk.submitted
	m.mu.Lock()
	m.pending = append(m.pending, m.cur)
	m.mu.Unlock()
	select {
	case m.notify <- struct{}{}:
	default: // already signalled
	}
}

// summarise turns rolled-over intervals into Intervals until done is
// closed, then handles what is left and returns.
func (m *meter) summarise(done <-chan struct{}) {
	for {
		select {
		case <-m.notify:
			m.drain()
		case <-done:
			m.drain()
			return
		}
	}
}

func (m *meter) drain() {
	m.mu.Lock()
	batch := m.pending
	m.pending, m.spare = m.spare[:0], batch
	m.mu.Unlock()
	for _, a := range batch {
		m.chk.waitChecked(a.submitted)
		if a.index < len(m.checks) {
			a.checks = m.checks[a.index]
		}
		iv := m.interval(a)
		m.overall.Add(a.hist)
		a.hist.Reset()
		select {
		case m.free <- a.hist:
		default:
		}
		m.intervals = append(m.intervals, iv)
		if m.cfg.OnInterval != nil {
			m.cfg.OnInterval(m.path, iv)
		}
	}
}

func (m *meter) interval(a acc) Interval {
	step := m.cfg.interval()
	iv := Interval{Index: a.index + 1,
		StartS:    (time.Duration(a.index) * step).Seconds(),
		EndS:      min(time.Duration(a.index+1)*step, m.cfg.Duration).Seconds(),
		Scheduled: a.endSeq - a.startSeq, Blocks: a.blocks, Gaps: a.gaps,
		Verified: a.verified, Unverified: a.unverified, Mismatches: a.mismatches, MaxRelErr: a.maxRelErr,
		Latency: latencyOf(a.hist), OverRange: a.hist.OverRange(), Slow: a.hist.Above(int64(SlowLatency))}
	if iv.Scheduled > iv.Blocks {
		iv.Dropped = iv.Scheduled - iv.Blocks
	}
	return iv
}

// finish closes the intervals the source reached, after the run: the
// current one, and any the consumer never saw a block of. Blocks lost after
// the last one seen count as gaps too, as the pipeline counts them.
func (m *meter) finish() {
	if !m.src.measuring {
		return // stopped during the warmup: nothing measured
	}
	end := uint64(m.src.n)
	for {
		last := m.cur.index >= m.src.cur
		hi := end
		if !last {
			hi = m.src.bounds[m.cur.index+1].Load()
		}
		if from := max(m.next, m.cur.startSeq); hi > from {
			m.cur.gaps += hi - from
		}
		if last {
			m.push(end)
			return
		}
		m.rollover(hi)
	}
}

func runSoak(ctx context.Context, cfg Config, p Path) (Result, error) {
	ch := cfg.frameValues()
	tol := cfg.Tolerance
	if tol == 0 {
		tol = 1e-5
	}
	res := Result{Path: p.Name, BlockSize: cfg.BlockSize, Taps: cfg.ntaps(), Complex: cfg.Complex, Chain: cfg.Chain.String(),
		PeriodUs: float64(cfg.Period) / 1e3}
	src := newSource(cfg, ch)
	ver, err := newVerifier(cfg, src, ch, nil)
	if err != nil {
		return res, err
	}
	be, err := p.New()
	if err != nil {
		return res, err
	}
	m, err := newMeter(ctx, cfg, p.Name, src, ver, ch, tol, &res)
	if err != nil {
		_ = be.Close()
		return res, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { m.summarise(done) })

	t0 := time.Now()
	st, runErr := pipeline.Run(ctx, input(cfg, src), be, nullSink{}, pipeline.Config{
		BlockSize: cfg.BlockSize, Complex: cfg.Complex, Channels: cfg.Chain.Channels, OutChannels: cfg.Chain.OutChannels(), OutComplex: cfg.chain() && cfg.Chain.OutComplex(),
		Slots: cfg.Slots, Policy: pipeline.PolicyDrop,
		Realtime: cfg.Realtime,
	}, pipeline.Options{OnBlock: m.onBlock})
	wall := time.Since(t0)
	chkErr := m.chk.close() // every check done before the last intervals are summarised
	m.finish()
	close(done)
	wg.Wait()

	res.Backend = be.Name()
	if t, ok := be.(interface{ ComputeTimes() []float64 }); ok {
		if ct := t.ComputeTimes(); len(ct) > 0 {
			slices.Sort(ct)
			res.ComputeP50, res.ComputeP99 = ct[len(ct)/2], ct[min(len(ct)-1, len(ct)*99/100)]
		}
	}
	closeErr := be.Close()
	if wall > 0 {
		res.MSps = float64(st.SamplesOut) / wall.Seconds() / 1e6
	}
	s := &Soak{DurationS: cfg.Duration.Seconds(), IntervalS: cfg.interval().Seconds(), VerifyEvery: max(1, cfg.VerifyEvery),
		BucketNs: int64(HistBucket), RangeUs: float64(HistRange) / 1e3, Intervals: m.intervals, Interrupted: st.Interrupted}
	for _, iv := range s.Intervals {
		s.Scheduled += iv.Scheduled
		s.Dropped += iv.Dropped
		s.Gaps += iv.Gaps
		s.Mismatches += iv.Mismatches
		s.Unverified += iv.Unverified
		s.OverRange += iv.OverRange
		s.Slow += iv.Slow
	}
	res.Soak = s
	res.Dropped, res.Gaps, res.Blocks = st.DroppedBlocks, st.Gaps, int(m.overall.Count())
	res.lateness(src)
	res.Latency = latencyOf(m.overall)
	res.fromFirstSample(cfg)
	if runErr != nil {
		return res, runErr
	}
	if closeErr != nil {
		return res, closeErr
	}
	if chkErr != nil {
		return res, chkErr
	}
	soakErr := soakError(s, &res, tol)
	s.Passed = soakErr == nil && !s.Interrupted && len(s.Intervals) == cfg.intervals()
	return res, soakErr
}

// soakError says why a soak failed: losses or blocks left unverified in
// any interval, or a mismatch anywhere (the warmup included).
func soakError(s *Soak, r *Result, tol float64) error {
	var bad []string
	for _, iv := range s.Intervals {
		if !iv.OK() && len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("interval %d: %d dropped, %d gaps, %d mismatches, %d unverified", iv.Index, iv.Dropped, iv.Gaps, iv.Mismatches, iv.Unverified))
		}
	}
	var parts []string
	var errs []any
	if s.Dropped > 0 || s.Gaps > 0 {
		parts = append(parts, "%w: %d dropped blocks, %d gaps")
		errs = append(errs, ErrLoss, s.Dropped, s.Gaps)
	}
	if r.Mismatches > 0 {
		parts = append(parts, "%w: %d of %d verified blocks, worst relative error %.3g (tolerance %g)")
		errs = append(errs, ErrMismatch, r.Mismatches, r.Verified, r.MaxRelErr, tol)
	}
	if s.Unverified > 0 {
		parts = append(parts, "%w: %d blocks (their input was overwritten before the check reached them: a stall longer than the source's records cover)")
		errs = append(errs, ErrUnverified, s.Unverified)
	}
	if len(parts) == 0 {
		return nil
	}
	msg := strings.Join(parts, "; ")
	if len(bad) > 0 {
		msg += " (" + strings.Join(bad, "; ") + ")"
	}
	return fmt.Errorf(msg, errs...)
}
