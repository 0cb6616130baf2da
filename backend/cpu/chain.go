package cpu

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/sigproc/sigproc/stage"
)

// Chain runs a stage.Chain on the CPU: each stage's kernel in order, each
// writing into a buffer of its own (the last into the caller's dst), with
// the output lengths stage.Chain defines. Process allocates nothing. A
// Chain is not safe for concurrent use.
type Chain struct {
	desc  stage.Chain
	max   int
	procs []stage.Processor     // each stage's kernel, built by its kind (stage.Def)
	bufs  [][]float32           // bufs[i]: stage i's output, for all but the last stage
	kinds []string              // for error messages
	multi *perChannel           // set for more than one channel: a Chain per channel
	split *splitter             // one channel: blocks cut into segments on several cores, or a long view's on one
	src   mapped                // the source's memory its blocks are views of, if any
	check func([]float32) error // counts a view's NaN and ±Inf values, or fails on a truncated file (checkViews)

	// The stages after a Fanout stage run on each channel apart
	// (stage.Chain.FanEnd): rest runs them from stage restAt on, on the
	// frames the stages before it leave in mid. base is the index of the
	// chain's first stage in the whole chain, for messages and watch
	// points.
	rest      *Chain
	restAt    int
	mid       []float32
	base      int
	restWatch func(point int, samples []float32)

	// Retuning (retune.go): each stage's input geometry, the recent input
	// of every stage whose kind resumes from it, and the chain inputs
	// processed so far.
	geo   []stage.Input
	outV  []int   // the float32 values of a frame of each stage's output
	outN  []int   // the float32 values each stage output in the last call
	tails []*tail // nil but for stages that keep their input history
	seen  int64
	watch func(point int, samples []float32)
}

// NewChain validates c and builds its kernels for blocks of at most
// maxBlock input samples (IQ pairs when c.Complex; frames of every channel
// when c.Channels > 1, each channel run by a chain of its own). It runs on
// GOMAXPROCS cores: the channels at once, or one channel's blocks cut
// into segments (split.go). Close releases the goroutines.
func NewChain(c stage.Chain, maxBlock int) (*Chain, error) {
	return newChain(c, maxBlock, defaultWorkers())
}

// newChain is NewChain on at most workers goroutines.
func newChain(c stage.Chain, maxBlock, workers int) (*Chain, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if maxBlock <= 0 {
		return nil, fmt.Errorf("cpu: max block %d must be > 0", maxBlock)
	}
	if f := c.FanEnd(); f > 0 && f < len(c.Stages) {
		return newFanChain(c, f, maxBlock, workers)
	}
	ch := &Chain{desc: c, max: maxBlock}
	if c.ChannelCount() > 1 && !c.FansFirst() {
		m, err := newChannels(c, maxBlock)
		if err != nil {
			return nil, err
		}
		ch.multi = m
		return ch, nil
	}
	rate, cplx, n, chans := c.SampleRate, c.Complex, maxBlock, c.ChannelCount()
	for i, s := range c.Stages {
		g := stage.Input{Rate: rate, Complex: cplx, MaxIn: n, Channels: chans}
		p, err := s.Def().NewProcessor(s, g)
		if err != nil {
			return nil, fmt.Errorf("stage %d (%s): %w", i, s.Kind, err)
		}
		rate, cplx, n, chans = s.Rate(rate), s.OutComplex(cplx), s.MaxOut(n), s.OutChannels(chans)
		if b := int64(n) * int64(chans) * int64(channels(cplx)) * 4; b > maxStageBytes {
			return nil, fmt.Errorf("stage %d (%s): its output for a block of %d samples is %d MiB (%d channels); give a smaller block_size",
				i, s.Kind, maxBlock, b>>20, chans)
		}
		ch.push(s, g, p)
		if i < len(c.Stages)-1 {
			ch.bufs = append(ch.bufs, make([]float32, n*chans*channels(cplx)))
		}
	}
	sp, err := newSplitter(c, ch.geo, workers, splitMost(workers, maxBlock))
	if err != nil {
		return nil, err
	}
	ch.split = sp
	return ch, nil
}

// push appends stage s, which p runs on input g, to the chain's stages;
// the buffer between it and the next is the caller's.
func (ch *Chain) push(s stage.Stage, g stage.Input, p stage.Processor) {
	ch.procs = append(ch.procs, p)
	ch.kinds = append(ch.kinds, string(s.Kind))
	ch.geo = append(ch.geo, g)
	ch.outV = append(ch.outV, s.OutChannels(g.Channels)*channels(s.OutComplex(g.Complex)))
	ch.outN = append(ch.outN, 0)
	ch.tails = append(ch.tails, newTail(s, g))
}

// maxStageBytes bounds a stage's output for one block.
const maxStageBytes = 1 << 30

// newFanChain builds c, whose stages from f on run on each channel of
// the frames the Fanout stages before them make: the stages before f as
// one chain on whole frames, the rest as a chain of their own.
func newFanChain(c stage.Chain, f, maxBlock, workers int) (*Chain, error) {
	head := c
	head.Stages = c.Stages[:f]
	ch, err := newChain(head, maxBlock, workers)
	if err != nil {
		return nil, err
	}
	rest := restOf(c, f)
	if ch.rest, err = newChain(rest, head.MaxOut(maxBlock), workers); err != nil {
		ch.Close()
		return nil, fmt.Errorf("the stages from %d on, on each channel: %w", f, err)
	}
	ch.rest.setBase(f)
	ch.desc, ch.restAt = c, f
	ch.mid = make([]float32, head.MaxOut(maxBlock)*rest.ChannelCount()*channels(rest.Complex))
	ch.restWatch = func(point int, samples []float32) {
		if ch.watch != nil && point >= 0 { // -1, rest's input, is stage f-1's output
			ch.watch(point+f, samples)
		}
	}
	ch.rest.watch = nil
	return ch, nil
}

// restOf is the chain of d's stages from f on, on the frames the stages
// before them output.
func restOf(d stage.Chain, f int) stage.Chain {
	head := d
	head.Stages = d.Stages[:f]
	return stage.Chain{SampleRate: head.OutRate(), Complex: head.OutComplex(), Channels: head.OutChannels(), Stages: d.Stages[f:]}
}

// setBase numbers c's stages from base in messages, and its channels'.
func (c *Chain) setBase(base int) {
	c.base = base
	if c.multi != nil {
		for _, p := range c.multi.per {
			p.setBase(base)
		}
	}
}

// frameValues is the float32 values of a frame of g's input.
func frameValues(g stage.Input) int { return max(1, g.Channels) * channels(g.Complex) }

func channels(complex bool) int {
	if complex {
		return 2
	}
	return 1
}

// Process runs src (at most the max block of input samples, or frames)
// through every stage and writes the chain's output to dst, which must
// hold MaxOut(samples) output samples of every channel; it returns the
// number of float32 values written. dst must not overlap src.
func (c *Chain) Process(dst, src []float32) (int, error) {
	if c.src.n != 0 {
		return c.processMapped(dst, src)
	}
	return c.process(dst, src)
}

// processMapped is process on a block in the source's memory (mapped).
func (c *Chain) processMapped(dst, src []float32) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer c.src.recovered(&err)
	// A splitter checks stage 0's segments; a watch reads the whole
	// block before any, and the check must come first.
	first := c.check != nil && (c.split == nil || c.watch != nil)
	if first {
		if err := c.check(src); err != nil {
			return 0, err
		}
	}
	if c.split != nil {
		c.split.check = c.check
		if first {
			c.split.check = nil
		}
	}
	return c.process(dst, src)
}

// checkViews has the chain check the values of the views it takes
// (pipeline.ViewScanner) with check, nil for none, before it reads them:
// one channel's blocks a segment at a time where the splitter cuts them
// (on several cores each on the core that filters it, on one a long
// block's, soloSegments), and the others whole before the first stage.
func (c *Chain) checkViews(check func([]float32) error) { c.check = check }

// useMapped has the chain take its blocks from region, the source's
// memory, on every goroutine that reads them (mapped).
func (c *Chain) useMapped(region []byte) {
	c.src = newMapped(region)
	if c.split != nil {
		c.split.src = c.src
	}
	if c.multi != nil {
		c.multi.mem = c.src
	}
}

func (c *Chain) process(dst, src []float32) (int, error) {
	if c.multi != nil {
		// Channels run apart show the chain's input and output whole,
		// and each stage's output between as the frames it would have
		// made (perChannel.show).
		if c.watch != nil {
			c.watch(-1, src)
		}
		c.multi.watch = c.watch
		n, err := c.multi.process(dst, src)
		if err == nil && c.watch != nil {
			c.watch(len(c.desc.Stages)-1, dst[:n])
		}
		return n, err
	}
	if c.rest == nil {
		return c.stages(dst, src)
	}
	n, err := c.stages(c.mid, src)
	if err != nil {
		return 0, err
	}
	c.rest.watch = nil
	if c.watch != nil {
		c.rest.watch = c.restWatch
	}
	return c.rest.process(dst, c.mid[:n])
}

// stages runs the chain's own stages: all of them, or those before rest.
func (c *Chain) stages(dst, src []float32) (int, error) {
	in := src
	if c.watch != nil {
		c.watch(-1, src)
	}
	for i, p := range c.procs {
		out := dst
		if i < len(c.bufs) {
			out = c.bufs[i]
		}
		var n int
		var err error
		if c.split != nil {
			n, err = c.split.process(i, c.desc.Stages[i], p, out, in, frameValues(c.geo[i]), c.outV[i])
		} else {
			n, err = p.Process(out, in)
		}
		if err != nil {
			return 0, fmt.Errorf("stage %d (%s): %w", c.base+i, c.kinds[i], err)
		}
		if t := c.tails[i]; t != nil {
			t.push(in)
		}
		in = out[:n]
		c.outN[i] = n
		if c.watch != nil {
			c.watch(i, in)
		}
	}
	c.seen += int64(len(src) / frameValues(c.geo[0]))
	return len(in), nil
}

// fault writes every buffer between the chain's stages, so that their
// pages are faulted in before the first block, not on its clock.
func (c *Chain) fault() {
	for _, b := range c.bufs {
		clear(b)
	}
	clear(c.mid)
	if c.multi != nil {
		for i, p := range c.multi.per {
			clear(c.multi.in[i])
			clear(c.multi.out[i])
			p.fault()
		}
	}
	if c.rest != nil {
		c.rest.fault()
	}
}

// MaxOut returns the most output samples (of each channel: frames) one
// call produces for n input samples.
func (c *Chain) MaxOut(n int) int { return c.desc.MaxOut(n) }

// MaxBlock returns the most input samples one call accepts.
func (c *Chain) MaxBlock() int { return c.max }

// Reset restarts every stage, as if no input had been seen.
func (c *Chain) Reset() {
	if c.multi != nil {
		c.multi.reset()
	}
	for _, p := range c.procs {
		p.Reset()
	}
	for _, t := range c.tails {
		if t != nil {
			t.reset()
		}
	}
	c.split.reset()
	c.seen = 0
	if c.rest != nil {
		c.rest.Reset()
	}
}

// Close stops the goroutines of a chain of several channels; the chain
// must not be used afterwards.
func (c *Chain) Close() {
	if c.multi != nil {
		c.multi.close()
	}
	c.split.close()
	if c.rest != nil {
		c.rest.Close()
	}
}

// Desc returns the chain's description.
func (c *Chain) Desc() stage.Chain { return c.desc }

// errNoChain is returned by Start when the backend has nothing to run.
var errNoChain = errors.New("cpu: backend has no chain")
