//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/kernels"
	"github.com/sigproc/sigproc/mixer"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ChainFilter runs a stage chain (shift, decimating fir, resample,
// channelize with the select after it) on data already in device memory
// with the kernels of kernels/chain.cu, with package stage's semantics. It
// is the explicit transport's blockFilter for chains, and what `sigproc
// bench channelize --backend cuda` and bench/gpubench's chain benchmarks
// time.
//
// The chain becomes a list of ops: a fir or resample stage with the shift
// just before it fused into its input staging, a shift on its own, or a
// filter bank writing the channels the select after it keeps. A stream of
// several channels (the chain's, or a bank's output) is filtered and
// shifted channel by channel, the channels a batch dimension of each
// launch (see kernels/chain.cu). The
// first op reads the caller's [history | block] layout (HistoryValues);
// every later op reads a device buffer of its own that holds its history
// before the previous op's output, two of them taking turns so that the
// tail of one block becomes the head of the next without an overlapping
// copy. The host keeps each op's stream position (inputs consumed, outputs
// produced), from which every launch's decimation phase and shift phase
// follow exactly.
//
// Launches must be issued in stream order, each after the previous one
// (same stream, or a stream that waits for it), from one goroutine, with
// the CUDA context current: the ops' buffers are reused from one launch to
// the next.
type ChainFilter struct {
	mod      cudrv.Module
	shiftFn  [2]cudrv.Function // by input complexness
	tiledFn  [4]cudrv.Function // by input complexness + 2·fused shift
	directFn [4]cudrv.Function
	bankFn   [2]cudrv.Function // by input complexness
	// bankM: the critically sampled banks compiled for M = 2^lg
	// (bankCompiled), by input complexness and lg
	bankM   [2][bankMaxLog + 1]cudrv.Function
	sumsFn  [2]cudrv.Function // the bank's sums alone (split), by input complexness
	bankR   int64             // frames a thread of chain_bank_sums_* takes
	chain   stage.Chain       // what the ops run (stage indices, input counts)
	ops     []chainOp
	inCh    int // values per input sample
	outCh   int // values per output sample (frame)
	outCplx bool
	maxIn   int // input samples per block at most
	dev     []cudrv.DevicePtr
	events  []cudrv.Event    // the ops' retune events
	host    []*cudrv.HostBuf // the ops' pinned retune staging
	perThr  int              // outputs per thread of the tiled polyphase kernel
	closed  bool

	// Launch arguments; the params slices point at them (no allocation).
	pa          polyLaunch
	polyParams  [21]unsafe.Pointer
	sa          shiftLaunch
	shiftParams [6]unsafe.Pointer
	ba          bankLaunch
	bankParams  [14]unsafe.Pointer
	su          sumsLaunch
	sumsParams  [9]unsafe.Pointer
}

type sumsLaunch struct {
	x, u, b               cudrv.DevicePtr
	nout, m, d, p, t0, s0 int64
}

type bankLaunch struct {
	x, y, b, tw, keep       cudrv.DevicePtr
	nout, m, logM, d, p, t0 int64
	s0, frames, kept        int64
}

type polyLaunch struct {
	x, y, b                          cudrv.DevicePtr
	n, nout, l, m, lp, mp, q, p0, j0 int64
	c0, cps                          float64
	tq, w, loop, ch                  int64
	c0b, cpsb                        float64
	jk                               int64
}

type shiftLaunch struct {
	x, y    cudrv.DevicePtr
	n       int64
	c0, cps float64
	ch      int64
}

// opKind is what a chainOp launches.
type opKind int

const (
	opShift opKind = iota // a shift alone
	opPoly                // a polyphase filter, with an optional shift fused in front
	opBank                // a filter bank, with the select after it fused
)

// chainOp is one kernel launch per block (two for a split bank).
type chainOp struct {
	kind    opKind
	inCplx  bool
	shift   *mixer.Shifter // nil: no shift
	cps     float64        // shift frequency / rate
	rate    float64        // input sample rate (the shift's)
	at      int            // the chain's stage index of the filter or bank (−1: a shift alone)
	shiftAt int            // the chain's stage index of the shift (−1: none)
	tune    bool           // the filter or bank takes new taps (a stage.Resumer kind)
	staged  []float32      // pinned staging of the taps a retune copies (made at the first)
	copied  cudrv.Event    // recorded after the last such copy

	// A fused shift's retune: the history before input shiftK still reads
	// the old shift (prev, prevCps) until it leaves the history.
	prev        *mixer.Shifter
	prevCps     float64
	shiftK      int64
	lastShiftAt int64 // chain input frame of the last shift retune accepted (AcceptRetune; −1: none)
	shiftAtBack int64 // the one before it (−1: none)
	acceptQ     int64 // taps per branch after the retunes accepted (AcceptRetune)
	nch         int64 // channels of the input stream (the batch dimension)
	inCh        int   // values per input sample (frame of nch channels)
	outCh       int   // values per output sample
	maxIn       int   // input samples per block at most
	hist        int   // history samples kept before the input: for the most taps a retune may bring
	buf         [2]cudrv.DevicePtr
	cur         int // buf[cur] takes the next block (ops after the first)
	t, next     int64

	// filter bank: M channels ÷D, P taps per branch, F frames per thread
	// block, K channels kept (keep; 0: all M in order), twiddles tw
	bm, logM, bd, bp int64
	pcap             int64 // the most taps per branch a retune may bring
	frames, kept     int64
	general          bool // the general kernel, where the device cannot give a compiled one its frames (bankSmem)
	tw, keep         cudrv.DevicePtr
	split            bool            // sums by chain_bank_sums_* into scratch, then the FFT
	scratch, ones    cudrv.DevicePtr // split: frames × M sums; M taps of 1

	// polyphase: Q taps per branch now, at most qcap
	l, m, lp, mp, q int64
	qcap            int64
	elem            int // bytes per staged input value (the tile's)
	branches        cudrv.DevicePtr
	threads         int   // 0: direct kernel
	direct          bool  // the direct kernel whatever the taps (tests compare the two)
	tq, w           int64 // tiled geometry
	smem            int   // dynamic shared memory a launch takes (tiled, bank)
	loop            bool  // a tiled block runs every class (lp <= chainLoopClasses)
}

// NewChainFilter loads the chain kernels into the current CUDA context
// (from the PTX file at ptxPath, or the embedded kernels.ChainPTX when it
// is "") and builds the ops of c for blocks of at most maxBlock input
// samples (frames of the chain's channels). c must be valid.
func NewChainFilter(c stage.Chain, maxBlock int, ptxPath string) (f *ChainFilter, err error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if maxBlock <= 0 {
		return nil, fmt.Errorf("gpu: chain: max block %d must be > 0", maxBlock)
	}
	if err := checkBankPlace(c); err != nil {
		return nil, err
	}
	nch := int64(c.ChannelCount())
	f = &ChainFilter{chain: c, inCh: channels(c.Complex) * int(nch), maxIn: maxBlock}
	if f.mod, err = cudrv.LoadModule(ptxPath, kernels.ChainPTX, "chain"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	fn := func(name string) (cudrv.Function, error) {
		k, err := f.mod.Function(name)
		if err != nil {
			return k, fmt.Errorf("gpu: kernel %s: %w", name, err)
		}
		return k, nil
	}
	for i, name := range []string{"real", "iq"} {
		if f.shiftFn[i], err = fn("chain_shift_" + name); err != nil {
			return nil, err
		}
	}
	for i, name := range []string{"real", "iq", "real_shift", "iq_shift"} {
		if f.tiledFn[i], err = fn("chain_poly_tiled_" + name); err != nil {
			return nil, err
		}
		if f.directFn[i], err = fn("chain_poly_direct_" + name); err != nil {
			return nil, err
		}
	}
	for i, name := range []string{"real", "iq"} {
		if f.bankFn[i], err = fn("chain_bank_" + name); err != nil {
			return nil, err
		}
		if f.sumsFn[i], err = fn("chain_bank_sums_" + name); err != nil {
			return nil, err
		}
		for lg := bankMinLog; lg <= bankMaxLog; lg++ {
			if f.bankM[i][lg], err = fn(fmt.Sprintf("chain_bank_%s_c%d", name, lg)); err != nil {
				return nil, err
			}
		}
	}
	// The kernels compiled for M take these two as constants.
	for name, want := range map[string]int{"chain_bank_threads": bankThreads, "chain_bank_block_values": bankBlockValues,
		"chain_bank_pair_values": bankPairValues, "chain_bank_pair_lg": bankPairLog, "chain_bank_min_frames": bankMinFrames} {
		if v, err := moduleInt(f.mod, name); err != nil {
			return nil, err
		} else if v != want {
			return nil, fmt.Errorf("gpu: chain module's %s is %d, the host's %d: rebuild kernels/chain.ptx", name, v, want)
		}
	}
	bankR, err := moduleInt(f.mod, "chain_bank_frames_per_thread")
	if err != nil {
		return nil, err
	}
	f.bankR = int64(bankR)
	if f.perThr, err = moduleInt(f.mod, "chain_per_thread"); err != nil {
		return nil, err
	}
	rate, cplx, n := c.SampleRate, c.Complex, maxBlock
	var pending *stage.Stage // a shift waiting for the filter it fuses into
	var pendRate float64
	var pendAt int
	for i := 0; i < len(c.Stages); i++ {
		s := c.Stages[i]
		k, ok := chainKernels[s.Kind]
		if !ok {
			return nil, fmt.Errorf("gpu: chain stage %d (%s): %w", i, s.Kind, ErrKind)
		}
		if k == kernelBank {
			if pending != nil { // the shift before a bank runs alone
				if err := f.addShift(*pending, pendAt, pendRate, cplx, n, nch); err != nil {
					return nil, err
				}
				pending, cplx = nil, true
			}
			var keep []int
			at := i
			if i+1 < len(c.Stages) && chainKernels[c.Stages[i+1].Kind] == kernelSelect {
				keep = c.Stages[i+1].Keep
				i++
			}
			if err := f.addBank(s, at, keep, cplx, n, nch); err != nil {
				return nil, fmt.Errorf("gpu: chain stage %d (%s): %w", at, s.Kind, err)
			}
			cplx, nch = true, f.ops[len(f.ops)-1].kept
			n = s.MaxOut(n)
			rate = s.Rate(rate)
			continue
		}
		if k == kernelShift {
			if pending != nil { // two shifts in a row: the first runs alone
				if err := f.addShift(*pending, pendAt, pendRate, cplx, n, nch); err != nil {
					return nil, err
				}
				cplx = true
			}
			pending, pendRate, pendAt = &c.Stages[i], rate, i
			continue
		}
		if k != kernelPoly {
			return nil, fmt.Errorf("gpu: chain stage %d (%s): %w", i, s.Kind, ErrKind)
		}
		if err := f.addPoly(s, i, pending, pendAt, rate, cplx, n, nch); err != nil {
			return nil, fmt.Errorf("gpu: chain stage %d (%s): %w", i, s.Kind, err)
		}
		pending = nil
		cplx = f.ops[len(f.ops)-1].outCh == 2*int(nch)
		n = s.MaxOut(n)
		rate = s.Rate(rate)
	}
	if pending != nil {
		if err := f.addShift(*pending, pendAt, pendRate, cplx, n, nch); err != nil {
			return nil, err
		}
		cplx = true
	}
	f.outCh, f.outCplx = channels(cplx)*int(nch), cplx
	// Every op after the first reads its own [history | block] buffers.
	for k := 1; k < len(f.ops); k++ {
		op := &f.ops[k]
		nb := 1
		if op.hist > 0 {
			nb = 2
		}
		for j := range nb {
			size := int64(op.hist+op.maxIn) * int64(op.inCh) * 4
			if op.buf[j], err = f.alloc(size); err != nil {
				return nil, err
			}
			if err := cudrv.MemsetD32(op.buf[j], 0, size/4); err != nil {
				return nil, fmt.Errorf("gpu: clear chain history: %w", err)
			}
		}
		if nb == 1 {
			op.buf[1] = op.buf[0]
		}
	}
	if err := cudrv.SyncUploads("chain taps and history"); err != nil {
		return nil, err
	}
	p := &f.pa
	f.polyParams = [21]unsafe.Pointer{
		unsafe.Pointer(&p.x), unsafe.Pointer(&p.y), unsafe.Pointer(&p.b), unsafe.Pointer(&p.n),
		unsafe.Pointer(&p.nout), unsafe.Pointer(&p.l), unsafe.Pointer(&p.m), unsafe.Pointer(&p.lp),
		unsafe.Pointer(&p.mp), unsafe.Pointer(&p.q), unsafe.Pointer(&p.p0), unsafe.Pointer(&p.j0),
		unsafe.Pointer(&p.c0), unsafe.Pointer(&p.cps), unsafe.Pointer(&p.tq), unsafe.Pointer(&p.w),
		unsafe.Pointer(&p.loop), unsafe.Pointer(&p.ch), unsafe.Pointer(&p.c0b), unsafe.Pointer(&p.cpsb), unsafe.Pointer(&p.jk),
	}
	s := &f.sa
	f.shiftParams = [6]unsafe.Pointer{
		unsafe.Pointer(&s.x), unsafe.Pointer(&s.y), unsafe.Pointer(&s.n), unsafe.Pointer(&s.c0), unsafe.Pointer(&s.cps),
		unsafe.Pointer(&s.ch),
	}
	b := &f.ba
	f.bankParams = [14]unsafe.Pointer{
		unsafe.Pointer(&b.x), unsafe.Pointer(&b.y), unsafe.Pointer(&b.b), unsafe.Pointer(&b.tw), unsafe.Pointer(&b.keep),
		unsafe.Pointer(&b.nout), unsafe.Pointer(&b.m), unsafe.Pointer(&b.logM), unsafe.Pointer(&b.d), unsafe.Pointer(&b.p),
		unsafe.Pointer(&b.t0), unsafe.Pointer(&b.s0), unsafe.Pointer(&b.frames), unsafe.Pointer(&b.kept),
	}
	u := &f.su
	f.sumsParams = [9]unsafe.Pointer{
		unsafe.Pointer(&u.x), unsafe.Pointer(&u.u), unsafe.Pointer(&u.b), unsafe.Pointer(&u.nout), unsafe.Pointer(&u.m),
		unsafe.Pointer(&u.d), unsafe.Pointer(&u.p), unsafe.Pointer(&u.t0), unsafe.Pointer(&u.s0),
	}
	return f, nil
}

func (f *ChainFilter) alloc(n int64) (cudrv.DevicePtr, error) {
	p, err := cudrv.MemAlloc(max(n, 4))
	if err != nil {
		return 0, fmt.Errorf("gpu: allocate %d bytes for the chain: %w", n, err)
	}
	f.dev = append(f.dev, p)
	return p, nil
}

func newShifter(s stage.Stage, rate float64, cplx bool) (*mixer.Shifter, float64, error) {
	hz := s.Def().Shift(s) // a kernelShift kind
	sh, err := mixer.New(hz, rate, cplx)
	if err != nil {
		return nil, 0, err
	}
	return sh, hz / rate, nil
}

func (f *ChainFilter) addShift(s stage.Stage, at int, rate float64, cplx bool, maxIn int, nch int64) error {
	sh, cps, err := newShifter(s, rate, cplx)
	if err != nil {
		return fmt.Errorf("gpu: chain shift: %w", err)
	}
	f.ops = append(f.ops, chainOp{kind: opShift, inCplx: cplx, shift: sh, cps: cps, rate: rate, at: -1, shiftAt: at, nch: nch,
		inCh: channels(cplx) * int(nch), outCh: 2 * int(nch), maxIn: maxIn})
	return nil
}

func (f *ChainFilter) addPoly(s stage.Stage, at int, shift *stage.Stage, shiftAt int, rate float64, cplx bool, maxIn int, nch int64) error {
	l, m := s.Def().Factors(s) // a kernelPoly kind: upfirdn by its rate change
	op := chainOp{kind: opPoly, inCplx: cplx, nch: nch, inCh: channels(cplx) * int(nch), maxIn: maxIn, l: int64(l), m: int64(m),
		rate: rate, at: at, shiftAt: -1, tune: resumes(s), lastShiftAt: -1, shiftAtBack: -1}
	if shift != nil {
		sh, cps, err := newShifter(*shift, rate, cplx)
		if err != nil {
			return err
		}
		op.shift, op.cps, op.shiftAt = sh, cps, shiftAt
	}
	op.outCh = channels(cplx || shift != nil) * int(nch)
	g := int64(gcd(int(op.l), int(op.m)))
	op.lp, op.mp = op.l/g, op.m/g
	ntaps := int64(len(s.Taps))
	op.q = (ntaps + op.l - 1) / op.l
	op.qcap, op.acceptQ = op.q, op.q
	if op.tune {
		op.qcap = retuneCap(op.q, op.l, int64(op.inCh)*4, func(q int64) int64 { return q - 1 })
	}
	op.hist = int(op.qcap - 1)
	br := polyBranches(s.Taps, op.l, op.q)
	var err error
	if op.branches, err = f.upload(unsafe.Pointer(&br[0]), int64(len(br))*4, op.l*op.qcap*4); err != nil {
		return err
	}
	op.elem = 4
	if cplx || shift != nil {
		op.elem = 8
	}
	op.retile(f.perThr)
	op.loop = op.lp <= chainLoopClasses
	f.ops = append(f.ops, op)
	return nil
}

// addBank adds the filter bank of s (stage.KindChannelize), writing the
// channels keep lists (all M in order when empty). Its input is one
// channel (stage.Chain.Validate refuses more).
func (f *ChainFilter) addBank(s stage.Stage, at int, keep []int, cplx bool, maxIn int, nch int64) error {
	if nch != 1 {
		return fmt.Errorf("%w: a filter bank takes one channel, the stream has %d", ErrChannels, nch)
	}
	g := newBankGeometry(len(s.Taps), s.Bank, s.Decimate, len(keep))
	if err := f.bankSmem(&g); err != nil {
		return err
	}
	op := chainOp{kind: opBank, inCplx: cplx, nch: 1, inCh: channels(cplx), outCh: 2 * int(g.kept), maxIn: maxIn,
		at: at, shiftAt: -1, tune: resumes(s),
		bm: g.m, logM: g.logM, bd: g.d, bp: g.p, pcap: g.p, frames: g.frames, kept: g.kept,
		general: g.general, smem: g.smemBytes()}
	if op.tune {
		op.pcap = retuneCap(g.p, g.m, int64(op.inCh)*4, func(p int64) int64 { return p*g.m - 1 })
	}
	op.hist = int(op.pcap*op.bm - 1)
	rev := filter.BankTaps(s.Taps, int(g.m))
	var err error
	if op.branches, err = f.upload(unsafe.Pointer(&rev[0]), int64(len(rev))*4, op.pcap*op.bm*4); err != nil {
		return err
	}
	tw := bankTwiddles(int(g.m))
	if op.tw, err = f.upload(unsafe.Pointer(&tw[0]), int64(len(tw))*4, 0); err != nil {
		return err
	}
	if len(keep) > 0 {
		k32 := make([]int32, len(keep))
		for i, k := range keep {
			k32[i] = int32(k)
		}
		if op.keep, err = f.upload(unsafe.Pointer(&k32[0]), int64(len(k32))*4, 0); err != nil {
			return err
		}
	}
	f.ops = append(f.ops, op)
	if bankSplit(g) {
		return f.splitBank(&f.ops[len(f.ops)-1])
	}
	return nil
}

// bankSmem lets the kernels that may run the bank g take its dynamic
// shared memory a block, past the default 48 KiB (4096 channels hold two
// frames: 72 KiB). Where the device allows less (Turing: 64 KiB), g
// drops to the general kernel's frames (bankGeometry.fit).
func (f *ChainFilter) bankSmem(g *bankGeometry) error {
	if g.smemBytes() <= 48<<10 {
		return nil
	}
	dev, err := cudrv.CurrentDevice()
	if err != nil {
		return fmt.Errorf("gpu: filter bank: %w", err)
	}
	optin, err := cudrv.OptinSharedMem(dev)
	if err != nil {
		return fmt.Errorf("gpu: filter bank: %w", err)
	}
	if err := g.fit(optin); err != nil || g.general {
		return err
	}
	fns := f.bankFn[:]
	if g.logM >= bankMinLog && g.logM <= bankMaxLog {
		fns = append(fns[:len(fns):len(fns)], f.bankM[0][g.logM], f.bankM[1][g.logM])
	}
	for _, fn := range fns {
		if err := fn.SetMaxDynamicSmem(g.smemBytes()); err != nil {
			return fmt.Errorf("gpu: filter bank: %w", err)
		}
	}
	return nil
}

// splitBank makes op (a bank) take the split path: its scratch for the
// sums of a block's frames, and the one tap of 1 the FFT pass reads them
// with.
func (f *ChainFilter) splitBank(op *chainOp) error {
	if op.split {
		return nil
	}
	var err error
	if op.scratch, err = f.alloc(int64(op.maxOut(op.maxIn)) * op.bm * 8); err != nil {
		return err
	}
	ones := make([]float32, op.bm)
	for i := range ones {
		ones[i] = 1
	}
	if op.ones, err = f.upload(unsafe.Pointer(&ones[0]), int64(len(ones))*4, 0); err != nil {
		return err
	}
	op.split = true
	return nil
}

// SetBankSplit forces the filter bank's path (see bankSplit): the sums
// and the FFT in one kernel, or the sums by a kernel of their own first.
// Benchmarks and tests compare the two; call it before the first Launch.
// A chain without a bank ignores it.
func (f *ChainFilter) SetBankSplit(split bool) error {
	for i := range f.ops {
		if op := &f.ops[i]; op.kind == opBank {
			if !split {
				op.split = false
				continue
			}
			if err := f.splitBank(op); err != nil {
				return err
			}
		}
	}
	// The taps of 1 must be on the device before a launch on any stream.
	return cudrv.SyncUploads("chain filter bank split")
}

// retile sets the polyphase op's launch shape for its Q taps per branch:
// the tiled kernel where a tile fits shared memory, else the direct one.
func (op *chainOp) retile(perThr int) {
	op.threads, op.tq, op.w, op.smem = chainTile(op.mp, op.q, op.elem, perThr)
	if op.direct {
		op.threads = 0
	}
}

// upload allocates max(n, room) bytes of device memory for the chain and
// copies p's n bytes to its start: room leaves space for what a retune
// may bring.
func (f *ChainFilter) upload(p unsafe.Pointer, n, room int64) (cudrv.DevicePtr, error) {
	d, err := f.alloc(max(n, room))
	if err != nil {
		return 0, err
	}
	if err := cudrv.MemcpyHtoD(d, p, n); err != nil {
		return 0, fmt.Errorf("gpu: copy to the chain: %w", err)
	}
	return d, nil
}

// HistoryValues is how many values of history Launch's input starts with:
// the first op's, for the most taps a retune may bring (Q−1 samples for a
// filter that does not retune), none for a shift alone.
func (f *ChainFilter) HistoryValues() int { return f.ops[0].hist * f.ops[0].inCh }

// MaxOutValues bounds the output values of a block of n input values.
func (f *ChainFilter) MaxOutValues(n int) int {
	s := n / f.inCh
	for i := range f.ops {
		s = f.ops[i].maxOut(s)
	}
	return s * f.outCh
}

// OutComplex reports whether the output is complex (interleaved I/Q).
func (f *ChainFilter) OutComplex() bool { return f.outCplx }

// FrameValues is the float32 values of one output sample: 1, 2 for I/Q,
// 2K for a filter bank's frame of K channels.
func (f *ChainFilter) FrameValues() int { return f.outCh }

func (op *chainOp) maxOut(n int) int {
	switch op.kind {
	case opBank:
		return int(ceilMulDiv(int64(n), 1, op.bd))
	case opPoly:
		return int(ceilMulDiv(int64(n), op.l, op.m))
	}
	return n
}

// Launch enqueues the chain on block of n input values at in (after
// HistoryValues() values of history) on stream st, writing the outputs to
// out (room for MaxOutValues(n)), and returns how many output values it
// writes. n must be a whole number of samples, at most the max block.
func (f *ChainFilter) Launch(st cudrv.Stream, in, out cudrv.DevicePtr, n int) (int, error) {
	switch {
	case f.closed:
		return 0, errors.New("gpu: chain: launch after Close")
	case n < 0 || n%f.inCh != 0 || n/f.inCh > f.maxIn:
		return 0, fmt.Errorf("gpu: chain: block of %d values: want whole samples of %d values, at most %d samples", n, f.inCh, f.maxIn)
	case n == 0:
		return 0, nil
	}
	ns := n / f.inCh
	src := in
	for k := range f.ops {
		op := &f.ops[k]
		if k > 0 {
			src = op.buf[op.cur]
		}
		dst := out
		if k+1 < len(f.ops) {
			nx := &f.ops[k+1]
			dst = nx.buf[nx.cur] + cudrv.DevicePtr(nx.hist*nx.inCh*4)
		}
		nout, err := f.run(st, op, src, dst, ns)
		if err != nil {
			return 0, err
		}
		if k > 0 && op.hist > 0 && ns > 0 {
			// This block's tail is the next block's history.
			other := op.buf[1-op.cur]
			if err := st.CopyDtoD(other, src+cudrv.DevicePtr(ns*op.inCh*4), int64(op.hist*op.inCh)*4); err != nil {
				return 0, fmt.Errorf("gpu: chain: carry history: %w", err)
			}
			op.cur = 1 - op.cur
		}
		ns = nout
	}
	return ns * f.outCh, nil
}

// run enqueues op on ns input samples at x ([history | block]) and returns
// its output samples.
func (f *ChainFilter) run(st cudrv.Stream, op *chainOp, x, y cudrv.DevicePtr, ns int) (int, error) {
	if ns == 0 {
		return 0, nil
	}
	var c0 float64
	if op.shift != nil {
		c0 = op.shift.Phase(op.t) / (2 * math.Pi)
	}
	ci := 0
	if op.inCplx {
		ci = 1
	}
	// The kernels read the history their taps need, the last of what op keeps.
	switch op.kind {
	case opBank:
		x += cudrv.DevicePtr((int64(op.hist) - (op.bp*op.bm - 1)) * int64(op.inCh) * 4)
		return f.runBank(st, op, x, y, ns, ci)
	case opPoly:
		x += cudrv.DevicePtr((int64(op.hist) - (op.q - 1)) * int64(op.inCh) * 4)
	}
	if op.kind == opShift {
		f.sa = shiftLaunch{x: x, y: y, n: int64(ns), c0: c0, cps: op.cps, ch: op.nch}
		blocks := int(min((int64(ns)*op.nch+255)/256, 1<<16))
		if err := f.shiftFn[ci].Launch(blocks, 256, 0, st, f.shiftParams[:]); err != nil {
			return 0, fmt.Errorf("gpu: launch chain shift (%d samples): %w", ns, err)
		}
		op.t += int64(ns)
		return ns, nil
	}
	end := ceilMulDiv(op.t+int64(ns), op.l, op.m)
	nout := end - op.next
	// First output's j0 and branch, split so next·M cannot overflow.
	qd, rd := op.next/op.l, op.next%op.l
	f.pa = polyLaunch{
		x: x, y: y, b: op.branches, n: int64(ns), nout: nout,
		l: op.l, m: op.m, lp: op.lp, mp: op.mp, q: op.q,
		p0: rd * op.m % op.l, j0: qd*op.m + rd*op.m/op.l - op.t,
		c0: c0, cps: op.cps, tq: op.tq, w: op.w, ch: op.nch,
		jk: -int64(op.hist) - 1, // every sample with (c0, cps)
	}
	if op.prev != nil {
		if op.t-int64(op.hist) >= op.shiftK {
			op.prev = nil // the history is past the retune
		} else {
			f.pa.c0b, f.pa.cpsb, f.pa.jk = op.prev.Phase(op.t)/(2*math.Pi), op.prevCps, op.shiftK-op.t
		}
	}
	if op.loop {
		f.pa.loop = 1
	}
	if op.shift != nil {
		ci += 2
	}
	if nout > 0 {
		var err error
		if op.threads > 0 {
			perClass := (nout + op.lp - 1) / op.lp
			blocks := (perClass + op.tq - 1) / op.tq
			if !op.loop {
				blocks *= op.lp
			}
			if blocks *= op.nch; blocks > maxGridX {
				return 0, fmt.Errorf("gpu: chain: %d outputs of %d channels need %d blocks", nout, op.nch, blocks)
			}
			err = f.tiledFn[ci].Launch(int(blocks), op.threads, op.smem, st, f.polyParams[:])
		} else {
			// A whole number of blocks per channel (the kernel's stride).
			blocks := min((nout+255)/256, max(1, (1<<16)/op.nch)) * op.nch
			err = f.directFn[ci].Launch(int(blocks), 256, 0, st, f.polyParams[:])
		}
		if err != nil {
			return 0, fmt.Errorf("gpu: launch chain filter (L %d, M %d, %d taps/branch, %d outputs): %w", op.l, op.m, op.q, nout, err)
		}
	}
	op.t += int64(ns)
	op.next = end
	return int(nout), nil
}

// runBank enqueues the filter bank op on ns input samples at x ([history
// | block]): a frame for each input at a multiple of D.
func (f *ChainFilter) runBank(st cudrv.Stream, op *chainOp, x, y cudrv.DevicePtr, ns, ci int) (int, error) {
	end := ceilMulDiv(op.t+int64(ns), 1, op.bd)
	nout := end - op.next
	if nout > 0 {
		first := op.next * op.bd // the first frame's input index
		t0, s0 := first-op.t, first%op.bm
		f.ba = bankLaunch{x: x, y: y, b: op.branches, tw: op.tw, keep: op.keep, nout: nout,
			m: op.bm, logM: op.logM, d: op.bd, p: op.bp, t0: t0, s0: s0,
			frames: op.frames, kept: op.kept}
		if op.split {
			// The sums, rotated, into scratch; then the bank's FFT pass
			// over them as a one-tap bank: D = M, no rotation.
			f.su = sumsLaunch{x: x, u: op.scratch, b: op.branches, nout: nout, m: op.bm, d: op.bd, p: op.bp,
				t0: t0, s0: s0}
			grid := (op.bm + bankThreads - 1) / bankThreads * ((nout + f.bankR - 1) / f.bankR)
			if grid > maxGridX {
				return 0, fmt.Errorf("gpu: chain: %d frames of %d channels need %d blocks", nout, op.bm, grid)
			}
			if err := f.sumsFn[ci].Launch(int(grid), bankThreads, 0, st, f.sumsParams[:]); err != nil {
				return 0, fmt.Errorf("gpu: launch filter bank sums (%d channels ÷%d, %d taps/branch, %d frames): %w", op.bm, op.bd, op.bp, nout, err)
			}
			f.ba.x, f.ba.b, f.ba.d, f.ba.p, f.ba.t0, f.ba.s0 = op.scratch, op.ones, op.bm, 1, 0, 0
			ci = 1
		}
		blocks := (nout + op.frames - 1) / op.frames
		if blocks > maxGridX {
			return 0, fmt.Errorf("gpu: chain: %d frames need %d blocks", nout, blocks)
		}
		fn := f.bankFn[ci]
		if !op.general && bankCompiled(f.ba.m, f.ba.logM, f.ba.d) {
			fn = f.bankM[ci][f.ba.logM]
		}
		if err := fn.Launch(int(blocks), bankThreads, op.smem, st, f.bankParams[:]); err != nil {
			return 0, fmt.Errorf("gpu: launch filter bank (%d channels ÷%d, %d taps/branch, %d frames): %w", op.bm, op.bd, op.bp, nout, err)
		}
	}
	op.t += int64(ns)
	op.next = end
	return int(nout), nil
}

// Close frees the chain's buffers and unloads its module. The context
// must still be current and the launches finished. Close is idempotent.
func (f *ChainFilter) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	if err := cudrv.DestroyEvents(f.events); err != nil {
		errs = append(errs, fmt.Errorf("gpu: chain retune events: %w", err))
	}
	f.events = nil
	for _, h := range f.host {
		if err := h.Free(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free chain retune staging: %w", err))
		}
	}
	f.host = nil
	for _, p := range f.dev {
		if err := cudrv.MemFree(p); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free chain memory: %w", err))
		}
	}
	f.dev = nil
	if f.mod != (cudrv.Module{}) {
		if err := f.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: unload chain module: %w", err))
		}
		f.mod = cudrv.Module{}
	}
	return errors.Join(errs...)
}

// newStages returns the backend that runs the chain c (stages beyond a
// plain FIR) on the explicit transport, or the zero-copy one where
// configured; NewChainBackend has checked c.
func newStages(c stage.Chain, opts Options) (pipeline.Backend, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Transport == "" {
		opts.Transport = TransportAuto
	}
	c.Stages = append([]stage.Stage(nil), c.Stages...)
	return &backend{complex: c.Complex, opts: opts, chain: &c}, nil
}

// newBlockFilter returns the explicit transport's filter: the chain's
// kernels for a chain of stages, the batch FIR otherwise.
func (b *backend) newBlockFilter(l pipeline.Layout) (blockFilter, error) {
	if b.chain != nil {
		return NewChainFilter(*b.chain, l.BlockSize, cudrv.PTXFile(b.opts.PTXDir, "chain.ptx"))
	}
	m := ResolveMethod(b.opts.Method, len(b.taps))
	if m == filter.MethodFFT && l.Channels > 2 {
		// Overlap-save takes one channel (real or I/Q); the batch kernel
		// takes the frame's lanes.
		if b.opts.Method == filter.MethodFFT || len(b.taps) > BatchMaxTaps {
			return nil, fmt.Errorf("gpu: method fft takes one channel; the stream has %d values per frame (use method: direct, or backend: cpu)", l.Channels)
		}
		b.opts.Log.Info().Int("values_per_frame", l.Channels).Msg("method auto: N channels, using direct")
		m = filter.MethodDirect
	}
	if m == filter.MethodFFT {
		// Two values per frame, I/Q or two real channels, are the same two
		// lanes to overlap-save: each filtered on its own with real taps.
		f, err := NewOLSFIR(b.taps, l.Channels == 2, OLSOptions{MaxSamples: l.BlockSize, PTXPath: cudrv.PTXFile(b.opts.PTXDir, "ols.ptx")})
		switch {
		case err != nil && b.opts.Method == filter.MethodAuto && errors.Is(err, cudrv.ErrNoCuFFT) && len(b.taps) <= BatchMaxTaps:
			// auto chose fft, but this machine has no cuFFT: direct still works.
			b.opts.Log.Warn().Err(err).Msg("method auto: no cuFFT, using direct")
			m = filter.MethodDirect
		case err != nil:
			return nil, err
		default:
			b.opts.Log.Info().Str("method", m.String()).Int("taps", len(b.taps)).Int("fft_size", f.FFTSize()).Int("segments", f.SegmentsPerPass()).Str("transforms", f.LibraryPath()).Msg("cuda explicit filter")
			return olsBlocks{f}, nil
		}
	}
	// The frame's values (channels, I and Q) are the batch kernel's lanes.
	fir, err := NewBatchFIRLanes(b.taps, l.Channels, cudrv.PTXFile(b.opts.PTXDir, "batch.ptx"))
	if err != nil {
		return nil, err
	}
	b.opts.Log.Info().Str("method", m.String()).Int("taps", len(b.taps)).Msg("cuda explicit filter")
	return batchBlocks{fir}, nil
}

// maxOutValues bounds the output values of one block of l.
func (b *backend) maxOutValues(l pipeline.Layout) int {
	if b.chain == nil {
		return l.BlockValues()
	}
	return b.chain.MaxOut(l.BlockSize) * pipeline.FrameValues(b.chain.OutChannels(), b.chain.OutComplex())
}
