package cuda

import (
	"fmt"
	"math"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/mixer"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// The zero-copy transport's plan of a stage chain for its persistent
// kernels (chain_persistent and chain_persistent_bank in
// kernels/zchain.cu), without the driver.

// zcMaxOps is the most ops the persistent chain kernel runs (ZC_MAX_OPS).
const zcMaxOps = 8

// An op descriptor's words (OP_* in kernels/zchain.cu).
const (
	zcOpL      = iota // upsampling factor
	zcOpM             // downsampling factor
	zcOpQ             // taps per branch now
	zcOpQCap          // the most taps per branch: its history is zcOpQCap−1 samples
	zcOpTaps          // shared-memory float offset of its branches
	zcOpCplx          // its buffer holds complex samples
	zcOpShift         // values are rotated as they are written into its buffer
	zcOpNum           // the shift's exact ratio num/den (den 0: none)
	zcOpDen           //
	zcOpCps           // the shift in cycles per sample, a float64's bits
	zcOpBase          // the shift's phase at input t is zcOpOff + (t − zcOpBase)·cps
	zcOpOff           // a float64's bits, cycles
	zcOpBuf           // shared-memory float offset of its buffer 0
	zcOpBufLen        // floats per buffer
	zcOpPar           // float offset of its branches in a parameter image
	zcOpHist          // history samples of its buffer: zcOpQCap−1, a bank's zcOpQCap·zcOpBank−1
	zcOpCh            // channels of its input
	zcOpBank          // a filter bank's channels (its branches); 0: a polyphase filter
	zcOpKeep          // bank: shared-memory float offset of the kept channels' numbers (as floats)
	zcOpNKeep         // bank: channels kept, its output channels
	zcOpTw            // bank: shared-memory float offset of its twiddles (complex)
	zcOpU             // bank: shared-memory float offset of its sums (complex, a bank's channels an output frame)
	zcOpWords
)

// zcChainRetuneTaps is the most taps a running zero-copy chain's fir can
// be retuned to unless it started with more or shared memory is short:
// its op keeps the history and room for the taps of that many. Every block
// carries the history in shared memory, 1023 complex samples in about
// 0.1 µs of a 1024-thread block.
const zcChainRetuneTaps = 1024

// zcBankRetuneTaps is the same for a channelize's prototype, which spans
// its channels times the taps a branch (64 channels of 16 to 64).
const zcBankRetuneTaps = 4096

// zcRetuneRoom is the taps a retunable op of stage s keeps room for.
func zcRetuneRoom(s stage.Stage) int64 {
	if s.Kind == stage.KindChannelize {
		return zcBankRetuneTaps
	}
	return zcChainRetuneTaps
}

// zcParWords is the 64-bit words of an op's header in a parameter image
// (PAR_WORDS): the shift's num, den and cps bits, the taps per branch.
const zcParWords = 4

// zcChainStaticSmem is the chain kernel's static shared memory: its ops'
// descriptors, a retune's image headers and the polled block's parity.
const zcChainStaticSmem = zcMaxOps*zcOpWords*8 + zcMaxOps*2*zcParWords*4 + 16

// zcChain is a stage chain as the persistent chain kernel runs it on
// blocks of a fixed number of frames: a list of ops, each a polyphase
// filter (a fir ÷M, a resample L/M, or for a shift on its own the
// identity) or a filter bank (a channelize, with the select after it) with
// the shift before it, if any, applied as its input is written; every
// op's branches and its two [history | block] buffers in shared memory, a
// bank's kept channels, twiddles and sums too. It also counts, block by
// block, the outputs the kernel writes (blockOut), as the host must know
// how many tagged words to read, and writes the parameter image a retune
// hands the kernel (image).
type zcChain struct {
	ops        []int64 // zcOpWords an op
	meta       []zcOpMeta
	taps       []float32 // every op's branches, at shared float 0
	smemFloats int       // the kernel's dynamic shared memory, in floats
	stageOff   int       // where a real output is staged before it is written in pairs
	inCh       int       // values per input frame
	inCplx     bool
	channels   int // channels per input frame
	outCplx    bool
	outCh      int       // values per output frame
	maxOut     int       // output frames per block at most
	imageLen   int       // floats of a parameter image
	img        []float32 // image's buffer, reused
	count      []zcCount
}

// zcOpMeta is what a retune needs of an op: the chain stages it runs.
type zcOpMeta struct {
	filterAt  int     // the chain's stage index of its filter (−1: the identity)
	shiftAt   int     // the chain's stage index of its shift (−1: none)
	shiftRate float64 // the shift's input rate
	inCplx    bool    // its input before the shift
	br, qcap  int64   // branches (a resample's L, a bank's channels) of at most qcap taps
	tune      bool    // its filter takes new taps (a fir, a channelize)
}

// zcCount is an op's stream position: inputs consumed, outputs produced.
type zcCount struct{ l, m, t, next int64 }

// planZCChain plans c for blocks of block frames, each retunable fir with
// the history of zcChainRetuneTaps taps and each channelize of
// zcBankRetuneTaps (or its own, if more) where optin bytes of shared
// memory hold them all (optin 0: no limit), else every op with its own. A
// select is taken right after a channelize only (checkBankPlace).
func planZCChain(c stage.Chain, block, optin int) (*zcChain, error) {
	p, err := planZCChainCap(c, block, true)
	if err != nil || optin <= 0 || 4*p.smemFloats+zcChainStaticSmem <= optin {
		return p, err
	}
	return planZCChainCap(c, block, false)
}

func planZCChainCap(c stage.Chain, block int, room bool) (*zcChain, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if block <= 0 {
		return nil, fmt.Errorf("gpu: zero-copy chain: block of %d frames", block)
	}
	if err := checkBankPlace(c); err != nil {
		return nil, err
	}
	nch := c.ChannelCount()
	p := &zcChain{inCplx: c.Complex, channels: nch, inCh: channels(c.Complex) * nch}
	type opPlan struct {
		zcOpMeta
		l, m  int64 // the stream's factors: up, down
		maxIn int   // input frames a block at most
		ch    int   // input channels
		bank  int   // a bank's channels; 0: a polyphase filter
		keep  []int // a bank's kept channels
	}
	var plans []opPlan
	rate, cplx, n := c.SampleRate, c.Complex, block
	pending, pendRate := -1, 0.0
	identity := func(at int, r float64) {
		plans = append(plans, opPlan{zcOpMeta: zcOpMeta{filterAt: -1, shiftAt: at, shiftRate: r, inCplx: cplx, br: 1, qcap: 1}, l: 1, m: 1, maxIn: n, ch: nch})
		cplx = true
	}
	for i := 0; i < len(c.Stages); i++ {
		s := c.Stages[i]
		switch chainKernels[s.Kind] {
		case kernelShift:
			if pending >= 0 { // two shifts in a row: the first on its own
				identity(pending, pendRate)
			}
			pending, pendRate = i, rate
		case kernelPoly, kernelBank:
			l, m := s.Def().Factors(s)
			op := opPlan{zcOpMeta: zcOpMeta{filterAt: i, shiftAt: pending, shiftRate: pendRate, inCplx: cplx, br: int64(l), tune: resumes(s)},
				l: int64(l), m: int64(m), maxIn: n, ch: nch}
			selects := false
			if s.Kind == stage.KindChannelize {
				op.br, op.bank = int64(s.Bank), s.Bank
				op.keep = make([]int, s.Bank)
				for k := range op.keep {
					op.keep[k] = k
				}
				if selects = i+1 < len(c.Stages) && chainKernels[c.Stages[i+1].Kind] == kernelSelect; selects {
					op.keep = c.Stages[i+1].Keep // fused into the bank's output
				}
			}
			q := (int64(len(s.Taps)) + op.br - 1) / op.br
			op.qcap = q
			if op.tune && room {
				op.qcap = max(q, (zcRetuneRoom(s)+op.br-1)/op.br)
			}
			plans = append(plans, op)
			cplx = cplx || pending >= 0 || op.bank > 0
			pending = -1
			n = s.MaxOut(n)
			if op.bank > 0 {
				nch = len(op.keep)
			}
			if selects { // a select keeps the rate and the frames
				i++
			}
		default:
			if _, ok := chainKernels[s.Kind]; !ok {
				return nil, fmt.Errorf("%w: stage %d (%s) has no GPU kernel; use backend: cpu", ErrKind, i, s.Kind)
			}
			return nil, fmt.Errorf("%w: stage %d (%s) has no zero-copy kernel (the chain is %s); use transport: explicit or auto",
				ErrStages, i, s.Kind, c)
		}
		rate = s.Rate(rate)
	}
	if pending >= 0 {
		identity(pending, pendRate)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("gpu: zero-copy chain: no stages")
	}
	if len(plans) > zcMaxOps {
		return nil, fmt.Errorf("%w: the chain %s makes %d kernel ops, the zero-copy kernel runs at most %d; use transport: explicit",
			ErrStages, c, len(plans), zcMaxOps)
	}
	// Shared memory: each op's branches (room for qcap a branch), its
	// kept channels, then its two buffers, then a bank's twiddles and sums,
	// then the staging of a real output.
	off, par := 0, zcParWords*2*len(plans)
	for _, op := range plans {
		w := make([]int64, zcOpWords)
		w[zcOpL], w[zcOpM], w[zcOpQCap], w[zcOpTaps], w[zcOpPar] = op.l, op.m, op.qcap, int64(off), int64(par)
		// A bank's branch takes every bank-th input, a polyphase filter's
		// consecutive ones.
		w[zcOpHist], w[zcOpCh], w[zcOpBank] = op.qcap-1, int64(op.ch), int64(op.bank)
		if op.bank > 0 {
			w[zcOpHist] = op.qcap*op.br - 1
		}
		p.ops = append(p.ops, w...)
		p.meta = append(p.meta, op.zcOpMeta)
		p.count = append(p.count, zcCount{l: op.l, m: op.m})
		off += int(op.br * op.qcap)
		par += int(op.br * op.qcap)
	}
	p.imageLen = par
	for k, op := range plans {
		if op.bank > 0 {
			p.ops[k*zcOpWords+zcOpKeep], p.ops[k*zcOpWords+zcOpNKeep] = int64(off), int64(len(op.keep))
			off += len(op.keep)
		}
	}
	p.taps = make([]float32, off)
	if err := p.setParams(c, p.taps, false); err != nil {
		return nil, err
	}
	for k, op := range plans {
		for j, ch := range op.keep {
			p.taps[int(p.ops[k*zcOpWords+zcOpKeep])+j] = float32(ch) // exact: at most 4096
		}
	}
	off = (off + 3) &^ 3
	for k, op := range plans {
		w := p.ops[k*zcOpWords:][:zcOpWords]
		oc := op.inCplx || op.shiftAt >= 0
		if oc {
			w[zcOpCplx] = 1
		}
		n := (int(w[zcOpHist]) + op.maxIn) * op.ch * channels(oc)
		w[zcOpBuf], w[zcOpBufLen] = int64(off), int64(n)
		off += 2 * ((n + 3) &^ 3)
		if op.bank > 0 {
			w[zcOpTw] = int64(off)
			off += 2 * op.bank
			w[zcOpU] = int64(off)
			off += 2 * op.bank * int(ceilMulDiv(int64(op.maxIn), op.l, op.m)+1)
		}
	}
	lastOp := plans[len(plans)-1]
	p.outCplx = lastOp.inCplx || lastOp.shiftAt >= 0 || lastOp.bank > 0
	p.outCh = channels(p.outCplx) * nch
	p.maxOut = n
	p.stageOff = off
	if !p.outCplx {
		off += (n*nch + 3) &^ 3
	}
	p.smemFloats = off
	return p, nil
}

// setParams writes the parameters of chain c's stages (the planned chain,
// or one retuned from it), op by op: for the launch, its shift and taps
// per branch into its descriptor words and its branches into dst at its
// shared-memory offset; as an image, a parameter image into dst: each
// op's header, then its branches at its image offset.
func (p *zcChain) setParams(c stage.Chain, dst []float32, image bool) error {
	for k, m := range p.meta {
		w := p.ops[k*zcOpWords:][:zcOpWords]
		var num, den, cps, q int64
		if m.shiftAt >= 0 {
			s := c.Stages[m.shiftAt]
			f, n, d, err := mixer.Ratio(s.Def().Shift(s), m.shiftRate)
			if err != nil {
				return fmt.Errorf("gpu: zero-copy chain shift: %w", err)
			}
			num, den, cps = int64(n), int64(d), int64(math.Float64bits(f))
		}
		taps := []float32(nil) // a shift alone: one branch of one tap, 1
		q = 1
		if m.filterAt >= 0 {
			s := c.Stages[m.filterAt]
			q = (int64(len(s.Taps)) + m.br - 1) / m.br
			if q > m.qcap {
				return &stage.StageError{Index: m.filterAt, Field: "taps", Msg: fmt.Sprintf(
					"%d taps: the running zero-copy chain keeps the history for at most %d (the larger of its start taps and %d, as shared memory allows); restart with the longer filter",
					len(s.Taps), m.qcap*m.br, zcRetuneRoom(s))}
			}
			taps = s.Taps
		}
		at := w[zcOpTaps]
		if image {
			h := dst[k*2*zcParWords:][:2*zcParWords]
			for i, v := range []int64{num, den, cps, q} {
				h[2*i], h[2*i+1] = math.Float32frombits(uint32(v)), math.Float32frombits(uint32(uint64(v)>>32))
			}
			at = w[zcOpPar]
		} else {
			w[zcOpQ] = q
			if m.shiftAt >= 0 {
				w[zcOpShift], w[zcOpNum], w[zcOpDen], w[zcOpCps] = 1, num, den, cps
			}
		}
		br := dst[at:][:m.br*m.qcap]
		clear(br)
		if taps == nil {
			br[0] = 1
		} else {
			putBranches(br, taps, m.br, q)
		}
	}
	return nil
}

// image returns the parameter image of c, a chain retuned from the one
// planned (the same stages, new shifts and taps): what a retune hands the
// kernel. A change to a stage that does not take new parameters here (a
// resample) is refused; changes names the stages that changed. The image
// is the plan's own buffer, reused by the next call (retunes are serial
// and copy it into the parameter block), so a retune allocates nothing
// here.
func (p *zcChain) image(c stage.Chain, changes []stage.Retune) ([]float32, error) {
	for _, r := range changes {
		i := r.Index
		tunes := false
		for _, m := range p.meta {
			tunes = tunes || m.shiftAt == i || m.filterAt == i && m.tune
		}
		if !tunes {
			return nil, fmt.Errorf("%w: %s stages cannot be retuned on cuda yet (stage %d)", stage.ErrRetuneUnsupported, c.Stages[i].Kind, i)
		}
	}
	if p.img == nil {
		p.img = make([]float32, p.imageLen)
	}
	if err := p.setParams(c, p.img, true); err != nil {
		return nil, err
	}
	return p.img, nil
}

// zcChainPinned is the pinned memory the zero-copy transport takes for
// the chain c on l's blocks (its kernel fitted to optin bytes of shared
// memory): the control block, the rings of tagged words in and out (the
// chain's most output values a block), and the parameter block of two
// images. A chain's kernel keeps no timing array.
func zcChainPinned(c stage.Chain, l pipeline.Layout, optin int) (int64, error) {
	p, err := planZCChain(c, l.BlockSize, optin)
	if err != nil {
		return 0, err
	}
	return cudrv.PageAlign(ctrlSize) + cudrv.PageAlign(int64(l.Slots*evenWords(l))*8) +
		cudrv.PageAlign(int64(l.Slots*p.outWords())*8) + cudrv.PageAlign(int64(paramFloats(p.imageLen))*4), nil
}

// zcChainThreads is the chain kernel's thread count for input slots of
// words tagged words: a thread a pair, in whole warps, 128 to 1024.
func zcChainThreads(words int) int { return min(1024, max(128, (words/2+31)&^31)) }

// banks reports whether an op is a filter bank, which only the kernel
// chain_persistent_bank runs.
func (p *zcChain) banks() bool {
	for k := range p.meta {
		if p.ops[k*zcOpWords+zcOpBank] > 0 {
			return true
		}
	}
	return false
}

// smemBytes is the kernel's dynamic shared memory.
func (p *zcChain) smemBytes() int { return 4 * p.smemFloats }

// outWords is the tagged words of an output slot: the most output values
// of a block, in whole pairs.
func (p *zcChain) outWords() int { return (p.maxOut*p.outCh + 1) &^ 1 }

// blockOut counts a block of n input frames through the ops and returns
// the output frames the kernel writes for it. The kernel takes every block
// as a full one, which a source fills but for the last (pipeline.Source),
// so the two agree up to a short last block, whose extra outputs the host
// does not read.
func (p *zcChain) blockOut(n int) int {
	v := int64(n)
	for i := range p.count {
		c := &p.count[i]
		end := ceilMulDiv(c.t+v, c.l, c.m)
		c.t, v, c.next = c.t+v, end-c.next, end
	}
	return int(v)
}
