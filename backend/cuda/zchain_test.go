package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestPlanZCChain: the persistent chain kernel's ops for each chain the
// zero-copy transport takes (a shift fused into the filter after it, a
// shift on its own as the identity filter), their shared memory, and the
// host's output counts block by block (blockOut), which must be the
// chain's own for any split of the stream into blocks. No GPU needed.
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
		{"shift+bank16/16 real", false, 1, []stage.Stage{stage.NewShift(1e3), stage.NewChannelize(taps[:100], 16, 16)}, 1, []bool{true}, true},
		{"bank16/8+select+fir/2", true, 1, []stage.Stage{stage.NewChannelize(taps, 16, 8), stage.NewSelect(5, 3), stage.NewFIR(taps[:33], 2)}, 2, []bool{false, false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Channels: tc.nch, Stages: tc.stages}
			const block = 1000
			p, err := planZCChain(c, block, 0)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.ops) / zcOpWords; n != tc.ops {
				t.Fatalf("%d ops, want %d", n, tc.ops)
			}
			if p.outCplx != tc.outCplx || p.outCplx != c.OutComplex() {
				t.Errorf("output complex %v, want %v (chain: %v)", p.outCplx, tc.outCplx, c.OutComplex())
			}
			if want := pipeline.FrameValues(c.OutChannels(), c.OutComplex()); p.outCh != want || p.maxOut != c.MaxOut(block) {
				t.Errorf("output frames of %d values, at most %d; want %d values, %d", p.outCh, p.maxOut, want, c.MaxOut(block))
			}
			end, tapsEnd := 0, 0
			// Room for the branches of each op, in the image as in shared memory.
			for k := range tc.ops {
				w := p.ops[k*zcOpWords:][:zcOpWords]
				if (w[zcOpShift] == 1) != tc.shifts[k] {
					t.Errorf("op %d: shift %d, want %v", k, w[zcOpShift], tc.shifts[k])
				}
				if k == 0 && w[zcOpShift] == 1 && w[zcOpDen] == 0 {
					t.Errorf("op 0: whole hertz at a whole rate (2 MS/s) without an exact ratio")
				}
				// Every branch inside the taps, every buffer after them and
				// the one before it, both inside the shared memory; a bank's
				// branches are its channels, and its twiddles and sums
				// follow its buffers.
				br, room := w[zcOpL], int64(zcChainRetuneTaps)
				if w[zcOpBank] > 0 {
					br, room = w[zcOpBank], zcBankRetuneTaps
				}
				if int(w[zcOpTaps]+br*w[zcOpQ]) > len(p.taps) || int(w[zcOpBuf]) < max(end, len(p.taps)) || w[zcOpBuf]%2 != 0 {
					t.Errorf("op %d: taps at %d (%d×%d of %d), buffer at %d after %d", k, w[zcOpTaps], br, w[zcOpQ], len(p.taps), w[zcOpBuf], end)
				}
				if want := w[zcOpQCap] - 1; w[zcOpBank] > 0 && w[zcOpHist] != w[zcOpQCap]*br-1 || w[zcOpBank] == 0 && w[zcOpHist] != want {
					t.Errorf("op %d: history %d samples, %d taps a branch of %d", k, w[zcOpHist], w[zcOpQCap], br)
				}
				// Its branches are its own stage's taps (the identity's: 1),
				// and lie in a parameter image as in shared memory, after the
				// headers: the kernel loads the image's branches in one pass.
				if w[zcOpTaps] != int64(tapsEnd) || w[zcOpPar]-w[zcOpTaps] != int64(zcParWords*2*tc.ops) {
					t.Errorf("op %d: taps at %d, in the image at %d; want %d and %d more", k, w[zcOpTaps], w[zcOpPar], tapsEnd, zcParWords*2*tc.ops)
				}
				if m := p.meta[k]; m.filterAt >= 0 {
					ntaps := int64(len(c.Stages[m.filterAt].Taps))
					if w[zcOpQ] != (ntaps+br-1)/br || w[zcOpQCap] < w[zcOpQ] || m.tune && w[zcOpQCap]*br < room {
						t.Errorf("op %d: %d taps as %d×%d, room for %d a branch", k, ntaps, br, w[zcOpQ], w[zcOpQCap])
					}
				}
				tapsEnd += int(br * w[zcOpQCap])
				end = int(w[zcOpBuf] + 2*w[zcOpBufLen])
				if w[zcOpBank] > 0 {
					if int(w[zcOpTw]) < end || w[zcOpU] < w[zcOpTw]+2*w[zcOpBank] || w[zcOpTw]%2 != 0 || w[zcOpU]%2 != 0 {
						t.Errorf("op %d: twiddles at %d, sums at %d, after its buffers' end %d", k, w[zcOpTw], w[zcOpU], end)
					}
					end = int(w[zcOpU] + 2*w[zcOpBank]*int64(c.Stages[p.meta[k].filterAt].MaxOut(block)))
				}
			}
			if end > p.stageOff || p.stageOff > p.smemFloats {
				t.Errorf("buffers end at %d, staging at %d, shared memory %d floats", end, p.stageOff, p.smemFloats)
			}
			// Pinned memory: both rings and both parameter images.
			l := pipeline.Layout{BlockSize: block, Channels: p.inCh, Slots: 8}
			if pin, err := zcChainPinned(c, l, 0); err != nil || pin < int64(8*(p.outWords()+evenWords(l))*8+2*p.imageLen*4) {
				t.Errorf("pinned %d bytes (%v), less than its rings and images", pin, err)
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

// TestPlanZCChainRefusals: a select not right after a channelize is
// refused with ErrChannels, more ops than the kernel holds with ErrStages.
func TestPlanZCChainRefusals(t *testing.T) {
	sel := stage.Chain{SampleRate: 1e6, Complex: true, Channels: 4, Stages: []stage.Stage{stage.NewSelect(1), stage.NewShift(1)}}
	if _, err := planZCChain(sel, 256, 0); !errors.Is(err, ErrChannels) {
		t.Errorf("select of 4 channels: %v, want ErrChannels", err)
	}
	long := stage.Chain{SampleRate: 1e6, Complex: true}
	for range zcMaxOps + 1 {
		long.Stages = append(long.Stages, stage.NewFIR([]float32{1, 1}, 1))
	}
	if _, err := planZCChain(long, 256, 0); !errors.Is(err, ErrStages) {
		t.Errorf("%d firs: %v, want ErrStages", zcMaxOps+1, err)
	}
}

// TestZCChainImage: a retune's parameter image holds each op's shift
// (exact ratio and cycles per sample) and taps per branch in its header,
// and its branches at the op's image offset; taps beyond the history an
// op keeps, and a resample's change, are refused.
func TestZCChainImage(t *testing.T) {
	taps := make([]float32, 129)
	for i := range taps {
		taps[i] = float32(i + 1)
	}
	c := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{stage.NewShift(-2.5e5), stage.NewFIR(taps, 8), stage.NewResample(taps[:48], 3, 2)}}
	p, err := planZCChain(c, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	newTaps := []float32{1, 2, 3, 4, 5, 6, 7}
	r := c.With(0, stage.NewShift(1e3)).With(1, stage.NewFIR(newTaps, 8))
	img, err := p.image(r, []stage.Retune{{Index: 0}, {Index: 1}})
	if err != nil {
		t.Fatal(err)
	}
	first := slices.Clone(img) // the plan reuses img's buffer
	word := func(k, i int) int64 {
		h := img[k*2*zcParWords+2*i:]
		return int64(math.Float32bits(h[0])) | int64(math.Float32bits(h[1]))<<32
	}
	// Op 0: the new shift (1 kHz at 2 MS/s is 1/2000 exactly) and 7 taps.
	if num, den, cps, q := word(0, 0), word(0, 1), math.Float64frombits(uint64(word(0, 2))), word(0, 3); num != 1 || den != 2000 || cps != 1e3/2e6 || q != 7 {
		t.Errorf("op 0 header: num %d den %d cps %g q %d, want 1, 2000, 5e-4, 7", num, den, cps, q)
	}
	w0 := p.ops[:zcOpWords]
	if got := img[w0[zcOpPar]:][:w0[zcOpQCap]]; !slices.Equal(got[:7], newTaps) || slices.ContainsFunc(got[7:], func(v float32) bool { return v != 0 }) {
		t.Errorf("op 0 branches %v, want the new taps then zeros", got[:9])
	}
	// Op 1: no shift, its 48 taps as 3 branches of 16, unchanged.
	w1 := p.ops[zcOpWords:][:zcOpWords]
	if word(1, 1) != 0 || word(1, 3) != 16 || !slices.Equal(img[w1[zcOpPar]:][:48], polyBranches(taps[:48], 3, 16)) {
		t.Errorf("op 1: den %d, q %d, branches differ", word(1, 1), word(1, 3))
	}
	long := make([]float32, zcChainRetuneTaps+1)
	if _, err := p.image(c.With(1, stage.NewFIR(long, 8)), []stage.Retune{{Index: 1}}); !errors.As(err, new(*stage.StageError)) {
		t.Errorf("%d taps: %v, want a StageError", len(long), err)
	}
	if _, err := p.image(c.With(2, stage.NewResample(taps[:30], 3, 2)), []stage.Retune{{Index: 2}}); !errors.Is(err, stage.ErrRetuneUnsupported) {
		t.Errorf("resample retune: %v, want ErrRetuneUnsupported", err)
	}
	// Each call rewrites the whole image: after the 129-tap chain's (and
	// the refused calls above), the 7-tap image is the first one again, no
	// branch of a longer filter left behind.
	if _, err := p.image(c, []stage.Retune{{Index: 1}}); err != nil {
		t.Fatal(err)
	}
	again, err := p.image(r, []stage.Retune{{Index: 0}, {Index: 1}})
	if err != nil || !slices.Equal(again, first) {
		t.Errorf("the reused image differs from the first (%v)", err)
	}
}

// TestZCChainImageBank: a channelize's retune image holds its new
// prototype as the bank's branches (tap p + qB in branch p), its taps per
// branch in the header; a prototype past its room (zcBankRetuneTaps) is a
// StageError naming that room, and a select does not retune.
func TestZCChainImageBank(t *testing.T) {
	taps := make([]float32, 100)
	for i := range taps {
		taps[i] = float32(i + 1)
	}
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewShift(1e3), stage.NewChannelize(taps, 16, 8), stage.NewSelect(3, 1)}}
	p, err := planZCChain(c, 256, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := p.ops[:zcOpWords]
	if n := len(p.ops) / zcOpWords; n != 1 || w[zcOpBank] != 16 || w[zcOpNKeep] != 2 || w[zcOpQCap]*16 < zcBankRetuneTaps || w[zcOpHist] != w[zcOpQCap]*16-1 {
		t.Fatalf("%d ops: bank %d keeping %d, %d taps a branch of room, history %d", n, w[zcOpBank], w[zcOpNKeep], w[zcOpQCap], w[zcOpHist])
	}
	if keep := p.taps[w[zcOpKeep]:][:2]; keep[0] != 3 || keep[1] != 1 {
		t.Errorf("kept channels %v, want [3 1]", keep)
	}
	proto := taps[:40]
	img, err := p.image(c.With(1, stage.NewChannelize(proto, 16, 8)), []stage.Retune{{Index: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if q := int64(math.Float32bits(img[6])) | int64(math.Float32bits(img[7]))<<32; q != 3 {
		t.Errorf("taps per branch %d, want 3 (40 taps in 16 branches)", q)
	}
	br := img[w[zcOpPar]:][:16*w[zcOpQCap]]
	if !slices.Equal(br[:16*3], polyBranches(proto, 16, 3)) || slices.ContainsFunc(br[16*3:], func(v float32) bool { return v != 0 }) {
		t.Errorf("branches %v, want the prototype's 16 branches of 3, then zeros", br[:16*3])
	}
	long := make([]float32, zcBankRetuneTaps+1)
	_, err = p.image(c.With(1, stage.NewChannelize(long, 16, 8)), []stage.Retune{{Index: 1}})
	if se := new(stage.StageError); !errors.As(err, &se) || !strings.Contains(se.Msg, "4096") {
		t.Errorf("%d taps: %v, want a StageError naming the room of 4096", len(long), err)
	}
	if _, err := p.image(c, []stage.Retune{{Index: 2}}); !errors.Is(err, stage.ErrRetuneUnsupported) {
		t.Errorf("select retune: %v, want ErrRetuneUnsupported", err)
	}
}

// BenchmarkZCChainImage times a retune's parameter image for
// configs/probe-chain.yaml's chain (shift + 129-tap FIR ÷8, 2048-sample
// complex blocks): the host's work in a chain retune call before the
// kernel is told.
func BenchmarkZCChainImage(b *testing.B) {
	taps := make([]float32, 129)
	for i := range taps {
		taps[i] = float32(i+1) / 129
	}
	c := stage.Chain{SampleRate: 102.4e6, Complex: true, Stages: []stage.Stage{stage.NewShift(-2e7), stage.NewFIR(taps, 8)}}
	p, err := planZCChain(c, 2048, 0)
	if err != nil {
		b.Fatal(err)
	}
	r := c.With(0, stage.NewShift(2e7))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.image(r, []stage.Retune{{Index: 0}}); err != nil {
			b.Fatal(err)
		}
	}
}
