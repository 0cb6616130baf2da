package cuda

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestPlanZCChain: the persistent chain kernel's ops for each chain the
// zero-copy transport takes (a shift fused into the filter after it, a
// shift on its own as the identity filter), their shared memory, and the
// output counts block by block, which must be the chain's own for any
// split of the stream into blocks. No GPU needed.
func TestPlanZCChain(t *testing.T) {
	taps := make([]float32, 129)
	for i := range taps {
		taps[i] = float32(i + 1)
	}
	for _, tc := range []struct {
		name    string
		complex bool
		nch     int
		stages  []stage.Stage
		ops     int
		shifts  []bool // per op: a shift fused in front
		outCplx bool
	}{
		{"fir/8", false, 1, []stage.Stage{stage.NewFIR(taps, 8)}, 1, []bool{false}, false},
		{"shift+fir/8", true, 1, []stage.Stage{stage.NewShift(-2.5e5), stage.NewFIR(taps, 8)}, 1, []bool{true}, true},
		{"shift+fir/8 real", false, 1, []stage.Stage{stage.NewShift(-2.5e5), stage.NewFIR(taps, 8)}, 1, []bool{true}, true},
		{"shift", false, 2, []stage.Stage{stage.NewShift(1e3)}, 1, []bool{true}, true},
		{"shift+shift+resample", true, 3, []stage.Stage{stage.NewShift(1e3), stage.NewShift(-1e3), stage.NewResample(taps, 3, 2)}, 2, []bool{true, true}, true},
		{"fir/4+resample+shift", false, 1, []stage.Stage{stage.NewFIR(taps, 4), stage.NewResample(taps[:48], 160, 147), stage.NewShift(10)}, 3, []bool{false, false, true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Channels: tc.nch, Stages: tc.stages}
			const block = 1000
			p, err := planZCChain(c, block)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.ops) / zcOpWords; n != tc.ops {
				t.Fatalf("%d ops, want %d", n, tc.ops)
			}
			if p.outCplx != tc.outCplx || p.outCplx != c.OutComplex() {
				t.Errorf("output complex %v, want %v (chain: %v)", p.outCplx, tc.outCplx, c.OutComplex())
			}
			if p.outCh != c.ChannelCount()*channels(c.OutComplex()) || p.maxOut != c.MaxOut(block) {
				t.Errorf("output frames of %d values, at most %d; want %d values, %d", p.outCh, p.maxOut,
					c.ChannelCount()*channels(c.OutComplex()), c.MaxOut(block))
			}
			end, tapsEnd := 0, 0
			for k := range tc.ops {
				w := p.ops[k*zcOpWords:][:zcOpWords]
				if (w[zcOpShift] == 1) != tc.shifts[k] {
					t.Errorf("op %d: shift %d, want %v", k, w[zcOpShift], tc.shifts[k])
				}
				if k == 0 && w[zcOpShift] == 1 && w[zcOpDen] == 0 {
					t.Errorf("op 0: whole hertz at a whole rate (2 MS/s) without an exact ratio")
				}
				// Every branch inside the taps, every buffer after them and
				// the one before it, both inside the shared memory.
				if int(w[zcOpTaps]+w[zcOpL]*w[zcOpQ]) > len(p.taps) || int(w[zcOpBuf]) < max(end, len(p.taps)) || w[zcOpBuf]%2 != 0 {
					t.Errorf("op %d: taps at %d (%d×%d of %d), buffer at %d after %d", k, w[zcOpTaps], w[zcOpL], w[zcOpQ], len(p.taps), w[zcOpBuf], end)
				}
				// Its branches are its own stage's taps (the identity's: 1).
				if w[zcOpTaps] != int64(tapsEnd) {
					t.Errorf("op %d: taps at %d, want %d (after the ops before it)", k, w[zcOpTaps], tapsEnd)
				}
				tapsEnd += int(w[zcOpL] * w[zcOpQ])
				end = int(w[zcOpBuf] + 2*w[zcOpBufLen])
			}
			if end > p.stageOff || p.stageOff > p.smemFloats {
				t.Errorf("buffers end at %d, staging at %d, shared memory %d floats", end, p.stageOff, p.smemFloats)
			}
			// Counts: random blocks (up to the planned block) against the
			// chain's count of the whole stream so far.
			r := rand.New(rand.NewPCG(1, uint64(tc.ops)))
			var in, out int64
			for range 500 {
				n := 1 + r.IntN(block)
				if r.IntN(4) == 0 {
					n = 1 + r.IntN(7)
				}
				in += int64(n)
				out += int64(p.blockOut(n))
				if want := c.Count(in); out != want {
					t.Fatalf("after %d inputs: %d outputs, want %d", in, out, want)
				}
			}
		})
	}
}

// TestPlanZCChainRefusals: a filter bank, and more ops than the kernel
// holds, are refused with ErrStages.
func TestPlanZCChainRefusals(t *testing.T) {
	bank := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewChannelize(make([]float32, 32), 16, 16)}}
	if _, err := planZCChain(bank, 256); !errors.Is(err, ErrStages) {
		t.Errorf("channelize: %v, want ErrStages", err)
	}
	long := stage.Chain{SampleRate: 1e6, Complex: true}
	for range zcMaxOps + 1 {
		long.Stages = append(long.Stages, stage.NewFIR([]float32{1, 1}, 1))
	}
	if _, err := planZCChain(long, 256); !errors.Is(err, ErrStages) {
		t.Errorf("%d firs: %v, want ErrStages", zcMaxOps+1, err)
	}
}
