//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// firstMismatch describes the first value of got off want by more than
// tol relative to want's RMS, as frame and lane, for the log.
func firstMismatch(got, want []float32, lanes int, tol float64) string {
	var rms float64
	for _, v := range want {
		rms += float64(v) * float64(v)
	}
	rms = math.Sqrt(rms / float64(max(len(want), 1)))
	for i := range min(len(got), len(want)) {
		if math.Abs(float64(got[i])-float64(want[i])) > tol*rms {
			return fmt.Sprintf("first bad value %d (frame %d, lane %d): got %g want %g (rms %g)", i, i/lanes, i%lanes, got[i], want[i], rms)
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// TestZeroCopyChannelsMatchCPU: N channels, real and complex (up to 16
// values per frame), through the zero-copy kernel equal the CPU backend,
// odd block sizes and a partial last block included.
func TestZeroCopyChannelsMatchCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, tc := range []struct {
		channels    int
		complex     bool
		taps, block int
	}{
		{1, false, 64, 256}, {2, false, 64, 256}, {8, false, 64, 256},
		{1, true, 64, 256}, {2, true, 64, 256}, {8, true, 64, 256},
		{1, false, 17, 37}, {2, false, 17, 37}, {8, false, 17, 37},
		{1, true, 17, 37}, {2, true, 17, 37}, {8, true, 17, 37},
		{3, false, 33, 31}, {3, true, 33, 31}, {5, false, 200, 19}, {8, true, 129, 64},
	} {
		name := fmt.Sprintf("ch=%d/complex=%v/taps=%d/block=%d", tc.channels, tc.complex, tc.taps, tc.block)
		t.Run(name, func(t *testing.T) {
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			frames := tc.block*23 + 5
			taps := randSignal(r, tc.taps)
			x := randSignal(r, frames*lanes)
			c := stage.FIR(1e6, tc.complex, taps)
			c.Channels = tc.channels
			cfg := pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.channels, Slots: 8}
			run := func(be pipeline.Backend) []float32 {
				snk := &collect{}
				st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk, cfg, pipeline.Options{})
				if cerr := be.Close(); cerr != nil {
					t.Errorf("%s close: %v", be.Name(), cerr)
				}
				if err != nil {
					t.Fatalf("%s: %v", be.Name(), err)
				}
				if st.DroppedBlocks != 0 {
					t.Fatalf("%s: stats %+v", be.Name(), st)
				}
				return snk.got
			}
			ref, err := cpu.New(c, tc.block)
			if err != nil {
				t.Fatal(err)
			}
			want := run(ref)
			be, err := NewChainBackend(c, testOptions(TransportZeroCopy))
			if err != nil {
				t.Fatal(err)
			}
			got := run(be)
			if len(got) != len(want) || len(got) != len(x) {
				t.Fatalf("got %d values, cpu %d, input %d", len(got), len(want), len(x))
			}
			if e := filter.MaxErrRMS(got, want); e > 1e-5 {
				t.Fatalf("max relative error %g > 1e-5 against the cpu backend; %s", e, firstMismatch(got, want, lanes, 1e-5))
			}
		})
	}
}

// retuneRef is the float64 reference of the retune semantics: frame m of
// each lane filtered with the taps of the last segment starting at or
// before m, over the same input history.
func retuneRef(x []float32, lanes int, from []int64, taps [][]float32) []float32 {
	out := make([]float32, len(x))
	seg := 0
	for m := 0; m < len(x)/lanes; m++ {
		for seg+1 < len(from) && int64(m) >= from[seg+1] {
			seg++
		}
		h := taps[seg]
		for c := range lanes {
			var s float64
			for k, hk := range h {
				if j := m - k; j >= 0 {
					s += float64(hk) * float64(x[j*lanes+c])
				}
			}
			out[m*lanes+c] = float32(s)
		}
	}
	return out
}

// TestZeroCopyRetuneAtBlock: retunes at known blocks (the source holds
// back there) take effect exactly at the block's first frame, which Retune
// reports, and the output equals the float64 reference of the semantics,
// across tap-count changes both ways; a retune beyond the kernel's history
// is refused and changes nothing.
func TestZeroCopyRetuneAtBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		channels    int
		complex     bool
		block       int
		taps        []int // start, then one retune per gate
		gateBlocks  []int64
		sameAtOnce  bool // two retunes with no block between: the second wins
		blocksTotal int
	}{
		{1, false, 256, []int{64, 200, 7, 64}, []int64{5, 9, 10}, false, 16},
		{1, true, 256, []int{64, 129, 1}, []int64{3, 4}, false, 8},
		{8, true, 37, []int{17, 100, 5}, []int64{6, 11}, false, 15},
		{3, false, 31, []int{33, 256}, []int64{2}, true, 6},
	} {
		name := fmt.Sprintf("ch=%d/complex=%v/block=%d/taps=%v", tc.channels, tc.complex, tc.block, tc.taps)
		t.Run(name, func(t *testing.T) {
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			x := randSignal(r, tc.blocksTotal*tc.block*lanes)
			sets := make([][]float32, len(tc.taps))
			for i, n := range tc.taps {
				sets[i] = randSignal(r, n)
			}
			c := stage.FIR(1e6, tc.complex, sets[0])
			c.Channels = tc.channels
			be, err := NewChainBackend(c, testOptions(TransportZeroCopy))
			if err != nil {
				t.Fatal(err)
			}
			rt := be.(pipeline.Retuner)
			from := []int64{0}
			src := &zcGate{x: x, lanes: lanes, reached: make(chan int64), resume: make(chan struct{})}
			for _, g := range tc.gateBlocks {
				src.gates = append(src.gates, g*int64(tc.block))
			}
			cfg := pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.channels, Slots: 4}
			snk := &collect{}
			done := make(chan error, 1)
			go func() {
				_, err := pipeline.Run(context.Background(), src, be, snk, cfg, pipeline.Options{})
				done <- err
			}()
			for i := range tc.gateBlocks {
				var at int64
				select {
				case at = <-src.reached:
				case err := <-done:
					t.Fatalf("the run ended before gate %d: %v", i, err)
				}
				if i == 0 {
					// Beyond the history the kernel keeps: refused, as a
					// StageError, with nothing changed.
					if _, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: randSignal(r, 4096)}}); err == nil {
						t.Error("retune to 4096 taps accepted")
					} else if se := (*stage.StageError)(nil); !errors.As(err, &se) {
						t.Errorf("retune to 4096 taps: %v, want a *stage.StageError", err)
					} else {
						t.Logf("4096 taps refused: %v", err)
					}
				}
				if tc.sameAtOnce {
					if _, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: randSignal(r, 9)}}); err != nil {
						t.Errorf("retune before the last one reached a block: %v", err)
					}
				}
				res, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: sets[i+1]}})
				if err != nil {
					t.Fatalf("retune %d at frame %d: %v", i, at, err)
				}
				if len(res) != 1 || res[0].At != at || res[0].ChainAt != at {
					t.Errorf("retune %d: %+v, want At = ChainAt = %d", i, res, at)
				}
				if got := rt.Chain().Stages[0].Taps; len(got) != len(sets[i+1]) {
					t.Errorf("Chain() has %d taps, want %d", len(got), len(sets[i+1]))
				}
				from = append(from, at)
				src.resume <- struct{}{}
			}
			err = <-done
			if cerr := be.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := retuneRef(x, lanes, from, sets)
			if len(snk.got) != len(want) {
				t.Fatalf("got %d values, want %d", len(snk.got), len(want))
			}
			if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
				t.Fatalf("max relative error %g > 1e-5 against the float64 reference (switches at frames %v); %s", e, from, firstMismatch(snk.got, want, lanes, 1e-5))
			}
			// Around each switch, by frame: the values just before use the
			// old taps, those from it on the new (the reference says so;
			// log the neighbourhood when it fails).
			for s, f := range from[1:] {
				for m := max(f-2, 0); m < min(f+2, int64(len(want)/lanes)); m++ {
					i := int(m) * lanes
					if d := math.Abs(float64(snk.got[i] - want[i])); d > 1e-4 {
						t.Errorf("switch %d at frame %d: frame %d lane 0 got %g want %g", s+1, f, m, snk.got[i], want[i])
					}
				}
			}
		})
	}
}
