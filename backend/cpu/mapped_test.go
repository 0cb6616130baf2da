package cpu

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestViewOfATruncatedFileIsAnError has the backend take a block in place
// from a mapped file that is then truncated, on one goroutine, split over
// two, and per channel, with and without a check of the views (the first
// read then): Next returns capture.ErrTruncated, where reading the
// vanished pages would otherwise kill the process with SIGBUS.
func TestViewOfATruncatedFileIsAnError(t *testing.T) {
	taps := make([]float32, 33)
	taps[16] = 1
	tests := []struct {
		name     string
		channels int
		workers  int
		checked  bool // the backend checks the views first (ScanViews)
		block    int  // 0: 64 Ki
	}{
		{"one goroutine", 1, 1, false, 0},
		{"segments on two goroutines", 1, 2, false, 0},
		{"two channels", 2, 2, false, 0},
		{"one goroutine, checking the views", 1, 1, true, 0},
		{"segments on two goroutines, checking the views", 1, 2, true, 0},
		{"two channels, checking the views", 2, 2, true, 0},
		{"one goroutine cutting long blocks, checking the views", 1, 1, true, soloSegments * SegmentFrames},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			block := tc.block
			if block == 0 {
				block = 1 << 16
			}
			desc := stage.FIR(1e6, true, taps)
			desc.Channels = tc.channels
			ch, err := newChain(desc, block, tc.workers)
			if err != nil {
				t.Fatal(err)
			}
			be := &backend{chain: ch, desc: ch.desc}
			defer be.Close()
			l := pipeline.Layout{BlockSize: block, Channels: 2 * tc.channels, Slots: 4}
			ring, err := be.Start(context.Background(), l)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "x.cf32")
			values := make([]float32, 2*l.BlockValues())
			for i := range values {
				values[i] = float32(math.Sin(float64(i) / 7))
			}
			if err := os.WriteFile(path, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), 4*len(values)), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			region, err := syscall.Mmap(int(f.Fd()), 0, 4*len(values), syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Munmap(region)
			if use, err := be.UseRegion(region, ""); !use || err != nil {
				t.Fatalf("UseRegion: %v, %v", use, err)
			}
			if use, _ := be.UseRegion(region, pipeline.EncInt8); use {
				t.Error("UseRegion took stored integers")
			}
			if tc.checked { // the first read of each block: it meets the cut
				be.ScanViews(func(v []float32) error {
					var sum float32
					for _, x := range v {
						sum += x
					}
					if sum != sum {
						return errors.New("NaN in the test's values")
					}
					return nil
				})
			}
			ring.EnableViews()
			view := unsafe.Slice((*float32)(unsafe.Pointer(&region[0])), len(region)/4)
			publish := func(seq uint64, v []float32) {
				t.Helper()
				if _, err := ring.Acquire(context.Background(), true); err != nil {
					t.Fatal(err)
				}
				if err := ring.PublishView(v, seq, 0); err != nil {
					t.Fatal(err)
				}
			}

			// A whole file: the block is filtered (a delay of 16 samples).
			publish(0, view[:l.BlockValues()])
			out, err := be.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.Samples[16*l.Channels], values[0]; got != want {
				t.Fatalf("the view's first sample came out as %v, want %v", got, want)
			}
			if tc.block > 0 && (ch.split == nil || ch.split.pool != nil || ch.split.cuts == 0) {
				t.Fatal("one goroutine did not cut the long block of a view")
			}

			// Truncated after the block was published: the backend reads
			// pages the file no longer has.
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			publish(1, view[l.BlockValues():])
			if _, err := be.Next(context.Background()); !errors.Is(err, capture.ErrTruncated) {
				t.Fatalf("Next on a truncated file's view: %v, want capture.ErrTruncated", err)
			}
		})
	}
}

// TestRunOnATruncatedFile truncates a float32 file, taken in place, while
// pipeline.Run reads it: the run ends with capture.ErrTruncated whether
// the source or the backend meets the cut first, and never dies.
func TestRunOnATruncatedFile(t *testing.T) {
	taps := make([]float32, 65)
	taps[32] = 1
	tests := []struct {
		name   string
		stages []stage.Stage
	}{
		{"fir", []stage.Stage{stage.NewFIR(taps, 1)}},
		{"shift, then fir ÷4", []stage.Stage{stage.NewShift(1e3), stage.NewFIR(taps, 4)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const block = 1 << 14
			values := make([]float32, 2*64*block) // 64 blocks of complex samples
			for i := range values {
				values[i] = float32(math.Cos(float64(i) / 5))
			}
			path := writeCF32(t, values)
			src, err := capture.OpenFile(path, "cf32_le", 1e6)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: tc.stages}
			be, err := New(c, block)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			blocks := 0
			st, err := pipeline.Run(context.Background(), src, be, discard{},
				pipeline.Config{BlockSize: block, Complex: true, OutComplex: true, Slots: 8},
				pipeline.Options{OnBlock: func(pipeline.Output, int64) {
					if blocks++; blocks == 2 {
						if err := os.Truncate(path, 0); err != nil {
							t.Error(err)
						}
					}
				}})
			if !errors.Is(err, capture.ErrTruncated) {
				t.Fatalf("after truncation: %v, want capture.ErrTruncated", err)
			}
			t.Log(err)
			if st.BlocksInPlace == 0 {
				t.Error("no block was taken in place")
			}
		})
	}
}

// writeCF32 writes values to a cf32 file and returns its path.
func writeCF32(t *testing.T, values []float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.cf32")
	if err := os.WriteFile(path, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), 4*len(values)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type discard struct{}

func (discard) Write([]float32) error { return nil }

// leaving is a file source that records whether the pipeline left the
// check of its views to the backend, and how many views it reserved;
// ended is closed when View returns its error (the end).
type leaving struct {
	*capture.Raw
	left     int
	reserved atomic.Int32 // on the readers' goroutines
	ended    chan struct{}
}

func (l *leaving) LeaveScan() func([]float32) error {
	l.left++
	return l.Raw.LeaveScan()
}

func (l *leaving) ViewReserved(at int64, values int) ([]float32, error) {
	l.reserved.Add(1)
	return l.Raw.ViewReserved(at, values)
}

func (l *leaving) View(ctx context.Context, n int) ([]float32, error) {
	v, err := l.Raw.View(ctx, n)
	if err != nil && l.ended != nil {
		close(l.ended)
		l.ended = nil
	}
	return v, err
}

// gated is a sink whose first Write waits until the source has ended, so
// that a ring of two slots under PolicyDrop drops the blocks after them.
type gated struct{ ended <-chan struct{} }

func (g gated) Write([]float32) error { <-g.ended; return nil }

// TestViewsCheckedOnce runs float32 files with NaN and ±Inf values at
// segment and block edges through chains on one goroutine, split into
// segments, per channel, fanned out, with a first stage that runs whole
// and watched, the blocks taken one or several at once (Readers), twice
// on the same backend: the backend checks the views it takes in place,
// and the source counts every such value once, and warns once. Under
// PolicyDrop the source keeps its check, as no backend reads a dropped
// view.
func TestViewsCheckedOnce(t *testing.T) {
	taps := make([]float32, 65)
	taps[32] = 1
	const block = 1 << 15
	fir := []stage.Stage{stage.NewFIR(taps, 1)}
	tests := []struct {
		name     string
		stages   []stage.Stage
		channels int
		workers  int
		readers  int // 1: the blocks one at a time
		drop     bool
		watch    bool // a watch reads the whole block first: it is checked whole
	}{
		{"fir, one goroutine", fir, 1, 1, 1, false, false},
		{"fir, segments on two goroutines", fir, 1, 2, 1, false, false},
		{"fir, segments on four goroutines, blocks taken two at once", fir, 1, 4, 2, false, false},
		{"shift, then fir ÷4", []stage.Stage{stage.NewShift(1e3), stage.NewFIR(taps, 4)}, 1, 2, 1, false, false},
		{"channelize 4, then fir on each", []stage.Stage{stage.NewChannelize(taps[:64], 4, 4), stage.NewFIR(taps, 1)}, 1, 2, 1, false, false},
		{"two channels", fir, 2, 2, 1, false, false},
		{"select first, which runs whole", []stage.Stage{stage.NewSelect(1), stage.NewFIR(taps, 1)}, 2, 2, 1, false, false},
		{"dropping blocks", fir, 1, 2, 1, true, false},
		{"fir, segments on two goroutines, watched", fir, 1, 2, 1, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Five blocks and a short one, too short to cut.
			values := make([]float32, 2*tc.channels*(5*block+1000))
			for i := range values {
				values[i] = float32(math.Cos(float64(i) / 5))
			}
			nan, inf := float32(math.NaN()), float32(math.Inf(1))
			special := []int{0, 1, 2*segmentGrain - 1, 2 * segmentGrain, 2*segmentGrain + 1, 2*tc.channels*block - 1,
				2 * tc.channels * block, 3*2*tc.channels*block + 12345, len(values) - 1000, len(values) - 1}
			for k, i := range special {
				values[i] = map[bool]float32{false: nan, true: -inf}[k%2 == 1]
			}
			values[len(values)/2] = inf
			want := uint64(len(special) + 1)
			path := writeCF32(t, values)
			c := stage.Chain{SampleRate: 1e6, Complex: true, Channels: tc.channels, Stages: tc.stages}
			ch, err := newChain(c, block, tc.workers)
			if err != nil {
				t.Fatal(err)
			}
			be := &backend{chain: ch, desc: ch.desc}
			defer be.Close()
			if tc.watch {
				be.Watch(func(int, []float32) {})
			}
			cfg := pipeline.Config{BlockSize: block, Channels: tc.channels, Complex: true, OutComplex: true, Slots: 4, Readers: tc.readers}
			if tc.drop {
				cfg.Policy, cfg.Slots = pipeline.PolicyDrop, 2
			}
			for run := range 2 {
				src, err := capture.OpenFile(path, "cf32_le", 1e6)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				warned := 0
				src.(*capture.Raw).SetNonFiniteHandler(func(uint64) { warned++ })
				ls := &leaving{Raw: src.(*capture.Raw)}
				var snk pipeline.Sink = discard{}
				if tc.drop {
					ls.ended = make(chan struct{})
					snk = gated{ended: ls.ended}
				}
				cuts := int64(0)
				if ch.split != nil {
					cuts = ch.split.cuts
				}
				st, err := pipeline.Run(context.Background(), ls, be, snk, cfg, pipeline.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if left := map[bool]int{false: 1, true: 0}[tc.drop]; ls.left != left || st.BlocksInPlace != st.Blocks || st.Blocks+st.DroppedBlocks != 6 {
					t.Errorf("run %d: LeaveScan called %d times, want %d; %d of %d blocks taken in place, %d dropped",
						run, ls.left, left, st.BlocksInPlace, st.Blocks, st.DroppedBlocks)
				}
				if (ls.reserved.Load() > 0) != (tc.readers > 1) {
					t.Errorf("run %d: %d views reserved with %d readers", run, ls.reserved.Load(), tc.readers)
				}
				if tc.drop && st.DroppedBlocks == 0 {
					t.Errorf("run %d: no block dropped", run)
				}
				if tc.workers > 1 && tc.channels == 1 && ch.split.cuts == cuts {
					t.Errorf("run %d: no block was cut into segments", run)
				}
				if n := src.(capture.NonFiniteCounter).NonFinite(); n != want || warned != 1 {
					t.Errorf("run %d: counted %d non-finite values, want %d; warned %d times, want once", run, n, want, warned)
				}
			}
		})
	}
}

// TestPreferRead: the CPU backend has a file read rather than mapped only
// when touching its mapping costs more than mapCostRatio reads.
func TestPreferRead(t *testing.T) {
	b := &backend{}
	for _, tc := range []struct {
		touch, read time.Duration
		want        bool
	}{
		{time.Millisecond, 4 * time.Millisecond, false},     // a host with nested paging in hardware
		{6 * time.Millisecond, 4 * time.Millisecond, false}, // at the ratio: the views spread over the cores
		{7 * time.Millisecond, 4 * time.Millisecond, true},
		{8 * time.Millisecond, 1600 * time.Microsecond, true}, // the development VM, a file in small folios
	} {
		if got := b.PreferRead(tc.touch, tc.read); got != tc.want {
			t.Errorf("PreferRead(%v, %v) = %v, want %v", tc.touch, tc.read, got, tc.want)
		}
	}
}
