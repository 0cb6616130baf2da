package cpu

import (
	"fmt"
	"runtime"

	"github.com/sigproc/sigproc/internal/par"
	"github.com/sigproc/sigproc/stage"
)

// segmentGrain is the fewest input samples worth a goroutine: below it
// handing a segment over costs more than it saves.
const segmentGrain = 8192

// defaultWorkers is the goroutines a chain of one channel spreads a block
// over: GOMAXPROCS, which the runtime sets from the CPUs of the process's
// affinity set and its cgroup's CPU limit, and which the user may lower.
func defaultWorkers() int { return min(runtime.GOMAXPROCS(0), par.MaxWorkers) }

// splitter runs each stage of a one-channel chain on segments of the
// block at once (stage.Splitter): segment 0 by the stage's running
// kernel, segment j > 0 by copy j−1 of it, positioned by Seek with the
// block's input before the segment. The outputs land where one call on
// the whole block puts them, and the running kernel is then moved to the
// block's end, so the result is bit-identical to one core. A stage whose
// kind is no Splitter, or a block too short to cut, runs whole.
type splitter struct {
	pool   *par.Pool
	copies [][]stage.Processor // copies[i]: stage i's kernel copies; nil for a kind run whole
	pos    []int64             // each stage's input samples so far
	cuts   int64               // blocks of a stage cut into segments (tests)

	// The current stage's call, set by run before pool.Do; runPart made
	// once so that Do allocates nothing.
	procs         []stage.Processor // the segments' kernels
	lo, off, want []int             // per segment: input start, output start and values
	in, out       []float32
	inV           int
	runPart       func(lo, hi int) error
}

// newSplitter returns a splitter for c (one channel) that cuts blocks into
// at most workers segments, or nil for one worker.
func newSplitter(c stage.Chain, geo []stage.Input, workers int) (*splitter, error) {
	if workers <= 1 {
		return nil, nil
	}
	// The calling goroutine runs a segment too: the pool has one fewer.
	sp := &splitter{pool: par.NewPool(workers - 1), pos: make([]int64, len(c.Stages)),
		procs: make([]stage.Processor, workers), lo: make([]int, 0, workers+1),
		off: make([]int, workers), want: make([]int, workers)}
	sp.runPart = sp.part
	for i, s := range c.Stages {
		cp, err := newCopies(s, geo[i], workers-1)
		if err != nil {
			sp.pool.Close()
			return nil, fmt.Errorf("stage %d (%s): %w", i, s.Kind, err)
		}
		sp.copies = append(sp.copies, cp)
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
	def, ok := s.Def().(stage.Splitter)
	if !ok || sp.copies[i] == nil {
		return run.Process(out, in)
	}
	hist := def.History(s, run)
	sp.lo = def.Cut(s, run, n, len(sp.copies[i])+1, max(segmentGrain, hist), sp.lo[:0])
	k := len(sp.lo)
	if k <= 1 {
		return run.Process(out, in)
	}
	sp.lo = append(sp.lo, n)
	sp.cuts++
	base := s.Count(pos)
	for j := range k {
		lo, hi := sp.lo[j], sp.lo[j+1]
		sp.off[j] = int(s.Count(pos+int64(lo))-base) * outV
		sp.want[j] = int(s.Count(pos+int64(hi))-s.Count(pos+int64(lo))) * outV
		if j == 0 {
			sp.procs[j] = run
			continue
		}
		p := sp.copies[i][j-1]
		def.Seek(p, run, in[(lo-hist)*inV:lo*inV], pos+int64(lo))
		sp.procs[j] = p
	}
	total := sp.off[k-1] + sp.want[k-1]
	if len(out) < total {
		return 0, fmt.Errorf("cpu: dst holds %d values, need %d", len(out), total)
	}
	sp.in, sp.out, sp.inV = in, out, inV
	err := sp.pool.Share(k, sp.runPart)
	sp.in, sp.out = nil, nil
	clear(sp.procs)
	if err != nil {
		return 0, err
	}
	// The running kernel processed segment 0 only: move it to the end.
	def.Seek(run, run, in[(n-hist)*inV:], pos+int64(n))
	return total, nil
}

// part runs segments [lo, hi).
func (sp *splitter) part(lo, hi int) error {
	for j := lo; j < hi; j++ {
		a, b := sp.lo[j], sp.lo[j+1]
		got, err := sp.procs[j].Process(sp.out[sp.off[j]:], sp.in[a*sp.inV:b*sp.inV])
		if err != nil {
			return fmt.Errorf("segment %d: %w", j, err)
		}
		if got != sp.want[j] {
			return fmt.Errorf("cpu: segment %d output %d values, want %d", j, got, sp.want[j])
		}
	}
	return nil
}

func (sp *splitter) reset() {
	if sp != nil {
		clear(sp.pos)
	}
}

func (sp *splitter) close() {
	if sp != nil {
		sp.pool.Close()
	}
}

// copiesOf returns how many copies of stage i's kernel a retune builds
// (none for an index out of range, which prepare refuses).
func (sp *splitter) copiesOf(i int) int {
	if sp == nil || i < 0 || i >= len(sp.copies) {
		return 0
	}
	return len(sp.copies[i])
}
