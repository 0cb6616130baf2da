package cpu

import (
	"fmt"

	"github.com/sigproc/sigproc/stage"
)

// MaxRetuneTaps is the most taps a fir stage can be retuned to while
// running, unless it started with more: each stage whose kind resumes
// from its input history (stage.Resumer; a fir) keeps that much of its
// recent input, so that new taps see the same history as the old ones
// (8191 samples, 64 KiB for a complex stream).
const MaxRetuneTaps = 8192

// newTail returns the input history the CPU backend keeps for retuning
// a stage whose kind resumes from it (a fir): enough for MaxRetuneTaps
// (or the stage's own taps) plus a decimator's padding; nil for the
// others.
func newTail(s stage.Stage, g stage.Input) *tail {
	if r, ok := s.Def().(stage.Resumer); !ok || !r.KeepsHistory() {
		return nil
	}
	n := max(len(s.Taps), MaxRetuneTaps) - 1 + 8
	ch := frameValues(g)
	return &tail{ch: ch, buf: make([]float32, n*ch), lin: make([]float32, n*ch)}
}

// tail is a circular buffer of a stream's most recent samples.
type tail struct {
	ch   int
	buf  []float32 // circular, len = capacity × ch
	lin  []float32 // linear copy for SetHistory
	pos  int       // next write, in values
	seen int64     // samples pushed, up to the capacity
}

func (t *tail) push(x []float32) {
	if len(x) >= len(t.buf) {
		copy(t.buf, x[len(x)-len(t.buf):])
		t.pos = 0
	} else {
		n := copy(t.buf[t.pos:], x)
		copy(t.buf, x[n:])
		t.pos = (t.pos + len(x)) % len(t.buf)
	}
	t.seen = min(t.seen+int64(len(x)/t.ch), int64(len(t.buf)/t.ch))
}

// last returns the samples pushed so far, oldest first (at most the
// capacity), in t.lin.
func (t *tail) last() []float32 {
	n := int(t.seen) * t.ch
	out := t.lin[len(t.lin)-n:]
	// The newest n values end at pos.
	start := (t.pos - n + len(t.buf)) % len(t.buf)
	k := copy(out, t.buf[start:min(start+n, len(t.buf))])
	copy(out[k:], t.buf[:n-k])
	return out
}

func (t *tail) reset() { t.pos, t.seen = 0, 0 }

// maxTaps is the most taps the tail serves (none without a tail).
func (t *tail) maxTaps() int {
	if t == nil {
		return 0
	}
	return len(t.buf)/t.ch - 8 + 1
}

// Prepared is a retune checked and built off the data path, ready for
// Apply between two blocks.
type Prepared struct {
	index  int
	stage  stage.Stage
	proc   stage.Processor
	copies []stage.Processor // its copies for the segments of a block (split.go)
	resume stage.Resumer     // the stage's kind, which hands the stream over
	desc   stage.Chain       // the chain once applied, built here so Apply allocates nothing
	per    []*Prepared       // a chain of several channels: one kernel per channel's chain
	rest   *Prepared         // a stage the chain's rest runs (after a Fanout): its retune there
}

// Prepare checks s as new parameters for stage i (stage.CheckRetune; a
// kind that is no stage.Resumer, such as resample, cannot be retuned on
// the CPU yet, and new taps are bounded by the history the stage keeps)
// and builds its kernel. It allocates; Apply does not. It does not touch
// the running chain, so it may run beside Process as long as the chain's
// description is not being changed.
func (c *Chain) Prepare(i int, s stage.Stage) (*Prepared, error) {
	return c.prepareOn(c.desc, i, s)
}

// prepareOn is Prepare against desc, the chain as it will be when the
// retune lands (pending retunes included). A chain of several channels
// gets the same parameters in every channel's chain, each with a kernel
// of its own, applied together.
func (c *Chain) prepareOn(desc stage.Chain, i int, s stage.Stage) (*Prepared, error) {
	if c.rest != nil && i >= c.restAt {
		// Checked against the whole chain first, so that errors name the
		// stage by its index there.
		if _, err := stage.CheckRetune(desc, i, s); err != nil {
			return nil, err
		}
		rp, err := c.rest.prepareOn(restOf(desc, c.restAt), i-c.restAt, s)
		if err != nil {
			return nil, err
		}
		return &Prepared{index: i, stage: rp.stage, desc: desc.With(i, rp.stage), rest: rp}, nil
	}
	if c.multi == nil {
		return prepare(desc, c.geo, c.tails, i, s, c.split.copiesOf(i), c.base)
	}
	one := desc
	one.Channels = 1
	ps := make([]*Prepared, len(c.multi.per))
	for k, pc := range c.multi.per {
		p, err := prepare(one, pc.geo, pc.tails, i, s, 0, c.base)
		if err != nil {
			return nil, err
		}
		ps[k] = p
	}
	return &Prepared{index: i, stage: ps[0].stage, desc: desc.With(i, ps[0].stage), per: ps}, nil
}

// prepare is Prepare against desc, the chain the retune follows; geo and
// tails never change once the chain is built. Messages number the stages
// from base (a chain's rest, after a Fanout stage, is part of a longer
// one).
func prepare(desc stage.Chain, geo []stage.Input, tails []*tail, i int, s stage.Stage, copies, base int) (*Prepared, error) {
	s, err := stage.CheckRetune(desc, i, s)
	if err != nil {
		return nil, err
	}
	def := s.Def()
	r, ok := def.(stage.Resumer)
	if !ok {
		return nil, fmt.Errorf("%w: %s stages cannot be retuned on the cpu backend yet (stage %d)", stage.ErrRetuneUnsupported, s.Kind, base+i)
	}
	if t := tails[i]; r.KeepsHistory() && (t == nil || len(s.Taps) > t.maxTaps()) {
		return nil, &stage.StageError{Index: base + i, Field: "taps", Msg: fmt.Sprintf("%d taps: a running %s stage keeps the history for at most %d", len(s.Taps), s.Kind, t.maxTaps())}
	}
	p, err := def.NewProcessor(s, geo[i])
	if err != nil {
		return nil, fmt.Errorf("stage %d (%s): %w", base+i, s.Kind, err)
	}
	cp, err := newCopies(s, geo[i], copies)
	if err != nil {
		return nil, fmt.Errorf("stage %d (%s): %w", base+i, s.Kind, err)
	}
	s.Taps = append([]float32(nil), s.Taps...)
	return &Prepared{index: i, stage: s, proc: p, copies: cp, resume: r, desc: desc.With(i, s)}, nil
}

// Apply installs p between two blocks: the next block's first sample is
// the first processed with the new parameters. It returns the retune with
// its indices. Retunes are applied once each, in the order they were
// prepared; Apply allocates nothing.
func (c *Chain) Apply(p *Prepared) stage.Retune {
	if p.rest != nil {
		c.rest.Apply(p.rest)
		c.desc = p.desc
		return stage.Retune{Index: p.index, Stage: p.stage, ChainAt: c.seen, At: c.desc.InputAt(p.index, c.seen)}
	}
	if p.per != nil {
		var r stage.Retune // the same in every channel: they have seen the same frames
		for k, pp := range p.per {
			r = c.multi.per[k].Apply(pp)
		}
		c.desc = p.desc
		return r
	}
	i := p.index
	r := stage.Retune{Index: i, Stage: p.stage, ChainAt: c.seen, At: c.desc.InputAt(i, c.seen)}
	var hist []float32
	if t := c.tails[i]; t != nil {
		hist = t.last()
	}
	p.resume.Resume(p.proc, c.procs[i], hist, r.At)
	c.procs[i] = p.proc
	if c.split != nil {
		c.split.copies[i] = p.copies
	}
	c.desc = p.desc
	return r
}
