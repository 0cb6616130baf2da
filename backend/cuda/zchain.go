package cuda

import (
	"fmt"
	"math"

	"github.com/sigproc/sigproc/mixer"
	"github.com/sigproc/sigproc/stage"
)

// The zero-copy transport's plan of a stage chain for its persistent
// kernel (chain_persistent in kernels/zchain.cu), without the driver.

// zcMaxOps is the most ops the persistent chain kernel runs (ZC_MAX_OPS).
const zcMaxOps = 8

// An op descriptor's words (OP_* in kernels/zchain.cu).
const (
	zcOpL      = iota // upsampling factor
	zcOpM             // downsampling factor
	zcOpQ             // taps per branch
	zcOpTaps          // shared-memory float offset of its branches
	zcOpCplx          // its buffer holds complex samples
	zcOpShift         // values are rotated as they are written into its buffer
	zcOpNum           // the shift's exact ratio num/den (den 0: none)
	zcOpDen           //
	zcOpCps           // the shift in cycles per sample, a float64's bits
	zcOpBuf           // shared-memory float offset of its buffer 0
	zcOpBufLen        // floats per buffer
	zcOpWords
)

// zcChain is a stage chain as the persistent chain kernel runs it on
// blocks of a fixed number of frames: a list of ops, each a polyphase
// filter (a fir ÷M, a resample L/M, or for a shift on its own the
// identity) with the shift before it, if any, applied as its input is
// written; every op's branches and its two [history | block] buffers in
// shared memory. It also counts, block by block, the outputs the kernel
// writes (blockOut), as the host must know how many tagged words to
// read.
type zcChain struct {
	ops        []int64   // zcOpWords a op
	taps       []float32 // every op's branches, at shared float 0
	smemFloats int       // the kernel's dynamic shared memory, in floats
	stageOff   int       // where a real output is staged before it is written in pairs
	inCh       int       // values per input frame
	inCplx     bool
	channels   int // channels per frame
	outCplx    bool
	outCh      int // values per output frame
	maxOut     int // output frames per block at most
	count      []zcCount
}

// zcCount is an op's stream position: inputs consumed, outputs produced.
type zcCount struct{ l, m, t, next int64 }

// planZCChain plans c for blocks of block frames. A channelize or select
// stage is refused (ErrStages): the persistent kernel has no filter bank.
func planZCChain(c stage.Chain, block int) (*zcChain, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if block <= 0 {
		return nil, fmt.Errorf("gpu: zero-copy chain: block of %d frames", block)
	}
	nch := c.ChannelCount()
	p := &zcChain{inCplx: c.Complex, channels: nch, inCh: channels(c.Complex) * nch}
	type opPlan struct {
		l, m, q   int64
		br        []float32
		shift     *stage.Stage
		shiftRate float64
		inCplx    bool
		maxIn     int
	}
	var plans []opPlan
	rate, cplx, n := c.SampleRate, c.Complex, block
	var pending *stage.Stage
	var pendRate float64
	identity := func(s *stage.Stage, r float64) {
		plans = append(plans, opPlan{l: 1, m: 1, q: 1, br: []float32{1}, shift: s, shiftRate: r, inCplx: cplx, maxIn: n})
		cplx = true
	}
	for i := range c.Stages {
		s := &c.Stages[i]
		switch chainKernels[s.Kind] {
		case kernelShift:
			if pending != nil { // two shifts in a row: the first on its own
				identity(pending, pendRate)
			}
			pending, pendRate = s, rate
		case kernelPoly:
			l, m := s.Def().Factors(*s)
			q := (int64(len(s.Taps)) + int64(l) - 1) / int64(l)
			plans = append(plans, opPlan{l: int64(l), m: int64(m), q: q, br: polyBranches(s.Taps, int64(l), q),
				shift: pending, shiftRate: pendRate, inCplx: cplx, maxIn: n})
			cplx = cplx || pending != nil
			pending = nil
			n = s.MaxOut(n)
		default:
			if _, ok := chainKernels[s.Kind]; !ok {
				return nil, fmt.Errorf("%w: stage %d (%s) has no GPU kernel; use backend: cpu", ErrKind, i, s.Kind)
			}
			return nil, fmt.Errorf("%w: stage %d (%s) has no zero-copy kernel (the chain is %s); use transport: explicit or auto",
				ErrStages, i, s.Kind, c)
		}
		rate = s.Rate(rate)
	}
	if pending != nil {
		identity(pending, pendRate)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("gpu: zero-copy chain: no stages")
	}
	if len(plans) > zcMaxOps {
		return nil, fmt.Errorf("%w: the chain %s makes %d kernel ops, the zero-copy kernel runs at most %d; use transport: explicit",
			ErrStages, c, len(plans), zcMaxOps)
	}
	tapsAt := make([]int64, len(plans))
	for i, op := range plans {
		tapsAt[i] = int64(len(p.taps))
		p.taps = append(p.taps, op.br...)
	}
	off := (len(p.taps) + 3) &^ 3
	for i, op := range plans {
		w := make([]int64, zcOpWords)
		w[zcOpL], w[zcOpM], w[zcOpQ], w[zcOpTaps] = op.l, op.m, op.q, tapsAt[i]
		oc := op.inCplx || op.shift != nil
		if oc {
			w[zcOpCplx] = 1
		}
		if op.shift != nil {
			sh, err := mixer.New(op.shift.Def().Shift(*op.shift), op.shiftRate, op.inCplx)
			if err != nil {
				return nil, fmt.Errorf("gpu: zero-copy chain shift: %w", err)
			}
			cps, num, den := sh.Ratio()
			w[zcOpShift], w[zcOpNum], w[zcOpDen], w[zcOpCps] = 1, int64(num), int64(den), int64(math.Float64bits(cps))
		}
		n := (int(op.q) - 1 + op.maxIn) * nch * channels(oc)
		w[zcOpBuf], w[zcOpBufLen] = int64(off), int64(n)
		off += 2 * ((n + 3) &^ 3)
		p.ops = append(p.ops, w...)
		p.count = append(p.count, zcCount{l: op.l, m: op.m})
	}
	lastOp := plans[len(plans)-1]
	p.outCplx = lastOp.inCplx || lastOp.shift != nil
	p.outCh = channels(p.outCplx) * nch
	p.maxOut = n
	p.stageOff = off
	if !p.outCplx {
		off += (n*nch + 3) &^ 3
	}
	p.smemFloats = off
	return p, nil
}

// smemBytes is the kernel's dynamic shared memory.
func (p *zcChain) smemBytes() int { return 4 * p.smemFloats }

// outWords is the tagged words of an output slot: the most output values
// of a block, in whole pairs.
func (p *zcChain) outWords() int { return (p.maxOut*p.outCh + 1) &^ 1 }

// blockOut counts a block of n input frames through the ops and returns
// the output frames the kernel writes for it.
func (p *zcChain) blockOut(n int) int {
	v := int64(n)
	for i := range p.count {
		c := &p.count[i]
		end := ceilMulDiv(c.t+v, c.l, c.m)
		c.t, v, c.next = c.t+v, end-c.next, end
	}
	return int(v)
}
