// Package probe measures end-to-end block latency through pipeline
// backends: a paced synthetic source writes blocks into each backend's ring,
// and every filtered block is timed (capture timestamp at the ring write to
// the moment the host sees the output) and checked against a CPU shadow FIR.
// Several paths are measured in one run, on the same seeded input, so their
// figures compare.
package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
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
}

func (c Config) validate() error {
	switch {
	case c.BlockSize <= 0:
		return fmt.Errorf("probe: block size must be > 0, got %d", c.BlockSize)
	case len(c.Taps) == 0:
		return errors.New("probe: no taps")
	case c.Blocks <= 0:
		return fmt.Errorf("probe: blocks must be > 0, got %d", c.Blocks)
	case c.Warmup < 0:
		return fmt.Errorf("probe: warmup must be >= 0, got %d", c.Warmup)
	case c.Period < 0:
		return fmt.Errorf("probe: period must be >= 0, got %v", c.Period)
	}
	return nil
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
	PeriodUs   float64 `json:"period_us"`
	Blocks     int     `json:"blocks"`
	Dropped    uint64  `json:"dropped_blocks"`
	Gaps       uint64  `json:"gaps"`
	Verified   int     `json:"verified_blocks"`
	Unverified int     `json:"unverified_blocks"`
	Mismatches int     `json:"mismatches"`
	MaxRelErr  float64 `json:"max_rel_err"`
	P50        float64 `json:"p50_us"`
	P90        float64 `json:"p90_us"`
	P99        float64 `json:"p99_us"`
	P999       float64 `json:"p999_us"`
	Max        float64 `json:"max_us"`
	Mean       float64 `json:"mean_us"`
	MSps       float64 `json:"msps"`
	// GPU-side time from the last input word arriving to the output being
	// written (zero-copy with timing), µs.
	ComputeP50 float64   `json:"gpu_compute_p50_us,omitempty"`
	ComputeP99 float64   `json:"gpu_compute_p99_us,omitempty"`
	Latencies  []float64 `json:"-"`
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
	ch := 1
	if cfg.Complex {
		ch = 2
	}
	tol := cfg.Tolerance
	if tol == 0 {
		tol = 1e-5
	}
	res := Result{Path: p.Name, BlockSize: cfg.BlockSize, Taps: len(cfg.Taps), Complex: cfg.Complex,
		PeriodUs: float64(cfg.Period) / 1e3}
	be, err := p.New()
	if err != nil {
		return res, err
	}
	total := cfg.Warmup + cfg.Blocks
	src := newSource(cfg, ch, total)
	shadow, err := filter.NewFIR(cfg.Taps, cfg.Complex, cfg.BlockSize)
	if err != nil {
		_ = be.Close()
		return res, err
	}
	lat := make([]int64, 0, cfg.Blocks)
	ref := make([]float32, cfg.BlockSize*ch)
	broken := false
	onBlock := func(o pipeline.Output, seen int64) {
		if o.Seq >= uint64(cfg.Warmup) {
			lat = append(lat, seen-o.Timestamp)
		}
		// The backend filters the blocks it receives as one stream (a block
		// dropped at capture never reaches it), so the shadow FIR does too.
		if !broken {
			in, ok := src.recorded(o.Seq)
			if !ok || len(in) != len(o.Samples) || shadow.Process(ref[:len(in)], in) != nil {
				broken = true // the copy was overwritten: history lost
			}
		}
		if broken {
			res.Unverified++
			return
		}
		res.Verified++
		e := relErr(o.Samples, ref[:len(o.Samples)])
		if e > res.MaxRelErr || math.IsNaN(e) {
			res.MaxRelErr = e
		}
		if !(e <= tol) {
			res.Mismatches++
		}
	}
	t0 := time.Now()
	st, runErr := pipeline.Run(ctx, src, be, nullSink{}, pipeline.Config{
		BlockSize: cfg.BlockSize, Complex: cfg.Complex, Slots: cfg.Slots, Policy: pipeline.PolicyDrop,
		MaxSamples: int64(total * cfg.BlockSize),
	}, pipeline.Options{OnBlock: onBlock})
	wall := time.Since(t0)
	res.Backend = be.Name()
	if t, ok := be.(interface{ ComputeTimes() []float64 }); ok {
		if ct := t.ComputeTimes(); len(ct) > 0 {
			slices.Sort(ct)
			res.ComputeP50, res.ComputeP99 = ct[len(ct)/2], ct[min(len(ct)-1, len(ct)*99/100)]
		}
	}
	closeErr := be.Close()
	res.Dropped, res.Gaps, res.Blocks = st.DroppedBlocks, st.Gaps, len(lat)
	if wall > 0 {
		res.MSps = float64(st.SamplesOut) / wall.Seconds() / 1e6
	}
	res.Latencies = make([]float64, len(lat))
	for i, v := range lat {
		res.Latencies[i] = float64(v) / 1e3
	}
	summarize(&res)
	if runErr != nil {
		return res, runErr
	}
	if closeErr != nil {
		return res, closeErr
	}
	if res.Mismatches > 0 {
		return res, fmt.Errorf("%w: %d of %d blocks, worst relative error %.3g (tolerance %g)",
			ErrMismatch, res.Mismatches, res.Verified, res.MaxRelErr, tol)
	}
	return res, nil
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

// relErr is the largest |got-want| relative to want's RMS (1 if want is 0).
func relErr(got, want []float32) float64 {
	var rms float64
	for _, v := range want {
		rms += float64(v) * float64(v)
	}
	rms = math.Sqrt(rms / float64(max(1, len(want))))
	if rms == 0 {
		rms = 1
	}
	var worst float64
	for i := range want {
		e := math.Abs(float64(got[i])-float64(want[i])) / rms
		if e > worst || math.IsNaN(e) {
			worst = e
		}
	}
	return worst
}

type nullSink struct{}

func (nullSink) Write([]float32) error { return nil }

// source generates seeded Gaussian noise, one block per Read, paced by
// spinning to an absolute schedule (sleeping cannot hit 10 µs periods), and
// keeps a copy of each block for the shadow check.
type source struct {
	r      *rand.Rand
	period time.Duration
	start  time.Time
	n      int // blocks delivered
	copies [][]float32
	seqs   []atomic.Int64 // seq recorded in each copy slot, -1 = none
}

const recordSlots = 1024

func newSource(cfg Config, ch, total int) *source {
	s := &source{r: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), period: cfg.Period,
		copies: make([][]float32, recordSlots), seqs: make([]atomic.Int64, recordSlots)}
	for i := range s.copies {
		s.copies[i] = make([]float32, cfg.BlockSize*ch)
		s.seqs[i].Store(-1)
	}
	return s
}

func (s *source) Read(ctx context.Context, dst []float32) (int, error) {
	if s.n == 0 {
		s.start = time.Now()
	}
	if s.period > 0 {
		due := s.start.Add(time.Duration(s.n) * s.period)
		for spins := 0; time.Now().Before(due); spins++ {
			if spins&1023 == 1023 && ctx.Err() != nil {
				return 0, ctx.Err()
			}
		}
	} else if err := ctx.Err(); err != nil {
		return 0, err
	}
	for i := range dst {
		dst[i] = float32(s.r.NormFloat64() * 0.25)
	}
	slot := s.n % recordSlots
	s.seqs[slot].Store(-1)
	s.copies[slot] = s.copies[slot][:len(dst)]
	copy(s.copies[slot], dst)
	s.seqs[slot].Store(int64(s.n))
	s.n++
	return len(dst), nil
}

// recorded returns the input of block seq if its copy is still held.
func (s *source) recorded(seq uint64) ([]float32, bool) {
	slot := seq % recordSlots
	if s.seqs[slot].Load() != int64(seq) {
		return nil, false
	}
	return s.copies[slot], true
}
