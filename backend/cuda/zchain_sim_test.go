package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestZCChainSim runs the zero-copy chain kernels (kernels/zchain.cu) in
// their host simulator (kernels/sim/zchain.cpp: the launch's threads as
// coroutines, its barriers and warp shuffles checked, four thread orders
// that must agree) on what the transport would hand them: planZCChain's
// ops, taps and sizes, a parameter block and input words written by
// zcRetune as the ring's hooks write them, retunes included. The output,
// block by block, must be the CPU backend's within the GPU tests'
// tolerance, every word tagged with its block, in as many values as
// blockOut counts. `make kernel-sim` builds the simulator and runs this
// with SIGPROC_ZCHAIN_SIM naming it; without it the test is skipped.
// Memory ordering and the PCIe protocol are the GPU's to check
// (scripts/gpu-check.sh).
func TestZCChainSim(t *testing.T) {
	sim := os.Getenv("SIGPROC_ZCHAIN_SIM")
	if sim == "" {
		t.Skip("SIGPROC_ZCHAIN_SIM is not set (make kernel-sim builds the simulator and sets it)")
	}
	r := rand.New(rand.NewPCG(31, 7))
	taps := func(n int) []float32 { return randSignal(r, n) }
	shift := func(i int, hz float64) stage.Retune { return stage.Retune{Index: i, Stage: shiftStage(hz)} }
	fir := func(i, n, m int) stage.Retune { return stage.Retune{Index: i, Stage: firStage(taps(n), m)} }
	bank := func(i, n, m, d int) stage.Retune {
		return stage.Retune{Index: i, Stage: stage.NewChannelize(taps(n), m, d)}
	}
	// Retunes come at block boundaries (blockTunes' gates), at most two
	// (see the retune below).
	for _, tc := range []struct {
		name     string
		complex  bool
		channels int
		block    int
		stages   []stage.Stage
		tunes    []chainTune
	}{
		{"shift+fir129/8", true, 1, 1000, []stage.Stage{shiftStage(-250000), firStage(taps(129), 8)},
			[]chainTune{{4000, []stage.Retune{shift(0, 123456.5)}}, {7000, []stage.Retune{fir(1, 400, 8), shift(0, 777)}}}},
		{"shift+fir129/8 real", false, 1, 1000, []stage.Stage{shiftStage(-250000), firStage(taps(129), 8)},
			[]chainTune{{3000, []stage.Retune{fir(1, 100, 8)}}}},
		{"fir33 real odd block", false, 1, 97, []stage.Stage{firStage(taps(33), 1)},
			[]chainTune{{485, []stage.Retune{fir(0, 7, 1)}}}},
		{"3ch/shift+fir65/4", true, 3, 512, []stage.Stage{shiftStage(1000), firStage(taps(65), 4)},
			[]chainTune{{2048, []stage.Retune{shift(0, -77777), fir(1, 60, 4)}}}},
		{"2ch/shift", false, 2, 300, []stage.Stage{shiftStage(1e3)}, nil},
		{"fir31/4+shift", true, 1, 1000, []stage.Stage{firStage(taps(31), 4), shiftStage(12345)}, nil},
		{"shift+shift+resample3/2", true, 3, 250, []stage.Stage{shiftStage(1e3), shiftStage(-1e3), resStage(taps(48), 3, 2)}, nil},
		{"fir/4+resample160/147+shift", false, 1, 1000, []stage.Stage{firStage(taps(129), 4), resStage(taps(48), 160, 147), shiftStage(10)}, nil},
		{"resample3/2 real", false, 1, 333, []stage.Stage{resStage(taps(48), 3, 2)}, nil},
		{"bank16/8x160", true, 1, 256, []stage.Stage{stage.NewChannelize(taps(160), 16, 8)},
			[]chainTune{{768, []stage.Retune{bank(0, 100, 16, 8)}}, {1792, []stage.Retune{bank(0, 250, 16, 8)}}}},
		{"shift+bank16/8 real+select", false, 1, 200, []stage.Stage{shiftStage(1000), stage.NewChannelize(taps(150), 16, 8), stage.NewSelect(5, 3)},
			[]chainTune{{1000, []stage.Retune{shift(0, -3000), bank(1, 40, 16, 8)}}}},
		{"bank64/32x1000+select+fir33/2", true, 1, 1000, []stage.Stage{stage.NewChannelize(taps(1000), 64, 32), stage.NewSelect(5, 63, 0), firStage(taps(33), 2)}, nil},
		{"bank12/4x50", true, 1, 96, []stage.Stage{stage.NewChannelize(taps(50), 12, 4)}, nil},
		{"bank8/8+shift", false, 1, 64, []stage.Stage{stage.NewChannelize(taps(31), 8, 8), shiftStage(777)}, nil},
		{"bank4/2 select all", true, 1, 10, []stage.Stage{stage.NewChannelize(taps(9), 4, 2), stage.NewSelect(0, 1, 2, 3)}, nil},
		{"shift+bank256/256x2048", true, 1, 512, []stage.Stage{shiftStage(-3000), stage.NewChannelize(taps(2048), 256, 256)},
			[]chainTune{{2048, []stage.Retune{bank(1, 3000, 256, 256), shift(0, 5000)}}}},
		// Every op retuned at once: the kernel reloads op k on thread k.
		{"shift+bank16/8+select+fir33/2+shift", true, 1, 400, []stage.Stage{shiftStage(-3000), stage.NewChannelize(taps(160), 16, 8), stage.NewSelect(5, 3, 11), firStage(taps(33), 2), shiftStage(500)},
			[]chainTune{{1200, []stage.Retune{shift(0, 4000), bank(1, 250, 16, 8), fir(3, 20, 2), shift(4, -700)}}, {2800, []stage.Retune{bank(1, 60, 16, 8), fir(3, 64, 2)}}}},
		{"fir+bank8/4+resample", true, 1, 200, []stage.Stage{firStage(taps(21), 2), stage.NewChannelize(taps(77), 8, 4), resStage(taps(30), 3, 2)},
			[]chainTune{{600, []stage.Retune{fir(0, 40, 2), bank(1, 33, 8, 4)}}}},
		// Lanes sharing an item (G > 1): a bank's sums over long branches
		// of a small block, its DFT over many channels kept few.
		{"bank4/4x400, 16-frame blocks", true, 1, 16, []stage.Stage{stage.NewChannelize(taps(400), 4, 4)},
			[]chainTune{{64, []stage.Retune{bank(0, 1000, 4, 4)}}}},
		{"bank64/64+select, 64-frame blocks", true, 1, 64, []stage.Stage{stage.NewChannelize(taps(640), 64, 64), stage.NewSelect(1, 7)}, nil},
		// More input pairs than threads: each polls several.
		{"bank32/16 real+select, 3000-frame blocks", false, 1, 3000, []stage.Stage{stage.NewChannelize(taps(300), 32, 16), stage.NewSelect(0, 31)}, nil},
		{"bank12/3x121", true, 1, 37, []stage.Stage{stage.NewChannelize(taps(121), 12, 3)}, nil},
		{"bank2/1 real", false, 1, 5, []stage.Stage{stage.NewChannelize(taps(7), 2, 1)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const blocks = 10
			c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Channels: tc.channels, Stages: tc.stages}
			p, err := planZCChain(c, tc.block, 0)
			if err != nil {
				t.Fatal(err)
			}
			l := pipeline.Layout{BlockSize: tc.block, Channels: p.inCh, Slots: blocks}
			inWords, outWords := evenWords(l), p.outWords()
			x := randSignal(r, blocks*tc.block*p.inCh)

			// The parameter block and the input words, as the transport
			// writes them: each retune's image flipped in before the block
			// at its gate, whose tag then carries the new parity.
			img, err := p.image(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			params := make([]float32, paramFloats(p.imageLen))
			var z zcRetune
			z.init(unsafe.Pointer(&params[0]), p.imageLen, img)
			in := make([]uint64, blocks*inWords)
			cur, tune := c, 0
			for i := range blocks {
				if tune < len(tc.tunes) && tc.tunes[tune].gate == i*tc.block {
					next, changes, err := checkRetunes(cur, tc.tunes[tune].changes)
					if err != nil {
						t.Fatal(err)
					}
					img, err := p.image(next, changes)
					if err != nil {
						t.Fatal(err)
					}
					// The simulator's parameter block is written before it runs:
					// a retune that must wait for the kernel would overwrite
					// a buffer a block before it still reads.
					at, err := z.retune(img, func(int64) error {
						t.Fatal("a third retune: the buffer it writes is one an earlier block reads")
						return nil
					})
					if err != nil || at != int64(i*tc.block) {
						t.Fatalf("retune %d: at %d, %v; want %d", tune, at, err, i*tc.block)
					}
					cur, tune = next, tune+1
				}
				v := x[i*tc.block*p.inCh:][:tc.block*p.inCh]
				tagged.Write(in[i*inWords:][:inWords], v, z.published(uint64(i), tc.block))
			}
			if tune != len(tc.tunes) {
				t.Fatalf("retune %d at %d is not at a block's start", tune, tc.tunes[tune].gate)
			}

			out := runZCChainSim(t, sim, p, l, z.tcap, params, in)
			var got [][]float32
			for i := range blocks {
				nv := p.blockOut(tc.block) * p.outCh
				if nv > outWords {
					t.Fatalf("block %d: %d output values, the slot holds %d words", i, nv, outWords)
				}
				b := make([]float32, nv)
				for j, w := range out[i*outWords:][:nv] {
					if tag := uint32(w >> 32); tag != uint32(i+1) {
						t.Fatalf("block %d: word %d of %d tagged %#x, want %d", i, j, nv, tag, i+1)
					}
					b[j] = math.Float32frombits(uint32(w))
				}
				got = append(got, b)
			}
			if hb := out[len(out)-1]; hb != blocks {
				t.Errorf("heartbeat %d, want %d", hb, blocks)
			}
			compareChain(t, got, cpuChain(t, c, x, []int{tc.block}, tc.block, tc.tunes...), p.outCh)
		})
	}
}

// runZCChainSim writes p's launch on l's ring (a slot a block: in's
// words) with the parameter block params (ptcap floats of taps a buffer)
// for the chain simulator sim, runs it, and returns the output ring's
// words and then the kernel's heartbeat.
func runZCChainSim(t *testing.T, sim string, p *zcChain, l pipeline.Layout, ptcap int, params []float32, in []uint64) []uint64 {
	t.Helper()
	b2i := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	hdr := []int64{int64(len(p.ops) / zcOpWords), int64(len(p.taps)), int64(l.BlockSize), int64(p.channels), b2i(p.inCplx),
		int64(l.Slots), int64(evenWords(l)), int64(p.outWords()), b2i(p.outCplx), int64(p.stageOff), int64(p.smemFloats),
		int64(ptcap), 1, int64(zcChainThreads(evenWords(l)))}
	return runSim(t, sim, []any{hdr, p.ops, p.taps, params, in}, l.Slots*p.outWords()+1)
}

// runSim writes a launch of parts (little-endian) for the simulator sim,
// runs it, logs what it printed, and returns the n words it wrote.
func runSim(t *testing.T, sim string, parts []any, n int) []uint64 {
	t.Helper()
	var buf []byte
	for _, part := range parts {
		var err error
		if buf, err = binary.Append(buf, binary.LittleEndian, part); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	launch, outPath := filepath.Join(dir, "launch"), filepath.Join(dir, "out")
	if err := os.WriteFile(launch, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := exec.Command(sim, launch, outPath).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", sim, err, msg)
	}
	t.Logf("%s", bytes.TrimSpace(msg))
	raw, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 8*n {
		t.Fatalf("simulator wrote %d bytes, want %d", len(raw), 8*n)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return out
}

// TestZCFIRSim runs the zero-copy FIR kernels (kernels/fir.cu) in their host
// simulator (kernels/sim/firp.cpp, as TestZCChainSim's) on what
// zeroCopy.setup would launch: persistentGeometry's threads and split (or a
// forced split), retuneCapacity's history, a parameter block and input
// words written by zcRetune, every block in the ring before the kernel
// starts (the most the host can run ahead of it). The output, block by
// block, must be the CPU backend's FIR within the GPU tests' tolerance,
// every word tagged with its block. SIGPROC_FIRP_SIM names the simulator
// (make kernel-sim); without it the test is skipped.
func TestZCFIRSim(t *testing.T) {
	sim := os.Getenv("SIGPROC_FIRP_SIM")
	if sim == "" {
		t.Skip("SIGPROC_FIRP_SIM is not set (make kernel-sim builds the simulator and sets it)")
	}
	const optin = 227 << 10 // the H100's and H200's shared memory a block
	r := rand.New(rand.NewPCG(32, 8))
	for _, tc := range []struct {
		name       string
		complex    bool
		channels   int
		block      int
		ntaps      int
		split      int // 0: persistentGeometry's
		retuneAt   int // block; 0: none
		retuneTaps int
	}{
		{"64 taps, 256 real (the latency probe)", false, 1, 256, 64, 0, 4, 129},
		{"129 taps, 2048 complex", true, 1, 2048, 129, 0, 3, 64},
		{"1 tap, 7 real (a pad word)", false, 1, 7, 1, 0, 0, 0},
		{"1000 taps, 600 real, to 10", false, 1, 600, 1000, 0, 5, 10},
		{"65 taps, 3 real channels", false, 3, 100, 65, 0, 2, 66},
		{"33 taps, 2 complex channels", true, 2, 256, 33, 0, 6, 200},
		{"17 taps, 8 real channels", false, 8, 64, 17, 0, 0, 0},
		{"5 taps, 16 real channels", false, 16, 32, 5, 0, 0, 0},
		{"40 taps, 3 complex channels", true, 3, 50, 40, 0, 1, 41},
		{"129 taps, 256 real, split 32", false, 1, 256, 129, 32, 7, 3},
		{"64 taps, 256 complex, split 1", true, 1, 256, 64, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const blocks = 10
			taps, newTaps := randSignal(r, tc.ntaps), randSignal(r, tc.retuneTaps)
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			l := pipeline.Layout{BlockSize: tc.block, Channels: lanes, Slots: blocks}
			words := evenWords(l)
			hcap := retuneCapacity(tc.ntaps, tc.block, lanes, optin)
			threads, split := persistentGeometry(words/2, tc.ntaps, tc.split)
			x := randSignal(r, blocks*tc.block*lanes)
			params := make([]float32, paramFloats(hcap))
			var z zcRetune
			z.init(unsafe.Pointer(&params[0]), hcap, taps)
			in := make([]uint64, blocks*words)
			var tunes []chainTune
			for i := range blocks {
				if tc.retuneAt > 0 && i == tc.retuneAt {
					if at, err := z.retune(newTaps, func(int64) error { return nil }); err != nil || at != int64(i*tc.block) {
						t.Fatalf("retune: at %d, %v; want %d", at, err, i*tc.block)
					}
					tunes = append(tunes, chainTune{i * tc.block, []stage.Retune{{Index: 0, Stage: firStage(newTaps, 1)}}})
				}
				tagged.Write(in[i*words:][:words], x[i*tc.block*lanes:][:tc.block*lanes], z.published(uint64(i), tc.block))
			}
			hdr := []int64{int64(tc.ntaps), int64(tc.block), int64(lanes), blocks, int64(split), int64(hcap), int64(threads),
				int64(persistentSmem(hcap, tc.block, lanes) / 4), int64(words)}
			out := runSim(t, sim, []any{hdr, taps, params, in}, blocks*words+1)
			var got [][]float32
			for i := range blocks {
				b := make([]float32, tc.block*lanes)
				for j, w := range out[i*words:][:len(b)] {
					if tag := uint32(w >> 32); tag != uint32(i+1) {
						t.Fatalf("block %d: word %d tagged %#x, want %d", i, j, tag, i+1)
					}
					b[j] = math.Float32frombits(uint32(w))
				}
				got = append(got, b)
			}
			if hb := out[len(out)-1]; hb != blocks {
				t.Errorf("heartbeat %d, want %d", hb, blocks)
			}
			c := stage.Chain{SampleRate: 1e6, Complex: tc.complex, Channels: tc.channels, Stages: []stage.Stage{firStage(taps, 1)}}
			compareChain(t, got, cpuChain(t, c, x, []int{tc.block}, tc.block, tunes...), lanes)
		})
	}
}
