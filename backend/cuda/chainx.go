package cuda

import (
	"fmt"
	"math"
)

// Pure helpers of the chain filter (chainx_cuda.go), tested without a GPU.

// chainSharedLimit is the dynamic shared memory a tile may take (the
// default per-block limit, no opt-in needed).
const chainSharedLimit = 48 << 10

// ChainRetuneTaps is the most taps a running chain's fir or channelize
// stage can be retuned to on cuda, unless it started with more (in whole
// branches): each such op keeps that much input history on the device, as
// the CPU backend keeps its MaxRetuneTaps, within ChainRetuneHistoryBytes.
// Its kernels read the part their taps need.
const ChainRetuneTaps = 8192

// ChainRetuneHistoryBytes bounds the history an op keeps beyond its own
// taps' for retunes: every block copies it, so a stream of many channels
// (a bank's kept channels) lets its filters grow less far. One complex
// channel keeps all of ChainRetuneTaps in 64 KiB.
const ChainRetuneHistoryBytes = 256 << 10

// retuneCap is the most taps per branch an op of own taps per branch may
// take, where hist(n) is the history n taps per branch need, in samples of
// frameBytes bytes, and perBranch the taps a branch holds.
func retuneCap(own, perBranch, frameBytes int64, hist func(n int64) int64) int64 {
	n := (ChainRetuneTaps + perBranch - 1) / perBranch
	for n > own && hist(n)*frameBytes > ChainRetuneHistoryBytes {
		n--
	}
	return max(n, own)
}

// chainLoopClasses is the most output classes (L/gcd(L, M)) one tiled
// block loops over; with more, each block takes one class, so that a
// large L still makes a grid of many blocks.
const chainLoopClasses = 8

// chainTile picks the tiled kernel's geometry: the most threads (256 down
// to 32) whose tile of tq = threads·perThr outputs per class, with its
// input span mp·tq+q samples de-interleaved into mp rows of w (odd, so
// the staging writes spread over the banks), fits chainSharedLimit. It
// returns threads 0 when none fits: the direct kernel runs.
func chainTile(mp, q int64, elem, perThr int) (threads int, tq, w int64, smem int) {
	for threads = 256; threads >= 32; threads /= 2 {
		tq = int64(threads * perThr)
		span := mp*tq + q
		w = ((span+mp-1)/mp | 1)
		if b := mp * w * int64(elem); b <= chainSharedLimit {
			return threads, tq, w, int(b)
		}
	}
	return 0, 0, 0, 0
}

// polyBranches lays out taps for the polyphase kernels: branch ph (of l)
// holds h[ph], h[ph+l], … zero-padded to q taps.
func polyBranches(taps []float32, l, q int64) []float32 {
	br := make([]float32, l*q)
	putBranches(br, taps, l, q)
	return br
}

// putBranches writes taps into dst as polyBranches lays them out, branch
// ph at dst[ph*q:], leaving dst's other values as they are (zero them
// first for the padding).
func putBranches(dst, taps []float32, l, q int64) {
	for k, t := range taps {
		ph, i := int64(k)%l, int64(k)/l
		dst[ph*q+i] = t
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, 1)
}

// ceilMulDiv is ceil(n·l/m) without overflow for n < 2^62.
func ceilMulDiv(n, l, m int64) int64 {
	q, r := n/m, n%m
	return q*l + (r*l+m-1)/m
}

// channels is the float32 values per sample.
func channels(complex bool) int {
	if complex {
		return 2
	}
	return 1
}

// bankThreads is the filter bank kernel's block size, and bankBlockValues
// the complex values (frames × channels) a block holds in shared memory:
// 18 KiB with the padding (smemBytes), or one frame of more channels. A
// bank the compiled kernels may run (32 to 4096 channels) holds at least
// bankMinFrames frames, and from 2^bankPairLog channels bankPairValues,
// which its first FFT round takes in pairs with every thread busy: 36 KiB
// at 256 to 2048 channels, 72 KiB at 4096 (bankFrames in
// kernels/chain.cu).
const (
	bankThreads     = 256
	bankBlockValues = 2048
	bankPairValues  = 4096
	bankPairLog     = 8
	bankMinFrames   = 2
)

// bankFrames is the frames a block of the kernel compiled for 2^logM
// channels holds.
func bankFrames(logM int64) int64 {
	v := int64(bankBlockValues)
	if logM >= bankPairLog {
		v = bankPairValues
	}
	return max(v>>logM, bankMinFrames)
}

// smemBytes is the shared memory of a filter bank block: its F·M values,
// with the one float2 of padding after every 8 that the power-of-two FFT
// takes (bank_pad in kernels/chain.cu); the direct DFT of other M leaves
// the padding unused.
func (g bankGeometry) smemBytes() int {
	v := g.frames * g.m
	return int(v+v/8) * 8
}

// bankMinLog and bankMaxLog bound the banks that kernels/chain.cu
// compiles for their M (chain_bank_*_c<lg>: 32 to 4096 channels).
const (
	bankMinLog = 5
	bankMaxLog = 12
)

// bankCompiled reports whether a bank of m = 2^logM channels ÷d runs on
// the kernel compiled for its M: critically sampled (every frame's
// rotation is 0), so that each load of a tap row is a constant offset
// from one address, and every stride and loop bound is a constant (a
// third of the sums' instructions of the general kernel).
func bankCompiled(m, logM, d int64) bool {
	return d == m && logM >= bankMinLog && logM <= bankMaxLog
}

// bankGeometry is a filter bank launch's shape: m channels decimated by d,
// p taps per branch, frames per thread block, kept channels and log2 m
// (−1 when m is no power of two: the kernel's direct DFT). general says
// the general kernel runs it even where a compiled one would (fit).
type bankGeometry struct {
	m, logM, d, p, frames, kept int64
	general                     bool
}

func newBankGeometry(ntaps, m, d, kept int) bankGeometry {
	g := bankGeometry{m: int64(m), logM: -1, d: int64(d), p: int64((ntaps + m - 1) / m),
		frames: int64(max(1, bankBlockValues/m)), kept: int64(m)}
	if kept > 0 {
		g.kept = int64(kept)
	}
	if m&(m-1) == 0 {
		g.logM = 0
		for 1<<g.logM < m {
			g.logM++
		}
	}
	// The compiled kernels (critically sampled, or a split bank's FFT
	// pass, which SetBankSplit may choose at any time) are built for at
	// least bankMinFrames; the general kernel takes any.
	if g.logM >= bankMinLog && g.logM <= bankMaxLog {
		g.frames = bankFrames(g.logM)
	}
	return g
}

// fit makes g's blocks fit optin bytes of shared memory: where the
// compiled kernels' frames do not (4096 channels on Turing, 64 KiB), g
// drops to the frames the general kernel takes, one frame at most
// channels (36 KiB at filter.MaxBankChannels), and g.general says that
// kernel must run it.
func (g *bankGeometry) fit(optin int) error {
	if smem := g.smemBytes(); smem > optin {
		if least := max(1, bankBlockValues/g.m); g.frames > least {
			g.frames, g.general = least, true
			return g.fit(optin)
		}
		return fmt.Errorf("gpu: a filter bank of %d channels needs %d KiB of shared memory a block, the device allows %d KiB",
			g.m, smem>>10, optin>>10)
	}
	return nil
}

// bankTwiddles returns exp(+j2πk/m) for k < m, interleaved, computed in
// float64.
func bankTwiddles(m int) []float32 {
	tw := make([]float32, 2*m)
	for k := range m {
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(m))
		tw[2*k], tw[2*k+1] = float32(c), float32(s)
	}
	return tw
}

// bankSplit reports whether the bank g runs split: the sums first, in a
// kernel of their own (chain_bank_sums_*) that loads each tap once for
// several frames, into a scratch buffer the FFT pass then reads. Measured
// on an H100 (docs/THROUGHPUT.md), that pays on the general kernel for
// windows (P·M) of 32 Ki samples or more at 16 taps a branch or more. The
// kernels compiled for M read the window with fewer instructions, and
// from 256 channels a frame pair at a time. Before 256 to 1024 channels
// took pairs (H100, 2e679a1), fused won to a window of 32 Ki at 1024
// channels (× 32: 39.2 GS/s against 36.1) and lost at 64 Ki (× 64: 18.6
// against 23.7); with pairs at 2048 and 4096 channels it won to 128 Ki
// (4096 × 32: 35.1 against 33.9; 2048 × 64 a tie) and lost at 256 Ki
// (4096 × 64: 19.4 against 22.7). The crossover of 256 to 1024 channels
// with pairs is not measured yet: they keep 64 Ki.
func bankSplit(g bankGeometry) bool {
	if !g.general && bankCompiled(g.m, g.logM, g.d) {
		// Measured with frame pairs at 2048 and 4096 channels only; fewer
		// channels keep the crossover they had in blocks of 2048 values.
		if g.m >= 2048 {
			return g.p >= 16 && g.p*g.m >= 256<<10
		}
		return g.p >= 16 && g.p*g.m >= 64<<10
	}
	return g.p >= 16 && g.p*g.m >= 32<<10
}
