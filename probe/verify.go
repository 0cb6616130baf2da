package probe

import (
	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
)

// shadow is the CPU reference: a plain FIR, or the CPU chain when the
// probe runs a stage chain. Process returns the values written.
type shadow interface {
	Process(dst, src []float32) (int, error)
	Reset()
}

// firShadow adapts filter.FIR, which writes one output per input.
type firShadow struct{ *filter.FIR }

func (f firShadow) Process(dst, src []float32) (int, error) {
	return len(src), f.FIR.Process(dst[:len(src)], src)
}

// verdict is what the shadow check made of one block.
type verdict int

const (
	notSampled verdict = iota // --verify-every skipped it
	unverified                // its input (or history) record was overwritten
	verified                  // compared; see the relative error
)

// verifier is the CPU shadow check. The backend filters the blocks it
// receives as one stream (a block dropped at capture never reaches it), so
// the reference must see the same stream.
//
// With every <= 1 the shadow FIR runs on every delivered block and keeps its
// history, as the block-count mode always did. With every = N > 1 only the
// blocks with Seq%N == 0 are compared, and only they cost a FIR: the shadow
// is reset and primed with the last ntaps-1 input samples of the blocks
// delivered just before (a FIR's output depends on nothing older), which
// gives the bit-identical reference at 1/N of the cost.
//
// In the soak mode (resync) a continuous verifier whose history was lost
// (the check fell more than recordSlots(cfg) blocks behind) primes itself the
// same way at the next block and carries on, instead of leaving the rest of
// a long run unverified as the block-count mode does.
type verifier struct {
	src     *source
	shadow  shadow
	ref     []float32
	scratch []float32
	every   uint64
	broken  bool // continuous: a lost record broke the history
	resync  bool // continuous: re-prime a broken history (soak mode)

	// Retunes (Config.RetuneEvery): rt says which set is in force at a
	// block's first frame (frames delivered before it).
	rt     *retuner
	frames int64 // input frames of the blocks checked so far
	block  int   // input frames a block (probe blocks are all full)
	// A chain's shadow (shadow itself; with retunes, a plain FIR's too),
	// retuned to the set in force at each block's first frame over the
	// same history: a shift's phase carries on across them.
	chain *cpu.Chain
	set   int

	// sampled mode: the last delivered sequence numbers, a ring of the
	// blocks that can hold the ntaps-1 history samples.
	need       int // history values: (ntaps-1)·channels
	prev       []uint64
	head, nrec int
}

func newVerifier(cfg Config, src *source, ch int, rt *retuner) (*verifier, error) {
	if cfg.chain() || rt != nil {
		// The chain's state (phase, decimation position) depends on the
		// whole stream, so it is checked continuously, never re-primed. A
		// plain FIR that retunes is checked as a chain of one fir, whose
		// retunes keep its history: one filter a block, not one per set.
		sc := cfg.shadowChain()
		c, err := cpu.NewChain(sc, cfg.BlockSize)
		if err != nil {
			return nil, err
		}
		outCh := pipeline.FrameValues(sc.OutChannels(), sc.OutComplex())
		return &verifier{src: src, shadow: c, chain: c, rt: rt, block: cfg.BlockSize, every: 1, ref: make([]float32, c.MaxOut(cfg.BlockSize)*outCh)}, nil
	}
	fir, err := filter.NewFIR(cfg.Taps, cfg.Complex, cfg.BlockSize)
	if err != nil {
		return nil, err
	}
	v := &verifier{src: src, shadow: firShadow{fir}, every: uint64(max(1, cfg.VerifyEvery)), resync: cfg.Duration > 0,
		ref: make([]float32, cfg.BlockSize*ch), scratch: make([]float32, cfg.BlockSize*ch)}
	v.need = (len(cfg.Taps) - 1) * ch
	// Probe blocks are all full, so this many hold the history.
	v.prev = make([]uint64, (v.need+cfg.BlockSize*ch-1)/(cfg.BlockSize*ch))
	return v, nil
}

// check runs the reference for o and, for a verified block, returns its
// error relative to the reference block's RMS. It allocates nothing.
func (v *verifier) check(o pipeline.Output) (verdict, float64) {
	if v.every <= 1 {
		vd, e := v.continuous(o)
		v.remember(o.Seq)
		return vd, e
	}
	vd, e := notSampled, 0.0
	if o.Seq%v.every == 0 {
		vd, e = v.sampled(o)
	}
	v.remember(o.Seq)
	return vd, e
}

func (v *verifier) continuous(o pipeline.Output) (verdict, float64) {
	if v.broken && v.resync {
		vd, e := v.sampled(o) // leaves the history right when it verifies
		v.broken = vd != verified
		return vd, e
	}
	n := 0
	if !v.broken {
		in, ok := v.src.recorded(o.Seq)
		if ok && v.rt != nil && v.retuneChain() != nil { // retunes run on the chain shadow
			ok = false
		}
		if ok {
			var err error
			n, err = v.shadow.Process(v.ref, in)
			ok = err == nil
		}
		v.broken = !ok // the record was overwritten: history lost
	}
	ref := v.ref[:n]
	if v.rt != nil {
		v.frames += int64(v.block)
	}
	if v.broken {
		return unverified, 0
	}
	return verified, filter.MaxErrRMS(o.Samples, ref) // +Inf on a length mismatch
}

// retuneChain applies to the chain's shadow the retune in force at the
// block's first frame, if it is not the one in force already.
func (v *verifier) retuneChain() error {
	set := v.rt.setAt(v.frames)
	if set == v.set {
		return nil
	}
	for _, r := range v.rt.changes[set] {
		p, err := v.chain.Prepare(r.Index, r.Stage)
		if err != nil {
			return err
		}
		v.chain.Apply(p)
	}
	v.set = set
	return nil
}

func (v *verifier) sampled(o pipeline.Output) (verdict, float64) {
	v.shadow.Reset()
	// Probe blocks are all full: only the last ntaps-1 samples matter.
	skip := max(0, v.nrec*len(o.Samples)-v.need)
	for i := range v.nrec {
		seq := v.prev[(v.head+i)%len(v.prev)]
		in, ok := v.src.recorded(seq)
		if !ok {
			return unverified, 0
		}
		if skip >= len(in) {
			skip -= len(in)
			continue
		}
		part := in[skip:]
		skip = 0
		if _, err := v.shadow.Process(v.scratch[:len(part)], part); err != nil {
			return unverified, 0
		}
	}
	in, ok := v.src.recorded(o.Seq)
	if !ok {
		return unverified, 0
	}
	n, err := v.shadow.Process(v.ref, in)
	if err != nil {
		return unverified, 0
	}
	return verified, filter.MaxErrRMS(o.Samples, v.ref[:n])
}

func (v *verifier) remember(seq uint64) {
	if len(v.prev) == 0 {
		return
	}
	if v.nrec < len(v.prev) {
		v.prev[(v.head+v.nrec)%len(v.prev)] = seq
		v.nrec++
		return
	}
	v.prev[v.head] = seq
	v.head = (v.head + 1) % len(v.prev)
}
