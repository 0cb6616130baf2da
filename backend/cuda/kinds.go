package cuda

import "github.com/sigproc/sigproc/stage"

// chainKernel is how the chain kernels (kernels/chain.cu, launched by
// ChainFilter in chainx_cuda.go) compute a stage kind.
type chainKernel int

const (
	// kernelShift mixes (the stage's stage.Def.Shift): chain_shift_*, or
	// fused into the input staging of the polyphase filter after it.
	kernelShift chainKernel = iota + 1
	// kernelPoly is upfirdn with the stage's taps by its rate factors
	// (stage.Def.Factors: up L, down M): chain_poly_{tiled,direct}_*.
	kernelPoly
	// kernelBank is the polyphase filter bank (stage.KindChannelize):
	// chain_bank_*, the last op of a chain.
	kernelBank
	// kernelSelect keeps channels of the bank before it (stage.KindSelect),
	// fused into the bank's output.
	kernelSelect
)

// chainKernels registers each stage kind's GPU kernel. A kind not listed
// runs on the CPU backend only: CheckChain refuses it (ErrKind).
var chainKernels = map[stage.Kind]chainKernel{
	stage.KindShift:      kernelShift,
	stage.KindFIR:        kernelPoly,
	stage.KindResample:   kernelPoly,
	stage.KindChannelize: kernelBank,
	stage.KindSelect:     kernelSelect,
}
