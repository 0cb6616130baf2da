//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

type chainCase struct {
	name     string
	complex  bool
	stages   []stage.Stage
	blocks   []int // input samples (frames) per block, cycled
	total    int   // input samples (frames)
	channels int   // input channels
}

// chainCases runs from small to large, so a failing kernel shows first on
// a case small enough to read.
func chainCases(r *rand.Rand) []chainCase {
	taps := func(n int) []float32 { return randSignal(r, n) }
	odd := []int{37, 1000, 129, 4099, 1, 2048}
	var cs []chainCase
	for _, cplx := range []bool{false, true} {
		cs = append(cs,
			chainCase{"fir5/3", cplx, []stage.Stage{firStage(taps(5), 3)}, []int{7, 3, 1, 10}, 200, 1},
			chainCase{"shift", cplx, []stage.Stage{shiftStage(-123457)}, []int{101, 7}, 3000, 1},
			chainCase{"fir129/8", cplx, []stage.Stage{firStage(taps(129), 8)}, odd, 40000, 1},
			chainCase{"resample48x3/2", cplx, []stage.Stage{resStage(taps(48), 3, 2)}, odd, 40000, 1},
			chainCase{"resample7x5/1", cplx, []stage.Stage{resStage(taps(7), 5, 1)}, []int{13, 4}, 3000, 1},     // len(h) < L... and > L
			chainCase{"resample3x5/1", cplx, []stage.Stage{resStage(taps(3), 5, 1)}, []int{13, 4}, 3000, 1},     // branches without taps
			chainCase{"resample40x11/3", cplx, []stage.Stage{resStage(taps(40), 11, 3)}, []int{50, 7}, 3000, 1}, // 11 classes: one per block
			chainCase{"resample33x2/3", cplx, []stage.Stage{resStage(taps(33), 2, 3)}, []int{100, 31}, 20000, 1},
			chainCase{"shift+fir129/8", cplx, []stage.Stage{shiftStage(-250000), firStage(taps(129), 8)}, odd, 40000, 1},
			chainCase{"fir16/2+resample24x3/2", cplx, []stage.Stage{firStage(taps(16), 2), resStage(taps(24), 3, 2)}, odd, 40000, 1},
			chainCase{"shift+fir65/4+resample48x3/2", cplx, []stage.Stage{shiftStage(300001.5), firStage(taps(65), 4), resStage(taps(48), 3, 2)}, odd, 60000, 1},
			chainCase{"fir31/4+shift", cplx, []stage.Stage{firStage(taps(31), 4), shiftStage(12345)}, odd, 20000, 1},
			chainCase{"shift+shift+fir9/2", cplx, []stage.Stage{shiftStage(1000), shiftStage(-77777), firStage(taps(9), 2)}, []int{999, 64}, 10000, 1},
			chainCase{"fir2000/3", cplx, []stage.Stage{firStage(taps(2000), 3)}, []int{5000, 333}, 20000, 1},
			// Filter banks (issue 30): M ∈ {2, 8, 64, 1024, 4096}, D ∈ {M, M/2},
			// tap counts that are no multiple of M, M no power of two
			// (the kernel's direct DFT), a select fused in, a shift and a
			// filter before the bank.
			chainCase{"bank2/2x5", cplx, []stage.Stage{stage.NewChannelize(taps(5), 2, 2)}, []int{7, 3, 1, 10}, 300, 1},
			chainCase{"bank2/1x3", cplx, []stage.Stage{stage.NewChannelize(taps(3), 2, 1)}, []int{7, 3, 1, 10}, 300, 1},
			chainCase{"bank8/4x37", cplx, []stage.Stage{stage.NewChannelize(taps(37), 8, 4)}, odd, 20000, 1},
			chainCase{"bank8/8x64", cplx, []stage.Stage{stage.NewChannelize(taps(64), 8, 8)}, odd, 20000, 1},
			chainCase{"bank64/32x1000", cplx, []stage.Stage{stage.NewChannelize(taps(1000), 64, 32)}, odd, 40000, 1},
			chainCase{"bank64/64x129", cplx, []stage.Stage{stage.NewChannelize(taps(129), 64, 64)}, odd, 40000, 1},
			chainCase{"bank1024/512x16001", cplx, []stage.Stage{stage.NewChannelize(taps(16001), 1024, 512)}, []int{5000, 333, 1}, 60000, 1},
			chainCase{"bank1024/1024x3000", cplx, []stage.Stage{stage.NewChannelize(taps(3000), 1024, 1024)}, []int{4099, 2048}, 60000, 1},
			chainCase{"bank4096/2048x8192", cplx, []stage.Stage{stage.NewChannelize(taps(8192), 4096, 2048)}, []int{10000, 4097}, 60000, 1},
			// The kernels compiled for M that take frame pairs (256 to 4096
			// channels; 4096 with 72 KiB of shared memory a block),
			// blocks that end mid-pair.
			chainCase{"bank256/256x1001", cplx, []stage.Stage{stage.NewChannelize(taps(1001), 256, 256)}, []int{5000, 257, 1}, 40000, 1},
			chainCase{"bank512/512x4093", cplx, []stage.Stage{stage.NewChannelize(taps(4093), 512, 512)}, []int{5000, 513, 1}, 40000, 1},
			chainCase{"bank4096/4096x32765", cplx, []stage.Stage{stage.NewChannelize(taps(32765), 4096, 4096)}, []int{10000, 4097, 1}, 80000, 1},
			chainCase{"bank2048/2048x6001", cplx, []stage.Stage{stage.NewChannelize(taps(6001), 2048, 2048)}, []int{5000, 2047, 1}, 40000, 1},
			chainCase{"bank100/50x777", cplx, []stage.Stage{stage.NewChannelize(taps(777), 100, 50)}, odd, 20000, 1},
			chainCase{"bank3000/1500x6001", cplx, []stage.Stage{stage.NewChannelize(taps(6001), 3000, 1500)}, []int{4000, 1001}, 30000, 1},
			chainCase{"bank12/3x50", cplx, []stage.Stage{stage.NewChannelize(taps(50), 12, 3)}, odd, 5000, 1},
			chainCase{"shift+bank64/32x1024+select", cplx, []stage.Stage{shiftStage(-123457), stage.NewChannelize(taps(1024), 64, 32), stage.NewSelect(3, 17, 40, 63, 0)}, odd, 40000, 1},
			chainCase{"fir129/2+bank16/8x100", cplx, []stage.Stage{firStage(taps(129), 2), stage.NewChannelize(taps(100), 16, 8)}, odd, 40000, 1},
			// N channels, a batch dimension of the shift and polyphase
			// kernels: a chain on a source of several channels, and the
			// stages after a bank run on each of its (kept) channels.
			chainCase{"3ch/shift+fir129/8", cplx, []stage.Stage{shiftStage(-250000), firStage(taps(129), 8)}, odd, 20000, 3},
			chainCase{"4ch/fir31/4+shift+resample40x11/3", cplx, []stage.Stage{firStage(taps(31), 4), shiftStage(12345), resStage(taps(40), 11, 3)}, odd, 20000, 4},
			chainCase{"2ch/shift", cplx, []stage.Stage{shiftStage(1000)}, []int{101, 7}, 3000, 2},
			chainCase{"bank16/8x100+fir17/2", cplx, []stage.Stage{stage.NewChannelize(taps(100), 16, 8), firStage(taps(17), 2)}, odd, 40000, 1},
			chainCase{"bank64/32x1024+select+shift+fir65/4+resample48x3/2", cplx, []stage.Stage{stage.NewChannelize(taps(1024), 64, 32),
				stage.NewSelect(3, 17, 40, 63, 0), shiftStage(1234.5), firStage(taps(65), 4), resStage(taps(48), 3, 2)}, odd, 60000, 1},
			chainCase{"bank1024/1024x16384+select64+fir9", cplx, []stage.Stage{stage.NewChannelize(taps(16384), 1024, 1024),
				stage.NewSelect(every(0, 1024, 16)...), firStage(taps(9), 1)}, []int{5000, 333, 1}, 60000, 1},
		)
	}
	return cs
}

// every returns from, from+step, … below to.
func every(from, to, step int) []int {
	var s []int
	for k := from; k < to; k += step {
		s = append(s, k)
	}
	return s
}

// Kernel modes the tests force: the tiled kernel as chosen, the tiled
// kernel with one class per block, the direct kernel; a filter bank as
// chosen, fused, split (gpuChain).
var chainModes = []string{"tiled", "perclass", "direct"}

// gpuChain runs the case on a ChainFilter the way the explicit transport
// does: each block copied after the history the previous block left, and
// each tune's changes applied (ChainFilter.Retune) before the block at its
// gate.
func gpuChain(t *testing.T, c stage.Chain, x []float32, blocks []int, maxBlock int, mode string, tunes ...chainTune) [][]float32 {
	t.Helper()
	f, err := NewChainFilter(c, maxBlock, chainPTX())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	for i := range f.ops {
		switch mode {
		case "perclass":
			f.ops[i].loop = false
		case "direct":
			f.ops[i].direct, f.ops[i].threads = true, 0
		}
	}
	// A filter bank runs fused in the perclass mode and split in the
	// direct one, as chosen in the tiled one.
	if mode != "tiled" {
		if err := f.SetBankSplit(mode == "direct"); err != nil {
			t.Fatal(err)
		}
	}
	ch := pipeline.FrameValues(c.ChannelCount(), c.Complex)
	hist := f.HistoryValues()
	din := devBuf(t, hist+maxBlock*ch)
	maxOut := f.MaxOutValues(maxBlock * ch)
	dout := devBuf(t, maxOut+4)
	host := make([]float32, hist+maxBlock*ch)
	got := make([]float32, maxOut+4)
	var outs [][]float32
	for pos, i := 0, 0; pos < len(x)/ch; i++ {
		n, changes := nextBlock(blocks, i, pos, len(x)/ch, tunes)
		if changes != nil {
			if err := f.Retune(cudrv.Stream{}, changes); err != nil {
				t.Fatalf("retune at %d: %v", pos, err)
			}
		}
		copy(host[hist:], x[pos*ch:(pos+n)*ch])
		toDev(t, din, host[:hist+n*ch])
		if err := cudrv.MemsetD32(dout, 0xffffffff, int64(maxOut+4)); err != nil { // NaN
			t.Fatal(err)
		}
		k, err := f.Launch(cudrv.Stream{}, din, dout, n*ch)
		if err != nil {
			t.Fatal(err)
		}
		if k > f.MaxOutValues(n*ch) {
			t.Fatalf("block %d: %d outputs > MaxOutValues %d", i, k, f.MaxOutValues(n*ch))
		}
		if err := cudrv.Synchronize(); err != nil {
			t.Fatalf("block %d: kernel: %v", i, err)
		}
		fromDev(t, got, dout)
		for j := k; j < len(got); j++ {
			if !math.IsNaN(float64(got[j])) {
				t.Fatalf("block %d: value %d past the %d outputs was written (%v)", i, j, k, got[j])
			}
		}
		outs = append(outs, append([]float32(nil), got[:k]...))
		// The history of the next block: the last hist values of this one.
		copy(host, host[n*ch:hist+n*ch])
		pos += n
	}
	return outs
}

// chainPTX is the PTX file the tests load: from SIGPROC_PTX_DIR when set,
// else the embedded one.
func chainPTX() string { return cudrv.PTXFile(os.Getenv("SIGPROC_PTX_DIR"), "chain.ptx") }

func TestChainFilterMatchesCPU(t *testing.T) {
	withBatchContextRun(t, func(ctx *cudrv.Context) {
		r := rand.New(rand.NewPCG(16, 1))
		for _, tc := range chainCases(r) {
			c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Stages: tc.stages, Channels: tc.channels}
			x := randSignal(r, tc.total*pipeline.FrameValues(c.ChannelCount(), tc.complex))
			maxBlock := 0
			for _, b := range tc.blocks {
				maxBlock = max(maxBlock, b)
			}
			want := cpuChain(t, c, x, tc.blocks, maxBlock)
			for _, mode := range chainModes {
				if testing.Short() && tc.total >= 60000 && mode != "tiled" {
					continue // the largest banks once under -short (gpu-check's memcheck of the whole binary)
				}
				runOnContext(t, ctx, fmt.Sprintf("%s/complex=%v/%s", tc.name, tc.complex, mode), func(t *testing.T) {
					got := gpuChain(t, c, x, tc.blocks, maxBlock, mode)
					compareChain(t, got, want, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
				})
			}
		}
	})
}

// TestChainShiftPhaseAtLargeIndex: the shift's phase at samples past 10⁹
// against the closed form exp(j·2π·(n·f mod fs)/fs) in exact integer
// arithmetic: no drift, error at float32 rounding.
func TestChainShiftPhaseAtLargeIndex(t *testing.T) {
	withBatchContext(t, func() {
		const fs, f = 2_000_000, -250_001
		c := stage.Chain{SampleRate: fs, Complex: true, Stages: []stage.Stage{shiftStage(f)}}
		const n = 4096
		filt, err := NewChainFilter(c, n, chainPTX())
		if err != nil {
			t.Fatal(err)
		}
		defer filt.Close()
		x := make([]float32, 2*n)
		for i := range n {
			x[2*i] = 1 // ones: the output is the rotation itself
		}
		din, dout := devBuf(t, 2*n), devBuf(t, 2*n)
		toDev(t, din, x)
		got := make([]float32, 2*n)
		for _, start := range []int64{0, 1_000_000_007, 1 << 40} {
			filt.ops[0].t = start
			if _, err := filt.Launch(cudrv.Stream{}, din, dout, 2*n); err != nil {
				t.Fatal(err)
			}
			if err := cudrv.Synchronize(); err != nil {
				t.Fatal(err)
			}
			fromDev(t, got, dout)
			worst := 0.0
			for i := range n {
				k := uint64(start + int64(i))
				hi, lo := bits.Mul64(k%fs, uint64(f+fs)) // f mod fs ≥ 0
				_, rem := bits.Div64(hi, lo, fs)
				s, co := math.Sincos(2 * math.Pi * float64(rem) / fs)
				worst = max(worst, math.Hypot(float64(got[2*i])-co, float64(got[2*i+1])-s))
			}
			t.Logf("start %d: worst error %.2g", start, worst)
			if worst > 1e-6 {
				t.Errorf("start %d: rotation off by %g (want <= 1e-6 of the unit signal)", start, worst)
			}
		}
	})
}

// TestChainBackendMatchesCPU runs chains through pipeline.Run on the
// explicit transports (and auto, which picks explicit for stages) and the
// zero-copy one (its persistent chain kernels), against the CPU backend on
// the same stream.
func TestChainBackendMatchesCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for _, tc := range []struct {
		name    string
		complex bool
		stages  []stage.Stage
		block   int
		total   int
		nch     int
	}{
		{"fir129/8", false, []stage.Stage{firStage(randSignal(r, 129), 8)}, 1001, 1001*20 + 77, 1},
		{"shift+fir129/8", true, []stage.Stage{shiftStage(-250000), firStage(randSignal(r, 129), 8)}, 4099, 4099*12 + 5, 1},
		{"shift+fir129/8 real", false, []stage.Stage{shiftStage(-250000), firStage(randSignal(r, 129), 8)}, 333, 333 * 50, 1},
		{"resample48x3/2", true, []stage.Stage{resStage(randSignal(r, 48), 3, 2)}, 1025, 1025*10 + 3, 1},
		{"shift+fir65/4+resample48x3/2", true, []stage.Stage{shiftStage(123456), firStage(randSignal(r, 65), 4), resStage(randSignal(r, 48), 3, 2)}, 8191, 8191 * 9, 1},
		{"shift+bank64/32x1000+select", true, []stage.Stage{shiftStage(-123457), stage.NewChannelize(randSignal(r, 1000), 64, 32), stage.NewSelect(5, 63, 0)}, 4099, 4099*12 + 5, 1},
		{"bank16/16x100 real", false, []stage.Stage{stage.NewChannelize(randSignal(r, 100), 16, 16)}, 333, 333 * 50, 1},
		{"bank64/32x1000+select+fir33/2", true, []stage.Stage{stage.NewChannelize(randSignal(r, 1000), 64, 32), stage.NewSelect(5, 63, 0), firStage(randSignal(r, 33), 2)}, 4099, 4099*12 + 5, 1},
		{"3ch/shift+fir129/8", true, []stage.Stage{shiftStage(-250000), firStage(randSignal(r, 129), 8)}, 1001, 1001*20 + 77, 3},
		{"2ch/resample48x3/2 real", false, []stage.Stage{resStage(randSignal(r, 48), 3, 2)}, 1025, 1025*10 + 3, 2},
		// Blocks shorter than the factor: some give no output at all.
		{"fir33/8 blocks of 5", false, []stage.Stage{firStage(randSignal(r, 33), 8)}, 5, 5*40 + 3, 1},
		{"shift+shift+resample7x160/147", true, []stage.Stage{shiftStage(1000), shiftStage(-3e5), resStage(randSignal(r, 7*160), 160, 147)}, 2048, 2048 * 6, 1},
	} {
		c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Stages: tc.stages, Channels: tc.nch}
		x := randSignal(r, tc.total*pipeline.FrameValues(tc.nch, tc.complex))
		cfg := pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.nch, Slots: 8, OutChannels: c.OutChannels(), OutComplex: c.OutComplex()}
		ref, err := cpu.New(c, tc.block)
		if err != nil {
			t.Fatal(err)
		}
		want := &collect{}
		if _, err := pipeline.Run(context.Background(), &sliceSource{x: x}, ref, want, cfg, pipeline.Options{}); err != nil {
			t.Fatalf("%s: cpu: %v", tc.name, err)
		}
		_ = ref.Close()
		for _, tr := range []Transport{TransportExplicit, TransportExplicitPageable, TransportAuto, TransportZeroCopy} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, tr), func(t *testing.T) {
				be, err := NewChainBackend(c, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				got := &collect{}
				_, err = pipeline.Run(context.Background(), &sliceSource{x: x}, be, got, cfg, pipeline.Options{})
				if cb, ok := be.(*chainBackend); ok {
					if tp, ok := cb.Backend.(*backend); ok && (tp.transport == TransportZeroCopy) != (tr == TransportZeroCopy) {
						t.Errorf("transport %s ran the chain on %s", tr, tp.transport)
					}
				}
				if cerr := be.Close(); cerr != nil {
					t.Errorf("close: %v", cerr)
				}
				if err != nil {
					t.Fatal(err)
				}
				compareChain(t, [][]float32{got.got}, [][]float32{want.got}, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
			})
		}
	}
}

// TestChainMemcheck is a small chain of every kernel, for
// compute-sanitizer (scripts/gpu-check.sh).
func TestChainMemcheck(t *testing.T) {
	withBatchContext(t, func() {
		r := rand.New(rand.NewPCG(16, 3))
		for _, cplx := range []bool{false, true} {
			c := stage.Chain{SampleRate: 1e6, Complex: cplx, Stages: []stage.Stage{
				shiftStage(1000), firStage(randSignal(r, 17), 3), resStage(randSignal(r, 10), 3, 2), shiftStage(-5),
			}}
			x := randSignal(r, 500*channels(cplx))
			blocks := []int{37, 64, 1}
			want := cpuChain(t, c, x, blocks, 64)
			for _, mode := range chainModes {
				compareChain(t, gpuChain(t, c, x, blocks, 64, mode), want, channels(c.OutComplex()))
			}
			// The filter bank, power of two and not (M 64 and 1024 run
			// rounds with barriers between them), a select fused in and
			// stages after it on each kept channel, fused and split.
			for _, bank := range [][]stage.Stage{
				{shiftStage(1000), stage.NewChannelize(randSignal(r, 37), 8, 4), stage.NewSelect(7, 0), firStage(randSignal(r, 5), 2), shiftStage(-7)},
				{stage.NewChannelize(randSignal(r, 20), 6, 3)},
				{stage.NewChannelize(randSignal(r, 200), 64, 16)},
				{stage.NewChannelize(randSignal(r, 3000), 1024, 256)},
				{stage.NewChannelize(randSignal(r, 200), 64, 64)},
			} {
				c := stage.Chain{SampleRate: 1e6, Complex: cplx, Stages: bank}
				want := cpuChain(t, c, x, blocks, 64)
				for _, mode := range []string{"perclass", "direct"} { // fused, split
					compareChain(t, gpuChain(t, c, x, blocks, 64, mode), want, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
				}
			}
			// Frame pairs at 4096 channels (72 KiB a block): blocks that
			// end mid-pair, so that a pair's second frame lies past the input.
			c = stage.Chain{SampleRate: 1e6, Complex: cplx, Stages: []stage.Stage{stage.NewChannelize(randSignal(r, 3*4096-5), 4096, 4096)}}
			xw := randSignal(r, 5*4096*channels(cplx))
			wblocks := []int{4097, 8191, 1}
			want = cpuChain(t, c, xw, wblocks, 8192)
			for _, mode := range []string{"perclass", "direct"} {
				compareChain(t, gpuChain(t, c, xw, wblocks, 8192, mode), want, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
			}
		}
	})
}
