//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// chainRetuneCases are chains with retunes of every kind the GPU takes:
// a shift (alone and fused into a filter), a decimating fir to fewer taps,
// as many and more, a channelizer's prototype to fewer and more, the
// stages after a bank's select, on one channel and on three.
func chainRetuneCases(r *rand.Rand) []struct {
	name     string
	complex  bool
	channels int
	stages   []stage.Stage
	tunes    []chainTune
} {
	taps := func(n int) []float32 { return randSignal(r, n) }
	shift := func(i int, hz float64) stage.Retune { return stage.Retune{Index: i, Stage: shiftStage(hz)} }
	fir := func(i, n, m int) stage.Retune { return stage.Retune{Index: i, Stage: firStage(taps(n), m)} }
	bank := func(i, n, m, d int) stage.Retune {
		return stage.Retune{Index: i, Stage: stage.NewChannelize(taps(n), m, d)}
	}
	type tc = struct {
		name     string
		complex  bool
		channels int
		stages   []stage.Stage
		tunes    []chainTune
	}
	var cs []tc
	for _, cplx := range []bool{false, true} {
		cs = append(cs,
			tc{"shift+fir129/8", cplx, 1, []stage.Stage{shiftStage(-250000), firStage(taps(129), 8)},
				// 3129: again as soon as the fir's history (128) is past 3001
				[]chainTune{{3001, []stage.Retune{shift(0, 123456.5)}}, {3129, []stage.Retune{shift(0, 777)}}, {7777, []stage.Retune{fir(1, 100, 8)}},
					{12000, []stage.Retune{shift(0, -1), fir(1, 129, 8), shift(0, 2)}},
					// More taps than it started with: its window at 13000, 399 back,
					// stays after the shift retune before the last (3129).
					{13000, []stage.Retune{fir(1, 400, 8)}}}},
			tc{"fir31/4+shift", cplx, 1, []stage.Stage{firStage(taps(31), 4), shiftStage(12345)},
				[]chainTune{{4097, []stage.Retune{shift(1, -54321)}}, {9000, []stage.Retune{fir(0, 31, 4)}}, {11001, []stage.Retune{fir(0, 600, 4)}}}},
			tc{"3ch/shift+fir65/4", cplx, 3, []stage.Stage{shiftStage(1000), firStage(taps(65), 4)},
				[]chainTune{{2049, []stage.Retune{shift(0, -77777), fir(1, 60, 4)}}}},
			tc{"bank64/32x1000+select+fir33/2", cplx, 1, []stage.Stage{stage.NewChannelize(taps(1000), 64, 32), stage.NewSelect(5, 63, 0), firStage(taps(33), 2)},
				[]chainTune{{5000, []stage.Retune{bank(0, 900, 64, 32)}}, {9001, []stage.Retune{fir(2, 33, 2), bank(0, 1024, 64, 32)}},
					{12001, []stage.Retune{bank(0, 3000, 64, 32), fir(2, 100, 2)}}}},
			// A shift fused into a filter after a bank: the history is the
			// op's own buffer. 4128: 16 samples of its input after 4000.
			tc{"bank16/8x160+select+shift+fir17/2", cplx, 1, []stage.Stage{stage.NewChannelize(taps(160), 16, 8), stage.NewSelect(5, 3), shiftStage(1000), firStage(taps(17), 2)},
				[]chainTune{{4000, []stage.Retune{shift(2, -3000)}}, {4128, []stage.Retune{shift(2, 500), bank(0, 150, 16, 8)}}, {9000, []stage.Retune{fir(3, 17, 2)}},
					// The fused fir grows to 41 taps: 40 back from 11000 (1375 of
					// its input) stays after the shift retune before the last (500).
					{11000, []stage.Retune{fir(3, 41, 2), bank(0, 1000, 16, 8)}}}},
			tc{"shift+bank1024/1024x32768", cplx, 1, []stage.Stage{shiftStage(-3000), stage.NewChannelize(taps(32768), 1024, 1024)},
				[]chainTune{{40000, []stage.Retune{bank(1, 30000, 1024, 1024), shift(0, 5000)}}}},
		)
	}
	return cs
}

// TestChainRetuneMatchesCPU: retunes applied by ChainFilter.Retune before
// the block at a gate give the CPU backend's output with the same retunes
// at the same input frame, block for block, in every kernel mode (a bank
// fused and split).
func TestChainRetuneMatchesCPU(t *testing.T) {
	withBatchContextRun(t, func(ctx *cudrv.Context) {
		r := rand.New(rand.NewPCG(44, 1))
		for _, tc := range chainRetuneCases(r) {
			c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Channels: tc.channels, Stages: tc.stages}
			x := randSignal(r, 16000*pipeline.FrameValues(tc.channels, tc.complex))
			if tc.name == "shift+bank1024/1024x32768" {
				if testing.Short() {
					continue // the largest bank not under -short (gpu-check's memcheck of the whole binary)
				}
				x = randSignal(r, 80000*pipeline.FrameValues(tc.channels, tc.complex))
			}
			blocks := []int{4099, 1000, 1}
			want := cpuChain(t, c, x, blocks, 4099, tc.tunes...)
			for _, mode := range chainModes {
				runOnContext(t, ctx, fmt.Sprintf("%s/complex=%v/%s", tc.name, tc.complex, mode), func(t *testing.T) {
					compareChain(t, gpuChain(t, c, x, blocks, 4099, mode, tc.tunes...), want, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
				})
			}
		}
	})
}

// TestChainRetuneRefusals: what a chain on the GPU does not retune is
// refused before anything changes: more taps than the history kept
// (ChainRetuneTaps, or the stage's own if more), a resample, a select of
// other channels (structure), and a fused shift's retunes too close
// together for its filter, or for a filter that grows.
func TestChainRetuneRefusals(t *testing.T) {
	withBatchContext(t, func() {
		r := rand.New(rand.NewPCG(44, 2))
		c := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{
			stage.NewChannelize(randSignal(r, 1000), 64, 32), stage.NewSelect(5, 63), firStage(randSignal(r, 33), 2), resStage(randSignal(r, 48), 3, 2)}}
		f, err := NewChainFilter(c, 1024, chainPTX())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var se *stage.StageError
		for _, tc := range []struct {
			name string
			r    stage.Retune
			ok   func(error) bool
		}{
			{"bank to 8193 taps (8192 kept)", stage.Retune{Index: 0, Stage: stage.NewChannelize(randSignal(r, ChainRetuneTaps+1), 64, 32)}, func(err error) bool { return errors.As(err, &se) }},
			{"bank to 8192 taps", stage.Retune{Index: 0, Stage: stage.NewChannelize(randSignal(r, ChainRetuneTaps), 64, 32)}, func(err error) bool { return err == nil }},
			{"fir to 8193 taps", stage.Retune{Index: 2, Stage: firStage(randSignal(r, ChainRetuneTaps+1), 2)}, func(err error) bool { return errors.As(err, &se) }},
			{"fir to 8192 taps", stage.Retune{Index: 2, Stage: firStage(randSignal(r, ChainRetuneTaps), 2)}, func(err error) bool { return err == nil }},
			{"resample", stage.Retune{Index: 3, Stage: resStage(randSignal(r, 48), 3, 2)}, func(err error) bool { return errors.Is(err, stage.ErrRetuneUnsupported) }},
			{"select, the same", stage.Retune{Index: 1, Stage: stage.NewSelect(5, 63)}, func(err error) bool { return errors.Is(err, stage.ErrRetuneUnsupported) }},
		} {
			if err := f.CheckRetune([]stage.Retune{tc.r}); !tc.ok(err) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
		// A shift fused into a 129-tap fir ÷8: again only once the fir's
		// history (128 samples) is past the last retune.
		c = stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{shiftStage(1000), firStage(randSignal(r, 129), 8)}}
		g, err := NewChainFilter(c, 1024, chainPTX())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		sh := func(hz float64) []stage.Retune { return []stage.Retune{{Index: 0, Stage: shiftStage(hz)}} }
		for _, tc := range []struct {
			at int64
			ok bool
		}{{1000, true}, {1000, true}, {1127, false}, {1128, true}, {1128, true}, {1200, false}} {
			if err := g.AcceptRetune(sh(float64(tc.at)), tc.at); (err == nil) != tc.ok || err != nil && !errors.Is(err, stage.ErrRetuneUnsupported) {
				t.Errorf("shift retune at %d: %v, want ok %v", tc.at, err, tc.ok)
			}
		}
		// The shift retuned at 1000 and 1128. The fir grows to 200 taps
		// only where 199 samples back is not before 1000; then the shift
		// waits for 199 samples, or 128 with the fir back at 129 taps in
		// the same change; a 4096-tap fir is refused until 4095 samples
		// after the shift retune before the last (1327).
		fir := func(n int) []stage.Retune { return []stage.Retune{{Index: 1, Stage: firStage(randSignal(r, n), 8)}} }
		for _, tc := range []struct {
			name    string
			changes []stage.Retune
			at      int64
			ok      bool
		}{
			{"fir 200 at 1198", fir(200), 1198, false},
			{"fir 200 at 1199", fir(200), 1199, true},
			{"shift at 1326", sh(1), 1326, false},
			{"shift at 1327", sh(1), 1327, true},
			// A shorter fir in the same change applies at the same block.
			{"shift and fir 129 at 1454", append(sh(2), fir(129)...), 1454, false},
			{"shift and fir 129 at 1455", append(sh(2), fir(129)...), 1455, true},
			{"fir 4096 at 5421", fir(4096), 5421, false},
			{"fir 4096 at 5422", fir(4096), 5422, true},
		} {
			if err := g.AcceptRetune(tc.changes, tc.at); (err == nil) != tc.ok || err != nil && !errors.Is(err, stage.ErrRetuneUnsupported) {
				t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
			}
		}
		// Behind a fir ÷4, chain frames 10 and 11 are the shift's input 3
		// both: one retune.
		c = stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{firStage(randSignal(r, 9), 4), shiftStage(1000), firStage(randSignal(r, 129), 1)}}
		h, err := NewChainFilter(c, 1024, chainPTX())
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		sh1 := []stage.Retune{{Index: 1, Stage: shiftStage(5)}}
		if err := h.AcceptRetune(sh1, 10); err != nil {
			t.Error(err)
		}
		if err := h.AcceptRetune(sh1, 11); err != nil {
			t.Errorf("the same input sample of the shift: %v", err)
		}
		if err := h.AcceptRetune(sh1, 14); !errors.Is(err, stage.ErrRetuneUnsupported) {
			t.Errorf("one sample of the shift later: %v, want ErrRetuneUnsupported", err)
		}
	})
}

// TestChainRetuneAtKnownBlock retunes a running chain through the backend
// (pipeline.Retuner) on both transports: the source stops at each gate, the
// test waits until the output of every frame before it has come back,
// retunes, and lets the source go on. The reported ChainAt is the gate, At
// the stage's own input index there, and the output equals the CPU
// backend's with the same retunes at the same frames.
func TestChainRetuneAtKnownBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 3))
	for _, tc := range chainRetuneCases(r) {
		if tc.name == "shift+bank1024/1024x32768" {
			continue
		}
		for _, tr := range []Transport{TransportExplicit, TransportZeroCopy} {
			name := fmt.Sprintf("%s/complex=%v/%s", tc.name, tc.complex, tr)
			tunes := tc.tunes
			if tr == TransportZeroCopy {
				// Its kernel takes whole blocks (a source fills every block
				// but the last, pipeline.Source), so its gates are too.
				tunes = blockTunes(tunes, 1000)
			}
			t.Run(name, func(t *testing.T) {
				const block = 1000
				c := stage.Chain{SampleRate: 2e6, Complex: tc.complex, Channels: tc.channels, Stages: tc.stages}
				lanes := pipeline.FrameValues(tc.channels, tc.complex)
				outV := pipeline.FrameValues(c.OutChannels(), c.OutComplex())
				x := randSignal(r, 16000*lanes)
				var gates []int
				src := &gatedSource{x: x, lanes: lanes}
				snk := &signalSink{}
				for _, tu := range tunes {
					gates = append(gates, tu.gate)
					src.release = append(src.release, make(chan struct{}))
					snk.marks = append(snk.marks, int(c.InputAt(len(c.Stages), int64(tu.gate)))*outV)
					snk.reached = append(snk.reached, make(chan struct{}))
				}
				src.gates = gates
				reached := append([]chan struct{}(nil), snk.reached...)
				be, err := NewChainBackend(c, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				rt := be.(pipeline.Retuner)
				if err := rt.(interface{ RetuneRefusal() error }).RetuneRefusal(); err != nil {
					t.Errorf("RetuneRefusal: %v", err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := pipeline.Run(context.Background(), src, be, snk,
						pipeline.Config{BlockSize: block, Complex: tc.complex, Channels: tc.channels, Slots: 8,
							OutChannels: c.OutChannels(), OutComplex: c.OutComplex()}, pipeline.Options{})
					done <- errors.Join(err, be.Close())
				}()
				for g, tu := range tunes {
					select {
					case <-reached[g]:
					case err := <-done:
						t.Fatalf("run ended before gate %d: %v", g, err)
					case <-time.After(20 * time.Second):
						t.Fatalf("gate %d (frame %d) not reached", g, tu.gate)
					}
					res, err := rt.Retune(tu.changes...)
					if err != nil {
						t.Fatalf("retune %d: %v", g, err)
					}
					for i, rr := range res {
						if want := c.InputAt(rr.Index, int64(tu.gate)); rr.ChainAt != int64(tu.gate) || rr.At != want {
							t.Fatalf("retune %d change %d: ChainAt %d At %d, want %d and %d", g, i, rr.ChainAt, rr.At, tu.gate, want)
						}
					}
					close(src.release[g])
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				want := cpuChain(t, c, x, []int{block}, block, tunes...)
				var w []float32
				for _, b := range want {
					w = append(w, b...)
				}
				compareChain(t, [][]float32{snk.got}, [][]float32{w}, outV)
			})
		}
	}
}

// blockTunes moves each retune to the first block boundary at or after
// its gate, those that meet there joined in order.
func blockTunes(tunes []chainTune, block int) []chainTune {
	var out []chainTune
	for _, tu := range tunes {
		g := (tu.gate + block - 1) / block * block
		if n := len(out); n > 0 && out[n-1].gate == g {
			out[n-1].changes = append(slices.Clone(out[n-1].changes), tu.changes...)
			continue
		}
		out = append(out, chainTune{g, tu.changes})
	}
	return out
}

// TestChainRetuneWhileInFlight retunes a running chain from another
// goroutine while blocks are in flight on several streams (explicit) or in
// the ring (zero-copy): each accepted
// retune lands at the ChainAt it reports, and the output equals the CPU
// backend's with the same retunes at those frames. A fused shift's retune
// that comes too soon after the last, or a filter grown past the shift
// retune before the last, is refused and changes nothing.
func TestChainRetuneWhileInFlight(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 4))
	for _, tc := range []struct {
		name   string
		stages []stage.Stage
		next   func(i int) []stage.Retune // the i-th retune
	}{
		{"shift+fir129/8", []stage.Stage{shiftStage(-250000), firStage(randSignal(r, 129), 8)}, func(i int) []stage.Retune {
			if i%2 == 0 {
				return []stage.Retune{{Index: 0, Stage: shiftStage(float64(1000 * (i - 50)))}}
			}
			return []stage.Retune{{Index: 1, Stage: firStage(randSignal(r, 64+i%400), 8)}} // to more taps than at the start too
		}},
		{"bank64/32x1000+select+shift+fir33/2", []stage.Stage{stage.NewChannelize(randSignal(r, 1000), 64, 32), stage.NewSelect(5, 63, 0), shiftStage(100), firStage(randSignal(r, 33), 2)}, func(i int) []stage.Retune {
			switch i % 3 {
			case 0:
				return []stage.Retune{{Index: 0, Stage: stage.NewChannelize(randSignal(r, 900+i%124), 64, 32)}}
			case 1:
				return []stage.Retune{{Index: 2, Stage: shiftStage(float64(10 * i))}}
			}
			return []stage.Retune{{Index: 3, Stage: firStage(randSignal(r, 33), 2)}}
		}},
	} {
		for _, tr := range []Transport{TransportExplicit, TransportZeroCopy} {
			t.Run(tc.name+"/"+string(tr), func(t *testing.T) {
				const block = 4099
				c := stage.Chain{SampleRate: 2e6, Complex: true, Stages: tc.stages}
				frames := 200 * block
				x := randSignal(r, frames*2)
				// The changes first, from this goroutine: r is not safe for two.
				changes := make([][]stage.Retune, 400)
				for i := range changes {
					changes[i] = tc.next(i)
				}
				be, err := NewChainBackend(c, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				rt := be.(pipeline.Retuner)
				snk := &collect{}
				stop := make(chan struct{})
				var tunes []chainTune
				refused := 0
				var wg sync.WaitGroup
				wg.Go(func() {
					rr := rand.New(rand.NewPCG(44, 5))
					for i := 0; i < len(changes); i++ {
						select {
						case <-stop:
							return
						case <-time.After(time.Duration(rr.IntN(300)) * time.Microsecond):
						}
						res, err := rt.Retune(changes[i]...)
						switch {
						case err != nil && strings.Contains(err.Error(), "not running"):
							if len(tunes) == 0 {
								continue // not started yet
							}
							return
						case errors.Is(err, stage.ErrRetuneUnsupported) && (strings.Contains(err.Error(), "retunes again") || strings.Contains(err.Error(), "keeps the last two")):
							refused++
							continue
						case err != nil:
							t.Errorf("retune %d: %v", i, err)
							return
						}
						tunes = append(tunes, chainTune{int(res[0].ChainAt), changes[i]})
					}
				})
				runRetuned(t, be, &sliceSource{x: x}, snk,
					pipeline.Config{BlockSize: block, Complex: true, Slots: 32, OutChannels: c.OutChannels(), OutComplex: c.OutComplex()}, stop, &wg)
				inside := 0
				for i, tu := range tunes {
					if i > 0 && tu.gate < tunes[i-1].gate {
						t.Fatalf("ChainAt went back: %d after %d", tu.gate, tunes[i-1].gate)
					}
					if tu.gate < frames {
						inside++
					}
				}
				t.Logf("%d retunes accepted (%d within the input), %d refused by the fused shift's rules", len(tunes), inside, refused)
				want := cpuChain(t, c, x, []int{block}, block, tunes...)
				var w []float32
				for _, b := range want {
					w = append(w, b...)
				}
				compareChain(t, [][]float32{snk.got}, [][]float32{w}, pipeline.FrameValues(c.OutChannels(), c.OutComplex()))
			})
		}
	}
}
