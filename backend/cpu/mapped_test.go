package cpu

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestViewOfATruncatedFileIsAnError has the backend take a block in place
// from a mapped file that is then truncated, on one goroutine, split over
// two, and per channel: Next returns capture.ErrTruncated, where reading
// the vanished pages would otherwise kill the process with SIGBUS.
func TestViewOfATruncatedFileIsAnError(t *testing.T) {
	const block = 1 << 16
	taps := make([]float32, 33)
	taps[16] = 1
	tests := []struct {
		name     string
		channels int
		workers  int
	}{
		{"one goroutine", 1, 1},
		{"segments on two goroutines", 1, 2},
		{"two channels", 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
			path := filepath.Join(t.TempDir(), "x.cf32")
			if err := os.WriteFile(path, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), 4*len(values)), 0o644); err != nil {
				t.Fatal(err)
			}
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

type discard struct{}

func (discard) Write([]float32) error { return nil }
