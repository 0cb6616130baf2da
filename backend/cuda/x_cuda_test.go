//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// Tests of the explicit transport's N channels and retunes (issues #17
// and #18). Small cases come first, so that a first run on a GPU says
// where a failure starts; failures log the first differing values.

// laneRef filters each of the lanes of the interleaved x on its own with
// taps, in float64: y[f·L+c] = Σ_k h[k]·x[(f−k)·L+c].
func laneRef(taps []float32, x []float32, lanes int) []float32 {
	return segRef([]tapSeg{{0, taps}}, x, lanes)
}

// tapSeg: taps in force from input frame at on.
type tapSeg struct {
	at   int64
	taps []float32
}

// segRef is the retune semantics in float64: output frame n uses the taps
// of the last segment with at <= n, over the same input history (zeros
// before the stream).
func segRef(segs []tapSeg, x []float32, lanes int) []float32 {
	frames := len(x) / lanes
	y := make([]float32, len(x))
	s := 0
	for n := 0; n < frames; n++ {
		for s+1 < len(segs) && segs[s+1].at <= int64(n) {
			s++
		}
		h := segs[s].taps
		for c := 0; c < lanes; c++ {
			var acc float64
			for k := 0; k < len(h) && k <= n; k++ {
				acc += float64(h[k]) * float64(x[(n-k)*lanes+c])
			}
			y[n*lanes+c] = float32(acc)
		}
	}
	return y
}

// firstDiff describes where got and want first differ beyond tol of the
// reference's RMS, for the log.
func firstDiff(got, want []float32, lanes int, tol float64) string {
	var ss float64
	for _, v := range want {
		ss += float64(v) * float64(v)
	}
	rms := math.Sqrt(ss / float64(max(1, len(want))))
	for i := range min(len(got), len(want)) {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol*rms) {
			return fmt.Sprintf("first difference at value %d (frame %d, lane %d): got %g, want %g (rms %g); got[%d:] %v, want %v",
				i, i/lanes, i%lanes, got[i], want[i], rms, i, got[i:min(len(got), i+4)], want[i:min(len(want), i+4)])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

func checkRef(t *testing.T, name string, got, want []float32, lanes int) {
	t.Helper()
	const tol = 1e-5
	if e := filter.MaxErrRMS(got, want); !(e <= tol) {
		t.Fatalf("%s: max error %g of the output RMS > %g: %s", name, e, tol, firstDiff(got, want, lanes, tol))
	}
}

// fir_batch_lanes against the float64 reference, lanes 1 to 32 (1 and 2
// forced onto the generic kernel too), short to long filters, ragged
// lengths, and misaligned pointers.
func TestBatchFIRLanesMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	withBatchContext(t, func() {
		for _, lanes := range []int{1, 2, 3, 8, 16, 32} {
			for _, generic := range []bool{true, false} {
				if generic && lanes > 2 {
					continue // lanes > 2 always take fir_batch_lanes
				}
				for _, ntaps := range []int{1, 5, 33, 129, 1024} {
					taps := randSignal(r, ntaps)
					f, err := newBatchFIR(taps, lanes, batchPTX(), generic)
					if err != nil {
						t.Fatalf("lanes %d taps %d: %v", lanes, ntaps, err)
					}
					if lanes > 2 || generic {
						if !f.lanes {
							t.Fatalf("lanes %d generic %v: not on fir_batch_lanes", lanes, generic)
						}
					}
					for _, tc := range []struct{ nout, inOff, outOff int }{{1, 0, 0}, {7, 0, 0}, {1001, 1, 3}, {1<<14 + 3, 0, 0}} {
						name := fmt.Sprintf("lanes=%d/generic=%v/taps=%d/%+v", lanes, generic, ntaps, tc)
						x := randSignal(r, tc.nout*lanes)
						checkRef(t, name, batchFilter(t, f, x, tc.inOff, tc.outOff), laneRef(taps, x, lanes), lanes)
					}
					if err := f.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	})
}

// Threads per block change the lanes kernel's tile (threads/lanes chunks
// of 12 frames), including lanes that do not divide the threads.
func TestBatchFIRLanesThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	withBatchContext(t, func() {
		for _, lanes := range []int{3, 7, 16} {
			taps := randSignal(r, 129)
			f, err := NewBatchFIRLanes(taps, lanes, batchPTX())
			if err != nil {
				t.Fatal(err)
			}
			x := randSignal(r, 5003*lanes)
			want := laneRef(taps, x, lanes)
			for _, n := range []int{32, 64, 96, 256} {
				if err := f.SetThreads(n); err != nil {
					t.Fatal(err)
				}
				frames := (n / lanes) * 12
				if got, want := f.Blocks(5003), (5003+frames-1)/frames; got != want {
					t.Errorf("lanes %d threads %d: %d blocks, want %d", lanes, n, got, want)
				}
				checkRef(t, fmt.Sprintf("lanes=%d/threads=%d", lanes, n), batchFilter(t, f, x, 0, 0), want, lanes)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestBatchFIRLanesRefusals(t *testing.T) {
	withBatchContext(t, func() {
		for _, tc := range []struct {
			lanes, taps int
			want        string
		}{
			{0, 3, "1 to 32"},
			{BatchMaxLanes + 1, 3, "1 to 32"},
			{BatchMaxLanes, BatchMaxTaps, "shared memory"},
		} {
			_, err := NewBatchFIRLanes(make([]float32, tc.taps), tc.lanes, batchPTX())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("lanes %d taps %d: got %v, want an error containing %q", tc.lanes, tc.taps, err, tc.want)
			} else {
				t.Logf("lanes %d taps %d: %v", tc.lanes, tc.taps, err)
			}
		}
	})
}

// runChain runs x through be with the given layout and returns the output.
func runChain(t *testing.T, be pipeline.Backend, x []float32, block, slots, channels int, complex bool) []float32 {
	t.Helper()
	snk := &collect{}
	_, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
		pipeline.Config{BlockSize: block, Complex: complex, Channels: channels, Slots: slots}, pipeline.Options{})
	if cerr := be.Close(); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return snk.got
}

// The explicit transports filter 1, 2 and 8 channels, real and complex,
// equal to the CPU backend, with odd block sizes; so does transport auto,
// on the transport chooseTransport names for the device: zero-copy (which
// takes N channels) for blocks up to ZeroCopyMaxBlock whose kernel fits
// the shared memory, explicit otherwise.
func TestExplicitChannelsMatchCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tr := range []Transport{TransportExplicit, TransportExplicitPageable, TransportAuto} {
		for _, tc := range []struct {
			channels int
			complex  bool
			taps     int
			block    int
		}{
			{1, false, 33, 999},
			{2, false, 129, 1001},
			{8, false, 129, 777},
			{1, true, 64, 1023},
			{2, true, 257, 4097},
			{8, true, 129, 333},
			{3, false, 1025, 65}, // history longer than a block
			{8, true, 65, 2048},  // auto: zero-copy's block, but its kernel does not fit
		} {
			if tr == TransportAuto && tc.channels == 1 {
				continue
			}
			name := fmt.Sprintf("%s/ch=%d/complex=%v/taps=%d/block=%d", tr, tc.channels, tc.complex, tc.taps, tc.block)
			t.Run(name, func(t *testing.T) {
				lanes := pipeline.FrameValues(tc.channels, tc.complex)
				frames := tc.block*13 + tc.block/3
				taps := randSignal(r, tc.taps)
				x := randSignal(r, frames*lanes)
				c := stage.FIR(1e6, tc.complex, taps)
				c.Channels = tc.channels
				gpu, err := NewChainBackend(c, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				got := runChain(t, gpu, x, tc.block, 8, tc.channels, tc.complex)
				cb := gpu.(*chainBackend)
				l := pipeline.Layout{BlockSize: tc.block, Channels: lanes, Slots: 8}
				wantT, why := chooseTransport(tr, cb.Device(), l, tc.taps)
				if tt := cb.Transport(); tt != wantT {
					t.Fatalf("ran on %s, want %s (%s)", tt, wantT, why)
				}
				t.Logf("ran on %s (%s)", wantT, why)
				ref, err := cpu.New(c, tc.block)
				if err != nil {
					t.Fatal(err)
				}
				want := runChain(t, ref, x, tc.block, 8, tc.channels, tc.complex)
				if len(got) != len(want) || len(got) != len(x) {
					t.Fatalf("%d outputs, CPU %d, input %d", len(got), len(want), len(x))
				}
				checkRef(t, name+" vs cpu", got, want, lanes)
				checkRef(t, name+" vs float64", got, laneRef(taps, x, lanes), lanes)
			})
		}
	}
}

// gatedSource delivers x and stops at each gate (a frame index) until the
// test releases it.
type gatedSource struct {
	x       []float32
	lanes   int
	pos     int // frames delivered
	gates   []int
	release []chan struct{}
}

func (s *gatedSource) Read(ctx context.Context, dst []float32) (int, error) {
	end := len(s.x) / s.lanes
	for g, at := range s.gates {
		if s.pos == at {
			select {
			case <-s.release[g]:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if s.pos < at {
			end = min(end, at)
			break
		}
	}
	n := copy(dst[:min(len(dst), (end-s.pos)*s.lanes)], s.x[s.pos*s.lanes:])
	s.pos += n / s.lanes
	if s.pos*s.lanes == len(s.x) {
		return n, io.EOF
	}
	return n, nil
}

// signalSink collects the output and signals reached[g] once it holds
// marks[g] values.
type signalSink struct {
	mu      sync.Mutex
	got     []float32
	marks   []int
	reached []chan struct{}
}

func (s *signalSink) Write(v []float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, v...)
	for g, m := range s.marks {
		if len(s.got) >= m && s.reached[g] != nil {
			close(s.reached[g])
			s.reached[g] = nil
		}
	}
	return nil
}

// A retune at a known block: the source stops at each gate, the test waits
// until every output before it has come back (so every block before it has
// been handed to the device, and none after), retunes, and lets the source
// go on. At must be the gate, and the output must equal the float64
// reference of the semantics, across tap-count changes up and down (both
// device tap buffers rewritten), for real, complex and N-channel streams.
func TestExplicitRetuneAtKnownBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, tc := range []struct {
		channels int
		complex  bool
		block    int
		slots    int
	}{
		{1, false, 1001, 8},
		{1, true, 777, 4},
		{3, false, 513, 16},
		{8, true, 257, 8},
	} {
		name := fmt.Sprintf("ch=%d/complex=%v/block=%d/slots=%d", tc.channels, tc.complex, tc.block, tc.slots)
		t.Run(name, func(t *testing.T) {
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			// Tap counts: 64 → 300 (up) → 17 (down) → 1025 (up, past a block) → 64.
			tapSets := [][]float32{randSignal(r, 64), randSignal(r, 300), randSignal(r, 17), randSignal(r, 1025), randSignal(r, 64)}
			gates := []int{3 * tc.block, 5*tc.block + tc.block/2, 9 * tc.block, 9*tc.block + 1}
			frames := 14*tc.block + 5
			x := randSignal(r, frames*lanes)
			src := &gatedSource{x: x, lanes: lanes, gates: gates}
			snk := &signalSink{}
			for _, g := range gates {
				src.release = append(src.release, make(chan struct{}))
				snk.marks = append(snk.marks, g*lanes)
				snk.reached = append(snk.reached, make(chan struct{}))
			}
			reached := append([]chan struct{}(nil), snk.reached...)
			c := stage.FIR(1e6, tc.complex, tapSets[0])
			c.Channels = tc.channels
			be, err := NewChainBackend(c, testOptions(TransportExplicit))
			if err != nil {
				t.Fatal(err)
			}
			rt := be.(pipeline.Retuner)
			if _, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: tapSets[1]}}); !errors.Is(err, stage.ErrRetuneUnsupported) {
				t.Errorf("retune before Start: %v, want ErrRetuneUnsupported", err)
			}
			if err := rt.(interface{ RetuneRefusal() error }).RetuneRefusal(); err != nil {
				t.Errorf("RetuneRefusal on explicit: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := pipeline.Run(context.Background(), src, be, snk,
					pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.channels, Slots: tc.slots}, pipeline.Options{})
				done <- errors.Join(err, be.Close())
			}()
			segs := []tapSeg{{0, tapSets[0]}}
			for g, at := range gates {
				select {
				case <-reached[g]:
				case err := <-done:
					t.Fatalf("run ended before gate %d: %v", g, err)
				case <-time.After(20 * time.Second):
					t.Fatalf("gate %d (frame %d) not reached", g, at)
				}
				taps := tapSets[g+1]
				res, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: taps}})
				if err != nil {
					t.Fatalf("retune %d: %v", g, err)
				}
				if len(res) != 1 || res[0].At != int64(at) || res[0].ChainAt != int64(at) {
					t.Fatalf("retune %d: %+v, want At = ChainAt = %d", g, res, at)
				}
				segs = append(segs, tapSeg{res[0].At, taps})
				close(src.release[g])
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n := len(rt.Chain().Stages[0].Taps); n != len(tapSets[len(tapSets)-1]) {
				t.Errorf("Chain() has %d taps after the retunes", n)
			}
			want := segRef(segs, x, lanes)
			// Each segment on its own, to say which one fails first.
			for i, s := range segs {
				lo := int(s.at) * lanes
				if lo >= len(x) {
					continue
				}
				hi := len(x)
				if i+1 < len(segs) {
					hi = int(segs[i+1].at) * lanes
				}
				if hi <= len(snk.got) {
					t.Logf("segment %d: frames from %d, %d taps, max error %.3g of the RMS", i, s.at, len(s.taps),
						filter.MaxErrRMS(snk.got[lo:hi], want[lo:hi]))
				}
			}
			checkRef(t, name, snk.got, want, lanes)
		})
	}
}

// Retunes from another goroutine while blocks are in flight: each lands
// at the At it reports (a later retune before the next block replaces an
// earlier one at the same At), and the output equals the reference built
// from the reported indices. Bad retunes are refused and change nothing.
// runRetuned runs be from src into snk while a test's goroutine in wg
// retunes it, then closes stop, waits for that goroutine and closes be.
func runRetuned(t *testing.T, be pipeline.Backend, src pipeline.Source, snk pipeline.Sink, cfg pipeline.Config, stop chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	_, err := pipeline.Run(context.Background(), src, be, snk, cfg, pipeline.Options{})
	close(stop)
	wg.Wait()
	if cerr := be.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestExplicitRetuneWhileInFlight(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, tc := range []struct {
		channels int
		complex  bool
		block    int
	}{
		{1, false, 4099},
		{2, true, 1025},
	} {
		name := fmt.Sprintf("ch=%d/complex=%v/block=%d", tc.channels, tc.complex, tc.block)
		t.Run(name, func(t *testing.T) {
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			frames := 400 * tc.block
			x := randSignal(r, frames*lanes)
			taps0 := randSignal(r, 33)
			c := stage.FIR(1e6, tc.complex, taps0)
			c.Channels = tc.channels
			be, err := NewChainBackend(c, testOptions(TransportExplicit))
			if err != nil {
				t.Fatal(err)
			}
			rt := be.(pipeline.Retuner)
			sets := make([][]float32, 16)
			for i := range sets {
				sets[i] = randSignal(r, []int{5, 129, 33, 700}[i%4])
			}
			snk := &collect{}
			stop := make(chan struct{})
			var segs []tapSeg
			var wg sync.WaitGroup
			wg.Go(func() {
				rr := rand.New(rand.NewPCG(27, 28))
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(rr.IntN(300)) * time.Microsecond):
					}
					taps := sets[i%len(sets)]
					res, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: taps}})
					if errors.Is(err, stage.ErrRetuneUnsupported) && len(segs) == 0 {
						continue // not started yet
					}
					if err != nil {
						if !strings.Contains(err.Error(), "not running") {
							t.Errorf("retune %d: %v", i, err)
						}
						return
					}
					segs = append(segs, tapSeg{res[0].At, taps})
					if i%5 == 0 { // refused: structural, too many taps
						if _, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: taps, Decimate: 2}}); !errors.Is(err, stage.ErrStructure) {
							t.Errorf("decimation change: %v, want ErrStructure", err)
						}
						if _, err := rt.Retune(stage.Retune{Stage: stage.Stage{Kind: stage.KindFIR, Taps: make([]float32, BatchMaxTaps+1)}}); !errors.Is(err, stage.ErrRetuneUnsupported) {
							t.Errorf("%d taps: %v, want ErrRetuneUnsupported", BatchMaxTaps+1, err)
						}
					}
				}
			})
			runRetuned(t, be, &sliceSource{x: x}, snk,
				pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.channels, Slots: 32}, stop, &wg)
			// Retunes after the last block was taken land beyond the input.
			all := append([]tapSeg{{0, taps0}}, segs...)
			for i := 1; i < len(all); i++ {
				if all[i].at < all[i-1].at {
					t.Fatalf("At went back: %d after %d", all[i].at, all[i-1].at)
				}
			}
			distinct := map[int64]bool{}
			for _, s := range segs {
				if s.at < int64(frames) {
					distinct[s.at] = true
				}
			}
			t.Logf("%d retunes accepted, %d distinct block boundaries within the input", len(segs), len(distinct))
			if len(distinct) < 2 {
				t.Logf("warning: few retunes landed inside the run; the check is weak")
			}
			checkRef(t, name, snk.got, segRef(all, x, lanes), lanes)
		})
	}
}
