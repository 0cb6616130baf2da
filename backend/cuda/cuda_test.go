//go:build cuda

package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// These tests need a CUDA device. Build them here with
// `make cuda-test-bin` (go test -c -tags cuda) and run the binary on a GPU
// machine; see the README.

// testOptions are the tests' options for transport t. The watchdog is 2 s,
// or SIGPROC_TEST_WATCHDOG (a Go duration): gpu-check lengthens it under
// compute-sanitizer, which slows a persistent kernel's blocks 10-100x.
func testOptions(t Transport) Options {
	wd := 2 * time.Second
	if d, err := time.ParseDuration(os.Getenv("SIGPROC_TEST_WATCHDOG")); err == nil && d > 0 {
		wd = d
	}
	return Options{Transport: t, PTXDir: os.Getenv("SIGPROC_PTX_DIR"), Log: zerolog.Nop(), Watchdog: wd}
}

type sliceSource struct {
	x   []float32
	pos int
}

func (s *sliceSource) Read(_ context.Context, dst []float32) (int, error) {
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

type collect struct{ got []float32 }

func (c *collect) Write(v []float32) error { c.got = append(c.got, v...); return nil }

func TestBackendsMatchCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tr := range []Transport{TransportZeroCopy, TransportExplicit, TransportExplicitPageable} {
		for _, tc := range []struct {
			taps, block int
			complex     bool
			samples     int
		}{
			{1, 64, false, 64 * 9},
			{64, 256, false, 256*40 + 100}, // partial last block
			{129, 256, true, 256 * 30},
			{16, 1000, false, 1000 * 7},
			{512, 4096, false, 4096 * 6},
			{64, 4096, true, 4096 * 4},
			{200, 64, false, 64 * 50}, // history longer than a block
		} {
			name := fmt.Sprintf("%s/taps=%d/block=%d/complex=%v", tr, tc.taps, tc.block, tc.complex)
			t.Run(name, func(t *testing.T) {
				ch := 1
				if tc.complex {
					ch = 2
				}
				taps := randSignal(r, tc.taps)
				x := randSignal(r, tc.samples*ch)
				be, err := NewBackend(taps, tc.complex, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				snk := &collect{}
				st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
					pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Slots: 8}, pipeline.Options{})
				if cerr := be.Close(); cerr != nil {
					t.Errorf("close: %v", cerr)
				}
				if err != nil {
					t.Fatal(err)
				}
				if st.SamplesOut != uint64(tc.samples) || st.DroppedBlocks != 0 || st.Gaps != 0 {
					t.Fatalf("stats %+v", st)
				}
				want := filter.Convolve(taps, x, tc.complex)
				if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
					t.Fatalf("max relative error %g > 1e-5", e)
				}
			})
		}
	}
}

func TestWatchdogFiresOnStalledKernel(t *testing.T) {
	opts := testOptions(TransportZeroCopy)
	opts.StallAt = 5
	opts.Watchdog = 300 * time.Millisecond
	be, err := NewBackend([]float32{1, 0.5}, false, opts)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 256*20)
	t0 := time.Now()
	st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, &collect{},
		pipeline.Config{BlockSize: 256, Slots: 8}, pipeline.Options{})
	took := time.Since(t0)
	if !errors.Is(err, ErrWatchdog) {
		t.Fatalf("want watchdog error, got %v", err)
	}
	if took > 3*time.Second {
		t.Fatalf("watchdog took %v", took)
	}
	if st.Blocks != 4 {
		t.Fatalf("blocks before the stall: %d, want 4", st.Blocks)
	}
	// The stalled kernel still honours the stop flag, so Close frees all.
	if err := be.Close(); err != nil {
		t.Fatalf("close after stall: %v", err)
	}
	t.Logf("watchdog fired after %v: %v", took, err)
}

func TestPinnedLimitRefusedBeforeAllocation(t *testing.T) {
	opts := testOptions(TransportZeroCopy)
	opts.MaxPinned = 1 << 20
	be, err := NewBackend([]float32{1}, false, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = be.Start(context.Background(), pipeline.Layout{BlockSize: 1 << 16, Channels: 1, Slots: 64})
	if !errors.Is(err, ErrPinnedLimit) {
		t.Fatalf("want ErrPinnedLimit, got %v", err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
}

// The explicit transports keep several blocks in flight on several
// streams, each block's history carried on the device from the block
// before: the output must be the CPU's for any ring depth (1 to 8 blocks
// in flight), block size and history length.
func TestExplicitInFlightMatchesCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tr := range []Transport{TransportExplicit, TransportExplicitPageable} {
		for _, tc := range []struct {
			slots, taps, block int
			complex            bool
		}{
			{2, 33, 1000, false},
			{4, 257, 999, true},
			{16, 129, 4097, false},
			{64, 1025, 777, true}, // history longer than a block
			{8, 2048, 16384, false},
		} {
			t.Run(fmt.Sprintf("%s/slots=%d/taps=%d/block=%d/complex=%v", tr, tc.slots, tc.taps, tc.block, tc.complex), func(t *testing.T) {
				ch := 1
				if tc.complex {
					ch = 2
				}
				samples := tc.block*37 + tc.block/3
				taps := randSignal(r, tc.taps)
				x := randSignal(r, samples*ch)
				be, err := NewBackend(taps, tc.complex, testOptions(tr))
				if err != nil {
					t.Fatal(err)
				}
				snk := &collect{}
				st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
					pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Slots: tc.slots}, pipeline.Options{})
				if cerr := be.Close(); cerr != nil {
					t.Errorf("close: %v", cerr)
				}
				if err != nil {
					t.Fatal(err)
				}
				if st.SamplesOut != uint64(samples) || st.DroppedBlocks != 0 || st.Gaps != 0 {
					t.Fatalf("stats %+v", st)
				}
				want := filter.Convolve(taps, x, tc.complex)
				if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
					t.Fatalf("max relative error %g > 1e-5", e)
				}
			})
		}
	}
}

func TestCancelStopsKernelAndFreesMemory(t *testing.T) {
	for i := 0; i < 6; i++ {
		tr := []Transport{TransportZeroCopy, TransportExplicit, TransportExplicitPageable}[i%3]
		be, err := NewBackend([]float32{1, 2, 3}, false, testOptions(tr))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		st, err := pipeline.Run(ctx, &endless{}, be, &collect{}, pipeline.Config{BlockSize: 256, Slots: 8}, pipeline.Options{})
		cancel()
		if err != nil || !st.Interrupted {
			t.Fatalf("run %d: %v %+v", i, err, st)
		}
		if err := be.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
}

type endless struct{}

func (endless) Read(ctx context.Context, dst []float32) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	time.Sleep(100 * time.Microsecond)
	return len(dst), nil
}

func TestZeroCopyVariants(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		taps, block, split int
		complex, timing    bool
	}{
		{64, 256, 0, false, true},
		{64, 256, 1, true, false},
		{64, 256, 8, false, true},   // 1024 threads
		{1000, 64, 4, false, false}, // history 15x the block
		{31, 3, 2, true, true},      // tiny blocks
		{33, 5, 0, false, false},    // odd real block: a pad word per slot
		{64, 255, 0, false, true},
	} {
		name := fmt.Sprintf("taps=%d/block=%d/split=%d/complex=%v/timing=%v", tc.taps, tc.block, tc.split, tc.complex, tc.timing)
		t.Run(name, func(t *testing.T) {
			ch := 1
			if tc.complex {
				ch = 2
			}
			taps := randSignal(r, tc.taps)
			samples := tc.block*37 + 1
			x := randSignal(r, samples*ch)
			o := testOptions(TransportZeroCopy)
			o.Split, o.Timing = tc.split, tc.timing
			be, err := NewBackend(taps, tc.complex, o)
			if err != nil {
				t.Fatal(err)
			}
			snk := &collect{}
			_, err = pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
				pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Slots: 4}, pipeline.Options{})
			var bd map[string][]float64
			if tb, ok := be.(interface{ Breakdown() map[string][]float64 }); ok {
				bd = tb.Breakdown()
			}
			if cerr := be.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := filter.Convolve(taps, x, tc.complex)
			if len(snk.got) != len(want) {
				t.Fatalf("got %d values, want %d", len(snk.got), len(want))
			}
			if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
				t.Fatalf("max relative error %g > 1e-5", e)
			}
			if tc.timing {
				for _, k := range []string{"host_write", "pcie_round_trip", "gpu_input_wait", "gpu_compute", "gpu_all_stored", "output_spread", "host_read"} {
					if len(bd[k]) < 30 {
						t.Errorf("breakdown %s has %d samples, want >= 30", k, len(bd[k]))
					}
				}
				// The last word is seen before the whole block is read.
				for i, sp := range bd["output_spread"] {
					if r := bd["host_read"][i]; sp > r {
						t.Errorf("block %d: output spread %.3f µs > host read %.3f µs", i, sp, r)
						break
					}
				}
				// Thread 0 stores before the barrier after which "all
				// stored" is read, so it can never be the smaller.
				for i, c := range bd["gpu_compute"] {
					if a := bd["gpu_all_stored"][i]; a < c {
						t.Errorf("block %d: all stored after %.3f µs, before thread 0's %.3f µs", i, a, c)
						break
					}
				}
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Split: 3}, {Split: 64}, {Split: -1}} {
		if _, err := NewBackend([]float32{1}, false, o); err == nil {
			t.Errorf("NewBackend(%+v) accepted", o)
		}
	}
}

// A float32 recording mapped from the page cache goes to the device with
// no host copy: the explicit transport pins it window by window, ahead of
// the blocks and on several threads (16 MiB windows here, so blocks
// straddle windows), and copies each block from it. The
// output is the CPU's; so is that of the same file read into the ring
// when there is no room to pin it.
// writeFloats writes x as a little-endian float32 file and returns its path.
func writeFloats(t *testing.T, x []float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.raw")
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExplicitCopiesMappedFileInPlace runs a 40 MiB recording through the
// explicit transport pinned in place, whole and streamed in windows that
// are unpinned behind the copies, and read into the ring when the budget
// leaves no room: the output equals the float64 convolution each way, and
// the busy times are measured.
func TestExplicitCopiesMappedFileInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const block = 100003
	cases := []struct {
		name    string
		inPlace bool
		room    int64 // beyond what the ring and buffers need
		threads int
		share   float64 // of the windows read into the ring
	}{
		{"whole", true, 3 * minWindow, 0, 0},                        // 2 windows of 24 MiB, kept
		{"whole, half read", true, 3 * minWindow, 0, 0.5},           // the second read
		{"two pinners", true, 4 * minWindow, 2, 0},                  // 3 windows of 16 MiB, two at a time, kept
		{"streamed", true, 2 * minWindow, 1, 0},                     // 2 ahead of 3: unpinned behind
		{"streamed, a third read", true, 2 * minWindow, 1, 0.34},    // the third read
		{"streamed, two thirds read", true, 2 * minWindow, 1, 0.67}, // the first pinned
		{"all read", true, 2 * minWindow, 1, 1},
		{"read into the ring", false, minWindow, 0, 0.5}, // too little room
	}
	for _, complex := range []bool{false, true} {
		ch := 1
		format := "rf32_le"
		if complex {
			ch, format = 2, "cf32_le"
		}
		x := randSignal(r, (40<<20)/4/ch*ch)
		path := writeFloats(t, x)
		taps := randSignal(r, 129)
		want := filter.Convolve(taps, x, complex)
		l := pipeline.Layout{BlockSize: block, Channels: ch, Slots: 8}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/complex=%v", c.name, complex), func(t *testing.T) {
				src, err := capture.OpenFile(path, format, 1)
				if err != nil {
					t.Fatal(err)
				}
				o := testOptions(TransportExplicit)
				o.PinSource, o.PinThreads, o.ReadShare = true, c.threads, &c.share
				o.MaxPinned = explicitPinned(l, l.BlockValues()) + c.room
				be, err := NewBackend(taps, complex, o)
				if err != nil {
					t.Fatal(err)
				}
				snk := &collect{}
				var took bool
				st, err := pipeline.Run(context.Background(), src, be, snk, pipeline.Config{BlockSize: block, Complex: complex, Slots: 8},
					pipeline.Options{OnBlock: func(pipeline.Output, int64) {
						x := be.(*backend).tr.(*explicit)
						took = x.region != nil || x.readAll // a share of 1 pins nothing
					}})
				errs := errors.Join(err, be.Close(), src.Close())
				if errs != nil {
					t.Fatal(errs)
				}
				if took != c.inPlace || st.SamplesOut != uint64(len(x)/ch) {
					t.Fatalf("blocks in place %v, stats %+v", took, st)
				}
				if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
					t.Fatalf("max relative error %g", e)
				}
				if d := st.Device; d == nil || d.CopyIn <= 0 || d.Kernel <= 0 || d.CopyOut <= 0 || d.CopyIn > st.Wall+st.Startup {
					t.Fatalf("device busy times %+v over a wall of %v", d, st.Wall)
				}
			})
		}
	}
}

// TestExplicitInPlaceTruncated truncates a recording pinned in place
// while it runs: the run ends with capture.ErrTruncated, never a crash.
func TestExplicitInPlaceTruncated(t *testing.T) {
	x := randSignal(rand.New(rand.NewPCG(9, 9)), (64<<20)/4)
	path := writeFloats(t, x)
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const block = 1 << 18
	l := pipeline.Layout{BlockSize: block, Channels: 1, Slots: 8}
	o := testOptions(TransportExplicit)
	o.PinSource, o.PinThreads = true, 1
	// Pinned whole, in two windows: the window is set, as the default
	// follows the blocks in flight (8 MiB here, so 16 MiB windows).
	o.PinWindow = 2 * minWindow
	o.MaxPinned = explicitPinned(l, l.BlockValues()) + 4*minWindow
	be, err := NewBackend(randSignal(rand.New(rand.NewPCG(1, 1)), 33), false, o)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	var blocks int
	_, err = pipeline.Run(context.Background(), src, be, &collect{}, pipeline.Config{BlockSize: block, Slots: 8},
		pipeline.Options{OnBlock: func(pipeline.Output, int64) {
			if blocks++; blocks == 2 {
				// Both windows are pinned by now (one before the run, one
				// ahead of the first blocks): pinning a window cut short
				// fails (the run then says so too), but the sanitizer would
				// count that call as an error.
				if r := be.(*backend).tr.(*explicit).region; r.next < len(r.wins) {
					t.Errorf("%d of %d windows pinned by the second block", r.next, len(r.wins))
				}
				if err := os.Truncate(path, 32<<20); err != nil {
					t.Error(err)
				}
			}
		}})
	if !errors.Is(err, capture.ErrTruncated) {
		t.Fatalf("after truncation: %v, want capture.ErrTruncated", err)
	}
}

// A live source's default ring is bounded on the transport Start would
// pick for zero-copy alone (run's ring sizing, pipeline.RingSource.MaxSlots).
func TestLiveSlotCeiling(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	plain := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{firStage(randSignal(r, 64), 1)}}
	chain := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{shiftStage(1000), firStage(randSignal(r, 129), 8)}}
	for _, tc := range []struct {
		name  string
		c     stage.Chain
		tr    Transport
		block int
		want  int
	}{
		{"plain fir, zero-copy", plain, TransportZeroCopy, 256, 512},
		{"plain fir, zero-copy, large block", plain, TransportZeroCopy, 2048, pipeline.LiveSlots},
		{"plain fir, explicit", plain, TransportExplicit, 256, 0},
		{"plain fir, auto, small block", plain, TransportAuto, 256, 512},
		{"plain fir, auto, large block", plain, TransportAuto, 4 * ZeroCopyMaxBlock, 0},
		{"chain, zero-copy", chain, TransportZeroCopy, 2048, pipeline.LiveSlots},
		{"chain, auto", chain, TransportAuto, 2048, 0},
	} {
		be, err := NewChainBackend(tc.c, testOptions(tc.tr))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := be.(interface{ LiveSlotCeiling(pipeline.Layout) int }).LiveSlotCeiling(pipeline.Layout{BlockSize: tc.block, Channels: 2})
		if got != tc.want {
			t.Errorf("%s: ceiling %d, want %d", tc.name, got, tc.want)
		}
	}
}
