// Package probe measures end-to-end block latency through pipeline
// backends: a paced synthetic source writes blocks into each backend's ring,
// and every filtered block is timed (capture timestamp at the ring write to
// the moment the host sees the output) and checked against a CPU shadow FIR.
// Several paths are measured in one run, on the same seeded input, so their
// figures compare.
//
// The soak mode (Config.Duration) measures for a wall-clock duration instead
// of a block count, in intervals reported as they end, with latencies in a
// fixed-bucket Histogram so that the consumer stays O(1) and allocation-free
// per block however long it runs; any drop or mismatch fails it.
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// Config is one probe run's geometry.
type Config struct {
	BlockSize int
	Taps      []float32
	Complex   bool
	Blocks    int           // measured blocks per path
	Warmup    int           // blocks sent first and not measured
	Period    time.Duration // one block every Period; 0 = as fast as the path takes them
	Slots     int           // ring depth; 0 = 64
	Seed      uint64
	Tolerance float64 // max error relative to the block's RMS; 0 = 1e-5
	// Realtime are the producer thread's settings (the config's realtime
	// section): the paced source spins on the producer goroutine, which,
	// unlocked, the runtime may move between threads and cores mid-run.
	Realtime pipeline.Realtime

	// Duration > 0 is the soak mode: after the warmup, each path is
	// measured for this long (wall clock; with a period, Duration/Period
	// blocks) instead of for Blocks blocks, which must then be 0. The
	// latencies go into a fixed-bucket histogram (see Histogram), not a
	// slice, so memory stays constant however long it runs.
	Duration time.Duration
	// Interval splits the soak into intervals of this length (the last
	// may be shorter), each reported on its own; 0 = one interval.
	Interval time.Duration
	// VerifyEvery compares 1 block in N with the CPU reference (Seq%N ==
	// 0); 0 or 1 compares every block. See verifier for how the reference
	// keeps its history.
	VerifyEvery int
	// OnInterval, if set, is called with each soak interval as it ends,
	// in order, from a goroutine of its own (never the latency path).
	OnInterval func(path string, iv Interval)

	// SampleRate is the stream's rate in samples (frames) per second, for
	// the latency from a block's first sample; 0 = BlockSize/Period, and
	// none is reported when Period is 0 too.
	SampleRate float64

	// StagedInput makes the zero-copy path take the probe's blocks the old
	// way, through a float32 staging slot copied into the mapped ring at
	// publish time, instead of having the source write the mapped slot's
	// tagged words itself: an A/B of that copy in one run.
	StagedInput bool

	// Chain, when it has stages, is run and checked instead of Taps: the
	// CPU reference is backend/cpu's Chain, fed every delivered block
	// (VerifyEvery must be 0 or 1). Its input must match BlockSize's
	// stream: Chain.Complex = Complex. Chain.Channels > 1 (a chain, even a
	// plain FIR) makes each frame that many channels.
	Chain stage.Chain

	// RetuneEvery > 0 retunes the path (the backend must be a
	// pipeline.Retuner) every so long while it runs: a plain FIR
	// alternating RetuneTaps and Taps, a chain its first shift between
	// its frequency and the opposite (else its first fir's taps); the
	// shadow check takes each retune at the sample it reports.
	// Block-count mode, every block verified.
	RetuneEvery time.Duration
	// RetuneSpin waits for each retune's time by spinning instead of a
	// ticker's sleep, so that the Retune call runs on a core that is
	// awake: an A/B of the call's own time against a woken core's.
	RetuneSpin bool
	// RetuneTaps is the other tap set; empty = Taps × -0.5.
	RetuneTaps []float32

	// OnStall, if set, is called once per path, on the consumer
	// goroutine, at the first measured block that took StallOver or more
	// from its timestamp (0: DefaultStallOver), or that came after
	// dropped blocks: where a flight recorder's window is worth keeping
	// (probe --trace-stall). It must return at once.
	OnStall   func(seq uint64, latency time.Duration, dropped uint64)
	StallOver time.Duration

	onLatency func(interval int, ns int64) // tests: every measured soak latency
	records   int                          // tests: the source's input records (0: recordSlots)
}

// frameValues is the float32 values per frame: the chain's channels (N
// channels run as a Chain with Channels = N), each real or complex.
func (c Config) frameValues() int { return pipeline.FrameValues(c.Chain.Channels, c.Complex) }

// shadowChain is the chain the shadow check runs: Chain, or for a plain
// FIR a chain of that one fir on Chain.Channels channels.
func (c Config) shadowChain() stage.Chain {
	if c.chain() {
		return c.Chain
	}
	return stage.Chain{SampleRate: 1, Complex: c.Complex, Channels: c.Chain.Channels, Stages: []stage.Stage{stage.NewFIR(c.Taps, 1)}}
}

// chain reports whether the probe runs a stage chain.
func (c Config) chain() bool { return len(c.Chain.Stages) > 0 }

// ntaps is the tap count reported: the plain FIR's, or the chain's first
// filter's.
func (c Config) ntaps() int {
	for _, s := range c.Chain.Stages {
		if len(s.Taps) > 0 {
			return len(s.Taps)
		}
	}
	return len(c.Taps)
}

// maxIntervals bounds Duration/Interval.
const maxIntervals = 1 << 20

func (c Config) validate() error {
	switch {
	case c.BlockSize <= 0:
		return fmt.Errorf("probe: block size must be > 0, got %d", c.BlockSize)
	case len(c.Taps) == 0 && !c.chain():
		return errors.New("probe: no taps")
	case c.chain() && c.Chain.Complex != c.Complex:
		return fmt.Errorf("probe: chain input complex=%v but the probe's blocks complex=%v", c.Chain.Complex, c.Complex)
	case c.chain() && c.VerifyEvery > 1:
		return fmt.Errorf("probe: verify-every %d needs a plain FIR; a stage chain is checked on every block", c.VerifyEvery)
	case c.Duration < 0:
		return fmt.Errorf("probe: duration must be >= 0, got %v", c.Duration)
	case c.Duration > 0 && c.Blocks != 0:
		return fmt.Errorf("probe: blocks (%d) and duration (%v) are exclusive: measure a block count or a duration", c.Blocks, c.Duration)
	case c.Duration == 0 && c.Blocks <= 0:
		return fmt.Errorf("probe: blocks must be > 0, got %d", c.Blocks)
	case c.Interval < 0:
		return fmt.Errorf("probe: interval must be >= 0, got %v", c.Interval)
	case c.Interval > 0 && c.Duration == 0:
		return fmt.Errorf("probe: an interval (%v) needs a duration", c.Interval)
	case c.Interval > c.Duration:
		return fmt.Errorf("probe: interval %v is longer than the duration %v", c.Interval, c.Duration)
	case c.Interval > 0 && c.Duration/c.Interval >= maxIntervals:
		return fmt.Errorf("probe: duration %v in intervals of %v is more than %d intervals", c.Duration, c.Interval, maxIntervals)
	case c.VerifyEvery < 0:
		return fmt.Errorf("probe: verify-every must be >= 0, got %d", c.VerifyEvery)
	case c.Warmup < 0:
		return fmt.Errorf("probe: warmup must be >= 0, got %d", c.Warmup)
	case c.Period < 0:
		return fmt.Errorf("probe: period must be >= 0, got %v", c.Period)
	case c.RetuneEvery < 0:
		return fmt.Errorf("%w: must be >= 0, got %v", errRetuneConfig, c.RetuneEvery)
	case c.RetuneSpin && c.RetuneEvery == 0:
		return fmt.Errorf("%w: spinning between retunes needs a retune period", errRetuneConfig)
	case c.RetuneEvery > 0 && (c.Duration > 0 || c.VerifyEvery > 1):
		return fmt.Errorf("%w: retunes are checked in the block-count mode with every block verified", errRetuneConfig)
	}
	return nil
}

// interval is the soak interval length, Duration when unset.
func (c Config) interval() time.Duration {
	if c.Interval > 0 {
		return c.Interval
	}
	return c.Duration
}

// intervals is the number of soak intervals.
func (c Config) intervals() int {
	iv := c.interval()
	return int((c.Duration + iv - 1) / iv)
}

// Path is one backend to measure; New is called once per run.
type Path struct {
	Name string
	New  func() (pipeline.Backend, error)
}

// Result is one path's figures. Latencies are in microseconds.
type Result struct {
	Path       string  `json:"path"`
	Backend    string  `json:"backend"`
	BlockSize  int     `json:"block_size"`
	Taps       int     `json:"taps"`
	Complex    bool    `json:"complex"`
	Chain      string  `json:"chain,omitempty"` // the stage chain, when one ran
	PeriodUs   float64 `json:"period_us"`
	Blocks     int     `json:"blocks"`
	Dropped    uint64  `json:"dropped_blocks"`
	Late       int64   `json:"late_blocks"`       // blocks the source started more than a period after their time
	PaceUs     float64 `json:"pace_us,omitempty"` // with late blocks: the source's mean time per block, µs
	Gaps       uint64  `json:"gaps"`
	Verified   int     `json:"verified_blocks"`
	Unverified int     `json:"unverified_blocks"`
	Mismatches int     `json:"mismatches"`
	MaxRelErr  float64 `json:"max_rel_err"`
	Latency
	MSps float64 `json:"msps"`
	// GPU-side time from the last input word arriving to the output being
	// written (zero-copy with timing), µs.
	ComputeP50 float64 `json:"gpu_compute_p50_us,omitempty"`
	ComputeP99 float64 `json:"gpu_compute_p99_us,omitempty"`
	// Retunes accepted during the run (Config.RetuneEvery), and the time
	// from a Retune call to the consumer's first block filtered with the
	// new taps, µs.
	Retunes        int       `json:"retunes,omitempty"`
	RetuneApplyP50 float64   `json:"retune_apply_p50_us,omitempty"`
	RetuneCallP50  float64   `json:"retune_call_p50_us,omitempty"`     // the Retune call itself
	RetuneLeadP50  float64   `json:"retune_lead_p50_blocks,omitempty"` // blocks from the consumer's at the call to the retune's first
	RetuneBlockP50 float64   `json:"retune_block_p50_us,omitempty"`    // the retuned block's own latency (its timestamp → seen; on the CPU path it may have waited in the ring since before the call)
	RetuneApplyMax float64   `json:"retune_apply_max_us,omitempty"`
	Latencies      []float64 `json:"-"` // block-count mode only
	// FillUs is the time to fill a block at the sample rate,
	// (BlockSize−1)/rate in µs: how old a block's first sample is when its
	// last arrives (0 = no rate).
	FillUs float64 `json:"fill_us,omitempty"`
	// FromFirstSample is the latency from a block's first sample: FillUs
	// plus the end-to-end latency, what a user of a live ADC sees. Nil
	// without a rate.
	FromFirstSample *Latency `json:"from_first_sample,omitempty"`
	// Soak holds the per-interval figures of a soak run (Config.Duration >
	// 0); the fields above are then the figures of the whole soak, with
	// percentiles from its histogram.
	Soak *Soak `json:"soak,omitempty"`
}

// Latency is the end-to-end latency of a set of blocks, in µs; Result and
// Interval embed it, so its fields sit at their top level in the JSON.
type Latency struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p999_us"`
	Max  float64 `json:"max_us"`
	Mean float64 `json:"mean_us"`
}

// rate is the sample rate the first-sample latency assumes: SampleRate,
// else one block per Period; 0 when neither is set.
func (c Config) rate() float64 {
	switch {
	case c.SampleRate > 0:
		return c.SampleRate
	case c.Period > 0:
		return float64(c.BlockSize) / c.Period.Seconds()
	}
	return 0
}

// fromFirstSample sets FillUs and FromFirstSample from the end-to-end
// figures: the first sample of a block arrived (BlockSize−1)/rate before
// its last, when the block's timestamp is taken, so every percentile moves
// by that constant.
func (r *Result) fromFirstSample(cfg Config) {
	rate := cfg.rate()
	if rate <= 0 || r.Blocks == 0 {
		return
	}
	f := float64(cfg.BlockSize-1) / rate * 1e6
	l := r.Latency
	l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean = l.P50+f, l.P90+f, l.P99+f, l.P999+f, l.Max+f, l.Mean+f
	r.FillUs, r.FromFirstSample = f, &l
}

// latencyOf reads a Latency off a histogram of nanoseconds.
func latencyOf(h *Histogram) Latency {
	q := h.Quantiles(quantiles)
	return Latency{P50: float64(q[0]) / 1e3, P90: float64(q[1]) / 1e3, P99: float64(q[2]) / 1e3, P999: float64(q[3]) / 1e3,
		Max: float64(h.Max()) / 1e3, Mean: h.Mean() / 1e3}
}

// ErrMismatch is wrapped by Run's error when a path's output differs from
// the CPU reference.
var ErrMismatch = errors.New("probe: output differs from the CPU reference")

// Run measures every path in turn on the same input and returns their
// results. A mismatch against the CPU shadow is an error (the results are
// still returned), as is any backend error.
func Run(ctx context.Context, cfg Config, paths []Path) ([]Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var out []Result
	for _, p := range paths {
		res, err := runPath(ctx, cfg, p)
		out = append(out, res)
		if err != nil {
			return out, fmt.Errorf("probe %s: %w", p.Name, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out, nil
}

func runPath(ctx context.Context, cfg Config, p Path) (Result, error) {
	if cfg.Duration > 0 {
		return runSoak(ctx, cfg, p)
	}
	ch := cfg.frameValues()
	tol := cfg.Tolerance
	if tol == 0 {
		tol = 1e-5
	}
	res := Result{Path: p.Name, BlockSize: cfg.BlockSize, Taps: cfg.ntaps(), Complex: cfg.Complex,
		PeriodUs: float64(cfg.Period) / 1e3}
	if cfg.chain() {
		res.Chain = cfg.Chain.String()
	}
	be, err := p.New()
	if err != nil {
		return res, err
	}
	total := cfg.Warmup + cfg.Blocks
	src := newSource(cfg, ch)
	var rt *retuner
	if cfg.RetuneEvery > 0 {
		if rt, err = newRetuner(cfg); err != nil {
			_ = be.Close()
			return res, err
		}
	}
	ver, err := newVerifier(cfg, src, ch, rt)
	if err != nil {
		_ = be.Close()
		return res, err
	}
	chk, err := startChecker(cfg, ch, ver, func(_ uint64, vd verdict, e float64) { res.count(vd, e, tol) })
	if err != nil {
		_ = be.Close()
		return res, err
	}
	lat := make([]int64, 0, cfg.Blocks)
	started, stop := make(chan struct{}), make(chan struct{})
	var retunes sync.WaitGroup
	measuring := false
	stall := newStallWatch(cfg)
	onBlock := func(o pipeline.Output, seen int64) {
		if o.Seq >= uint64(cfg.Warmup) {
			lat = append(lat, seen-o.Timestamp)
		}
		stall.seen(o.Seq, seen-o.Timestamp)
		if rt != nil {
			if !measuring && o.Seq >= uint64(cfg.Warmup) {
				measuring = true
				close(started) // retunes start with the measured blocks
			}
			rt.seen(cfg.BlockSize, time.Duration(seen-o.Timestamp)) // probe blocks are all full
		}
		chk.submit(ctx, o)
	}
	if rt != nil {
		retunes.Add(1)
		go func() {
			defer retunes.Done()
			rt.run(ctx, be, started, stop)
		}()
	}
	t0 := time.Now()
	st, runErr := pipeline.Run(ctx, input(cfg, src), be, nullSink{}, pipeline.Config{
		BlockSize: cfg.BlockSize, Complex: cfg.Complex, Channels: cfg.Chain.Channels, OutChannels: cfg.Chain.OutChannels(), OutComplex: cfg.chain() && cfg.Chain.OutComplex(),
		Slots: cfg.Slots, Source: pipeline.RingSource{Live: true, MinSlots: pipeline.LiveSlots}, Policy: pipeline.PolicyDrop,
		MaxSamples: int64(total * cfg.BlockSize), Realtime: cfg.Realtime,
	}, pipeline.Options{OnBlock: onBlock})
	wall := time.Since(t0)
	close(stop)
	retunes.Wait()
	chkErr := chk.close() // every submitted block checked; res's counts are final
	if rt != nil {
		rt.report(&res)
		chkErr = errors.Join(chkErr, rt.err)
	}
	res.Backend = be.Name()
	if t, ok := be.(interface{ ComputeTimes() []float64 }); ok {
		if ct := t.ComputeTimes(); len(ct) > 0 {
			slices.Sort(ct)
			res.ComputeP50, res.ComputeP99 = ct[len(ct)/2], ct[min(len(ct)-1, len(ct)*99/100)]
		}
	}
	closeErr := be.Close()
	res.Dropped, res.Gaps, res.Blocks = st.DroppedBlocks, st.Gaps, len(lat)
	res.lateness(src)
	if wall > 0 {
		res.MSps = float64(st.SamplesOut) / wall.Seconds() / 1e6
	}
	res.Latencies = make([]float64, len(lat))
	for i, v := range lat {
		res.Latencies[i] = float64(v) / 1e3
	}
	summarize(&res)
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
	if res.Mismatches > 0 {
		return res, fmt.Errorf("%w: %d of %d blocks, worst relative error %.3g (tolerance %g)",
			ErrMismatch, res.Mismatches, res.Verified, res.MaxRelErr, tol)
	}
	return res, nil
}

// lateness records the source's late blocks and, when there are any, the
// pace it kept. Call it once the stream has ended.
func (r *Result) lateness(src *source) {
	if r.Late = src.late.Load(); r.Late > 0 {
		r.PaceUs = float64(src.pace()) / 1e3
	}
}

// count adds one shadow-check verdict to the result.
func (r *Result) count(vd verdict, e, tol float64) {
	c := checks{verified: r.Verified, unverified: r.Unverified, mismatches: r.Mismatches, maxRelErr: r.MaxRelErr}
	c.add(vd, e, tol)
	r.Verified, r.Unverified, r.Mismatches, r.MaxRelErr = c.verified, c.unverified, c.mismatches, c.maxRelErr
}

func summarize(r *Result) {
	if len(r.Latencies) == 0 {
		return
	}
	s := slices.Clone(r.Latencies)
	slices.Sort(s)
	q := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	r.P50, r.P90, r.P99, r.P999, r.Max = q(0.50), q(0.90), q(0.99), q(0.999), s[len(s)-1]
	var sum float64
	for _, v := range s {
		sum += v
	}
	r.Mean = sum / float64(len(s))
}

type nullSink struct{}

func (nullSink) Write([]float32) error { return nil }

// source generates seeded Gaussian noise, one block per Read, paced by
// spinning to an absolute schedule (sleeping cannot hit 10 µs periods), and
// records where in its noise table each block came from, for the shadow
// check.
//
// In the soak mode it also ends the stream once Duration has passed since
// block Warmup (by the schedule when paced, else by the clock) and marks
// where each interval starts: bounds[k] is the sequence number of interval
// k's first block, stored before that block is delivered, so a consumer
// that holds block s sees every bound <= s.
type source struct {
	r      *rand.Rand
	noise  []float32 // Gaussian values blocks are windows of
	late   atomic.Int64
	period time.Duration
	start  time.Time
	last   time.Time // when the latest block started (paced runs)
	n      int       // blocks delivered
	// recs[seq % len(recs)] locates block seq's values in noise: the
	// check may lag by more than len(recs) blocks when blocks are dropped,
	// and then finds the record rewritten. Blocks are windows of the
	// table rather than copies, so the source's work per block is the
	// write into the ring alone (a 2048-sample complex block's copy was a
	// tenth of what the source could spend at one block per 10 µs).
	recs []record

	soak      bool
	warmup    int
	duration  time.Duration
	interval  time.Duration
	t0        time.Time       // schedule (or clock) time of block warmup
	measuring bool            // block warmup has been delivered
	cur       int             // interval of the latest block
	bounds    []atomic.Uint64 // soak: first seq of each interval; ^0 = not yet
}

// noiseLen is the fewest values of the source's noise table (256 KiB:
// drawn at the start, ~1 ms; blocks are windows of it at random offsets).
const noiseLen = 1 << 16

// record locates one block's input in the source's noise table.
type record struct {
	mu  sync.Mutex
	seq int64 // -1: none yet
	off int   // first value in noise
	n   int   // values
}

// minRecordSlots is the fewest input records the source keeps, and
// maxRecordSlots the most a paced source's recordSpan asks for (a record
// is 32 bytes: 8 MiB).
const (
	minRecordSlots = 1024
	maxRecordSlots = 1 << 18
)

// recordSpan is how long a stall of the consumer a paced source's
// records outlast. While the consumer stalls, the source goes on drawing
// (and recording) blocks that the full ring drops, so a record of a block
// still queued for the check would be overwritten after len(recs) blocks:
// a plain FIR's check re-primes after that (soak mode), but a chain's
// cannot, and the rest of the run went unverified (a 5-minute chain soak
// on an H100 host, 2026-12-07: an 11 ms stall, one block per 20 µs,
// 1024 records).
const recordSpan = time.Second

// recordSlots is how many input records the source keeps (a power of
// two): enough for the check's largest lag without a drop, the pipeline's
// ring plus the checker's, at least minRecordSlots, and when paced,
// recordSpan's blocks up to maxRecordSlots.
func recordSlots(cfg Config) int {
	ring := cfg.Slots
	if ring == 0 {
		ring = 64 // the pipeline's default
	}
	want := ring + checkerSlots
	if cfg.Period > 0 {
		want = max(want, int(min(recordSpan/cfg.Period, maxRecordSlots)))
	}
	n := minRecordSlots
	for n < want {
		n *= 2
	}
	return n
}

func newSource(cfg Config, ch int) *source {
	nrec := recordSlots(cfg)
	if cfg.records > 0 {
		nrec = cfg.records
	}
	s := &source{r: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), period: cfg.Period,
		recs: make([]record, nrec), noise: make([]float32, max(noiseLen, 4*cfg.BlockSize*ch))}
	for i := range s.noise {
		s.noise[i] = float32(s.r.NormFloat64() * 0.25)
	}
	for i := range s.recs {
		s.recs[i].seq = -1
	}
	if cfg.Duration > 0 {
		s.soak, s.warmup, s.duration, s.interval = true, cfg.Warmup, cfg.Duration, cfg.interval()
		s.bounds = make([]atomic.Uint64, cfg.intervals())
		for i := range s.bounds {
			s.bounds[i].Store(^uint64(0))
		}
		s.bounds[0].Store(uint64(cfg.Warmup))
	}
	return s
}

// soakTick places block s.n in the soak at time t; false ends the stream.
func (s *source) soakTick(t time.Time) bool {
	if s.n < s.warmup {
		return true
	}
	if s.n == s.warmup {
		s.t0, s.measuring = t, true
	}
	el := t.Sub(s.t0)
	if el >= s.duration {
		return false
	}
	for k := min(int(el/s.interval), len(s.bounds)-1); s.cur < k; {
		s.cur++
		s.bounds[s.cur].Store(uint64(s.n))
	}
	return true
}

// Read delivers the next block as float32 values: the staged path, where
// the ring's slot is copied into the backend's memory at publish time.
func (s *source) Read(ctx context.Context, dst []float32) (int, error) {
	rec, err := s.next(ctx, len(dst))
	if err != nil {
		return 0, err
	}
	copy(dst, rec)
	s.done()
	return len(dst), nil
}

// ReadWords writes the next block straight into a zero-copy backend's
// mapped slot as tagged words (pipeline.WordSource), with no staging copy
// after the block's timestamp.
func (s *source) ReadWords(ctx context.Context, dst []uint64, tag func() uint32) (int, error) {
	rec, err := s.next(ctx, len(dst))
	if err != nil {
		return 0, err
	}
	tagged.Write(dst, rec, tag()) // asked for once the block is due: a retune in the wait applies to it
	s.done()
	return len(dst), nil
}

// next returns block s.n's n values (done counts the block delivered),
// recorded for the check, once the block's time has come. The values are
// a window of the source's noise table at a random offset: drawing them
// one by one took ~10 ns a value, so 2048 complex samples (41 µs) could not
// keep one block every 10 µs. It is placed before the wait, as floor.cu
// stages its input, so only the write into the device's slot follows it.
// A block that starts more than a period after its time counts as late:
// the schedule slipped. The values are the table's: read them only.
func (s *source) next(ctx context.Context, n int) ([]float32, error) {
	if s.n == 0 {
		s.start = time.Now()
	}
	off := s.r.IntN(len(s.noise) - n + 1) // n <= a block's values: the table holds four blocks at least
	r := &s.recs[s.n%len(s.recs)]
	r.mu.Lock()
	r.seq, r.off, r.n = int64(s.n), off, n
	r.mu.Unlock()
	var due time.Time
	if s.period > 0 {
		due = s.start.Add(time.Duration(s.n) * s.period)
		for spins := 0; time.Now().Before(due); spins++ {
			if spins&1023 == 1023 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		s.last = time.Now()
		if s.last.Sub(due) > s.period {
			s.late.Add(1)
		}
	} else if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.soak {
		if due.IsZero() {
			due = time.Now()
		}
		if !s.soakTick(due) {
			return nil, io.EOF
		}
	}
	return s.noise[off : off+n], nil
}

// pace is the source's mean time from one block's start to the next's in
// a paced run (its period when on schedule); 0 before two blocks or
// unpaced. Read it once the stream has ended.
func (s *source) pace() time.Duration {
	if s.period <= 0 || s.n < 2 {
		return 0
	}
	return s.last.Sub(s.start) / time.Duration(s.n-1)
}

// done counts the block next returned delivered.
func (s *source) done() { s.n++ }

// stagedSource hides the source's ReadWords (Config.StagedInput).
type stagedSource struct{ s *source }

// Read is the source's.
func (s stagedSource) Read(ctx context.Context, dst []float32) (int, error) {
	return s.s.Read(ctx, dst)
}

// input is what the pipeline reads: src, or src without ReadWords.
func input(cfg Config, src *source) pipeline.Source {
	if cfg.StagedInput {
		return stagedSource{src}
	}
	return src
}

// recorded returns the input of block seq if its record is still held
// (the check has not fallen len(recs) blocks behind): values of the noise
// table, to be read only.
func (s *source) recorded(seq uint64) ([]float32, bool) {
	r := &s.recs[seq%uint64(len(s.recs))]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seq != int64(seq) {
		return nil, false
	}
	return s.noise[r.off : r.off+r.n], true
}
