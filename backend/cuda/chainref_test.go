package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// The CPU reference of the chain tests, shared by the GPU's (cuda build)
// and the zero-copy chain kernel's host simulation (TestZCChainSim).

// Tolerance of the chain tests: the largest difference between the GPU
// and the CPU backend, relative to the RMS of the CPU output. Both sum
// in float32 (in different orders) and the shift takes its rotations from
// sincospif on the GPU and a table on the CPU: about 1e-7 each.
const chainTol = 1e-5

func shiftStage(f float64) stage.Stage { return stage.Stage{Kind: stage.KindShift, FrequencyHz: f} }

func firStage(taps []float32, m int) stage.Stage {
	return stage.Stage{Kind: stage.KindFIR, Taps: taps, Decimate: m}
}

func resStage(taps []float32, l, m int) stage.Stage {
	return stage.Stage{Kind: stage.KindResample, Taps: taps, Up: l, Down: m}
}

// chainTune is a retune of a chain at an input frame: the tests end a
// block there and apply the changes before the next one.
type chainTune struct {
	gate    int
	changes []stage.Retune
}

// nextBlock returns the frames of block i at frame pos of n, cut at the
// next gate, and the changes to apply before it (at a gate).
func nextBlock(blocks []int, i, pos, n int, tunes []chainTune) (int, []stage.Retune) {
	k := min(blocks[i%len(blocks)], n-pos)
	var changes []stage.Retune
	for _, tu := range tunes {
		switch {
		case tu.gate == pos:
			changes = append(changes, tu.changes...)
		case tu.gate > pos:
			k = min(k, tu.gate-pos)
		}
	}
	return k, changes
}

// cpuChain runs the case on the CPU backend's chain, block by block, and
// returns every block's output; each tune's changes apply from its gate.
func cpuChain(t *testing.T, c stage.Chain, x []float32, blocks []int, maxBlock int, tunes ...chainTune) [][]float32 {
	t.Helper()
	ref, err := cpu.NewChain(c, maxBlock)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ch := pipeline.FrameValues(c.ChannelCount(), c.Complex)
	outCh := pipeline.FrameValues(c.OutChannels(), c.OutComplex())
	var outs [][]float32
	buf := make([]float32, ref.MaxOut(maxBlock)*outCh)
	for pos, i := 0, 0; pos < len(x)/ch; i++ {
		n, changes := nextBlock(blocks, i, pos, len(x)/ch, tunes)
		for _, r := range changes {
			p, err := ref.Prepare(r.Index, r.Stage)
			if err != nil {
				t.Fatalf("cpu: retune at %d: %v", pos, err)
			}
			ref.Apply(p)
		}
		k, err := ref.Process(buf, x[pos*ch:(pos+n)*ch])
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, append([]float32(nil), buf[:k]...))
		pos += n
	}
	return outs
}

// compareChain checks the GPU's blocks against the CPU's: the same output
// count for every block, and values within chainTol of the output RMS.
// On a mismatch it logs where and what.
func compareChain(t *testing.T, got, want [][]float32, outCh int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d", len(got), len(want))
	}
	var g, w []float32
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("block %d: %d output values, want %d (CPU)", i, len(got[i]), len(want[i]))
		}
		g, w = append(g, got[i]...), append(w, want[i]...)
	}
	e := filter.MaxErrRMS(g, w)
	if e <= chainTol {
		t.Logf("%d output values, max error %.2g of the RMS", len(w), e)
		return
	}
	var ss float64
	for _, v := range w {
		ss += float64(v) * float64(v)
	}
	rms := math.Sqrt(ss / float64(max(1, len(w))))
	bad := 0
	for i := range w {
		if d := math.Abs(float64(g[i]) - float64(w[i])); !(d <= chainTol*rms) {
			if bad < 12 {
				t.Logf("value %d (sample %d, part %d): got %.7g want %.7g", i, i/outCh, i%outCh, g[i], w[i])
			}
			bad++
		}
	}
	t.Fatalf("max error %g of the RMS %.4g > %g; %d of %d values off", e, rms, chainTol, bad, len(w))
}

func randSignal(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}
