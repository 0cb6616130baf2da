package cpu

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/internal/par"
	"github.com/sigproc/sigproc/stage"
)

// segmentGrain is the fewest input samples worth a goroutine: below it
// handing a segment over costs more than it saves. It was 8192, and is
// below it so that a 64 Ki block still makes 8 segments for 2 goroutines
// where the fft method's transforms (896 outputs at 129 complex taps)
// put the cuts a little before 8 Ki: at 8192 it made 7, and one
// goroutine did 4 of them. It governs every kind that splits; only the
// fft FIR was measured at 6144 (docs/THROUGHPUT.md, "Even cuts").
const segmentGrain = 6144

// defaultWorkers is the goroutines a chain of one channel spreads a block
// over: GOMAXPROCS, which the runtime sets from the CPUs of the process's
// affinity set and its cgroup's CPU limit, and which the user may lower.
func defaultWorkers() int { return min(runtime.GOMAXPROCS(0), par.MaxWorkers) }

// handOver is how long the pool's goroutines look for the next block's
// segments before they park (par.Pool.Spin): waking a parked goroutine
// took 20–45 µs on a 2-core VM, and between two blocks the caller also
// hands the output on and takes the next block, which the source may
// still be reading. On a 2-core VM, 2 cores against 1 (bench/cores_cpu.sh,
// side by side) gave a median 1.49–1.65× with 200 µs against 1.30–1.58×
// with 50 µs, better in each of six pairs of 16 rounds; 100 and 500 µs
// fell between.
const handOver = 200 * time.Microsecond

// segmentsPerWorker is how many segments a block is cut into for each of
// workers goroutines: they take them as they finish, so that a core
// shared with the source (or anything else) does fewer of them. The last
// segment to finish holds every other core idle for up to its length, a
// cost that grows with the cores, while each segment's own cost (its
// Seek, its hand-over) does not: on a 16-core host 8 a worker ran 4, 8
// and 16 cores 10, 5 and 4 % faster than 4 did at the median of 8
// alternating rounds, while 8 ran 2 cores of a 2-core VM 7 % slower
// (2026-12-06).
func segmentsPerWorker(workers int) int {
	if workers < 4 {
		return 4
	}
	return 8
}

// SegmentFrames is the input, in frames, a segment of a cut block is
// sized for by BlockFrames. Shorter segments cost hand-offs, and a
// longer block a wait for its last segment and outputs that leave the
// cores' caches. On two H100 hosts (2026-12-07, a 16 GiB cf32 file
// through 129 taps, 3 and 4 rounds), 32 Ki segments ran 4 / 8 / 16 cores
// at 1.04–1.15 / 1.06–1.22 / 1.12–1.23 times the 16 Ki before, and 64 Ki
// at 16 cores slower than 32 Ki; on the 2-core VM 64 Ki ran 2 cores 6 %
// slower at the median of 16 rounds (docs/THROUGHPUT.md, "Segments of
// 32 Ki").
const SegmentFrames = 1 << 15

// BlockFrames returns the block, in frames, that a chain of one channel
// on several cores cuts into segments of about SegmentFrames: the power
// of two nearest (by ratio) to that many segments for min(cores,
// par.MaxWorkers) goroutines, so segments stay within 0.71–1.41 times
// SegmentFrames. One core's block is the caller's choice (it is cut only
// for the cache: soloSegments).
func BlockFrames(cores int) int {
	w := max(1, min(cores, par.MaxWorkers))
	want := w * segmentsPerWorker(w) * SegmentFrames
	n := 1 << bits.Len(uint(want-1)) // the least power of two ≥ want
	// n/2 < want ≤ n: n/2 is nearer when want/(n/2) < n/want.
	if 2*want*want < n*n {
		n /= 2
	}
	return n
}

// splitter runs each stage of a one-channel chain on segments of the
// block at once (stage.Splitter): the calling goroutine runs segment 0
// with the stage's running kernel, then every goroutine (the caller and
// the pool's) takes the next segment left and runs it with a copy of the
// kernel of its own, positioned by Seek with the block's input before
// the segment. The outputs land where one call on the whole block puts
// them, and the running kernel is then moved to the block's end, so the
// result is bit-identical to one core. A stage whose kind is no
// Splitter, or a block too short to cut, runs whole. On one goroutine
// (no pool) it cuts only stage 0's views, for the cache (soloSegments).
type splitter struct {
	pool    *par.Pool // nil on one goroutine
	workers int
	copies  [][]stage.Processor // copies[i][g]: goroutine g's copy of stage i's kernel; nil for a stage run whole
	// ncopies[i] is len(copies[i]), fixed when built: a retune being
	// prepared reads it while the consumer swaps copies[i] (Apply).
	ncopies []int
	pos     []int64 // each stage's input samples so far
	cuts    int64   // blocks of a stage cut into segments (tests)

	// The current stage's call, set by process before pool.Share;
	// runPart made once so that Share allocates nothing.
	def     stage.Splitter
	run     stage.Processor
	cp      []stage.Processor
	lo      []int // segments' input starts, then the block's end
	off     []int // segments' output starts, in values
	want    []int // segments' output values
	in, out []float32
	inV     int
	hist    int
	at      int64 // the stage's input index of the block's start
	next    atomic.Int32
	runPart func(lo, hi int) error
	src     mapped // the source's memory stage 0's input may lie in
	// check counts the NaN and ±Inf values of stage 0's input, a view of
	// the source's memory, and returns the error of a truncated file, or
	// is nil: set for each block (Chain.processMapped); chk is it for the
	// current call.
	check, chk func([]float32) error
}

// soloSegments is the fewest segments of SegmentFrames a block must hold
// for one goroutine to cut it. On one core the cut is for the cache, not
// for the cores: a block of a view is checked (its NaN scan, which reads
// it from memory) and filtered a segment at a time, so the filter finds
// each segment in the cache where the check left it. On the 2-core VM,
// one core, a 1 GiB cf32 file through 129 taps in 2 Mi blocks ran 18–26 %
// faster cut (docs/THROUGHPUT.md, "One core, long blocks"); 256 Ki blocks
// ran as fast as 64 Ki whole.
const soloSegments = 8

// splitMost returns the most segments newChain's splitter cuts a block of
// maxBlock frames into on workers goroutines: segmentsPerWorker a
// goroutine, or, on one, maxBlock/SegmentFrames (a full block then makes
// segments of SegmentFrames, a shorter one shorter segments, down to
// segmentGrain), none below soloSegments.
func splitMost(workers, maxBlock int) int {
	if workers > 1 {
		return segmentsPerWorker(workers) * workers
	}
	if most := maxBlock / SegmentFrames; most >= soloSegments {
		return most
	}
	return 0
}

// newSplitter returns a splitter for c (one channel) that cuts blocks into
// at most most segments for workers goroutines, or nil for fewer than 2
// segments. One goroutine cuts only stage 0's views (sp.check set): the
// others gain nothing from it.
func newSplitter(c stage.Chain, geo []stage.Input, workers, most int) (*splitter, error) {
	if most < 2 {
		return nil, nil
	}
	workers = max(workers, 1)
	sp := &splitter{workers: workers, pos: make([]int64, len(c.Stages)),
		lo: make([]int, 0, most+1), off: make([]int, most), want: make([]int, most)}
	if workers > 1 {
		// The calling goroutine runs segments too: the pool has one fewer.
		sp.pool = par.NewPool(workers - 1)
		sp.pool.Spin(handOver)
	}
	// Stage 0's segments may read the source's memory (mapped); the
	// others' read the chain's buffers, where the guard costs nothing.
	sp.runPart = func(lo, hi int) error { return sp.src.guard(sp.part, lo, hi) }
	for i, s := range c.Stages {
		n := workers
		if sp.pool == nil && i > 0 {
			n = 0 // one goroutine cuts stage 0 only
		}
		cp, err := newCopies(s, geo[i], n)
		if err != nil {
			sp.close()
			return nil, fmt.Errorf("stage %d (%s): %w", i, s.Kind, err)
		}
		sp.copies = append(sp.copies, cp)
		sp.ncopies = append(sp.ncopies, len(cp))
	}
	return sp, nil
}

// newCopies builds n copies of s's kernel for g, or none when s's kind
// runs whole.
func newCopies(s stage.Stage, g stage.Input, n int) ([]stage.Processor, error) {
	if _, ok := s.Def().(stage.Splitter); !ok || n <= 0 {
		return nil, nil
	}
	cp := make([]stage.Processor, n)
	for k := range cp {
		p, err := s.Def().NewProcessor(s, g)
		if err != nil {
			return nil, err
		}
		cp[k] = p
	}
	return cp, nil
}

// process runs stage i's kernel run on in (whole samples of inV values)
// into out, cut into segments where the kind allows, and returns the
// values written.
func (sp *splitter) process(i int, s stage.Stage, run stage.Processor, out, in []float32, inV, outV int) (int, error) {
	n := len(in) / inV
	pos := sp.pos[i]
	sp.pos[i] += int64(n)
	chk := sp.check
	if i > 0 {
		chk = nil
	}
	def, ok := s.Def().(stage.Splitter)
	if !ok || sp.copies[i] == nil || (sp.pool == nil && chk == nil) {
		return whole(run, out, in, chk)
	}
	hist := def.History(s, run)
	sp.lo = def.Cut(s, run, n, cap(sp.lo)-1, max(segmentGrain, hist), sp.lo[:0])
	k := len(sp.lo)
	if k <= 1 {
		return whole(run, out, in, chk)
	}
	sp.lo = append(sp.lo, n)
	sp.cuts++
	base := s.Count(pos)
	for j := range k {
		lo, hi := sp.lo[j], sp.lo[j+1]
		sp.off[j] = int(s.Count(pos+int64(lo))-base) * outV
		sp.want[j] = int(s.Count(pos+int64(hi))-s.Count(pos+int64(lo))) * outV
	}
	total := sp.off[k-1] + sp.want[k-1]
	if len(out) < total {
		return 0, fmt.Errorf("cpu: dst holds %d values, need %d", len(out), total)
	}
	sp.def, sp.run, sp.cp, sp.chk = def, run, sp.copies[i], chk
	sp.in, sp.out, sp.inV, sp.hist, sp.at = in, out, inV, hist, pos
	sp.next.Store(1)
	var err error
	if sp.pool == nil {
		err = sp.runPart(0, 1)
	} else {
		err = sp.pool.Share(min(sp.workers, k), sp.runPart)
	}
	sp.def, sp.run, sp.cp, sp.chk, sp.in, sp.out = nil, nil, nil, nil, nil, nil
	if err != nil {
		return 0, err
	}
	// The running kernel processed segment 0 only: move it to the end.
	def.Seek(run, run, in[(n-hist)*inV:], pos+int64(n))
	return total, nil
}

// part is goroutine g's share (g = lo; hi = g+1): segment 0 for the
// caller, then the segments left, each with the goroutine's copy.
func (sp *splitter) part(g, _ int) error {
	if g == 0 {
		if err := sp.checkSegment(0); err != nil {
			return err
		}
		if err := sp.segment(0, sp.run); err != nil {
			return err
		}
	}
	p := sp.cp[g]
	for {
		j := int(sp.next.Add(1) - 1)
		if j >= len(sp.lo)-1 {
			return nil
		}
		if err := sp.checkSegment(j); err != nil {
			return err
		}
		a := sp.lo[j]
		sp.def.Seek(p, sp.run, sp.in[(a-sp.hist)*sp.inV:a*sp.inV], sp.at+int64(a))
		if err := sp.segment(j, p); err != nil {
			return err
		}
	}
}

// whole runs a stage's kernel p on the whole block, checking its input
// first with chk unless nil.
func whole(p stage.Processor, out, in []float32, chk func([]float32) error) (int, error) {
	if chk != nil {
		if err := chk(in); err != nil {
			return 0, err
		}
	}
	return p.Process(out, in)
}

// checkSegment checks segment j's input (chk), before anything else on
// this goroutine reads it or the history before it: a file truncated
// since its view was taken then faults in the source's check, which
// recovers every such fault (the guard's recovery needs the fault's
// address), and the check brings the segment into this core's cache,
// where the kernel then reads it.
func (sp *splitter) checkSegment(j int) error {
	if sp.chk == nil {
		return nil
	}
	return sp.chk(sp.in[sp.lo[j]*sp.inV : sp.lo[j+1]*sp.inV])
}

// segment runs segment j with kernel p.
func (sp *splitter) segment(j int, p stage.Processor) error {
	a, b := sp.lo[j], sp.lo[j+1]
	got, err := p.Process(sp.out[sp.off[j]:], sp.in[a*sp.inV:b*sp.inV])
	if err != nil {
		return fmt.Errorf("segment %d: %w", j, err)
	}
	if got != sp.want[j] {
		return fmt.Errorf("cpu: segment %d output %d values, want %d", j, got, sp.want[j])
	}
	return nil
}

func (sp *splitter) reset() {
	if sp != nil {
		clear(sp.pos)
	}
}

func (sp *splitter) close() {
	if sp != nil && sp.pool != nil {
		sp.pool.Close()
	}
}

// copiesOf returns how many copies of stage i's kernel a retune builds
// (none for an index out of range, which prepare refuses).
func (sp *splitter) copiesOf(i int) int {
	if sp == nil || i < 0 || i >= len(sp.ncopies) {
		return 0
	}
	return sp.ncopies[i]
}
