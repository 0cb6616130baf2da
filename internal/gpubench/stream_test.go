package gpubench

import (
	"math"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
)

func TestUnionLength(t *testing.T) {
	for _, tc := range []struct {
		name string
		iv   [][2]float64
		want float64
	}{
		{"none", nil, 0},
		{"one", [][2]float64{{1, 3}}, 2},
		{"disjoint", [][2]float64{{5, 6}, {1, 3}}, 3},
		{"overlap", [][2]float64{{1, 4}, {2, 6}, {3, 5}}, 5},
		{"nested", [][2]float64{{0, 10}, {2, 3}}, 10},
		{"touching", [][2]float64{{0, 1}, {1, 2}}, 2},
		{"empty and reversed", [][2]float64{{1, 1}, {3, 2}, {4, 5}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unionLength(tc.iv); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStreamSummarize(t *testing.T) {
	// Three chunks on three streams: H2D back to back (0-10, 10-20,
	// 20-30), each kernel 2 ms after its H2D, each D2H 10 ms after that.
	var tl []ChunkTiming
	for k := range 3 {
		s := float64(10 * k)
		tl = append(tl, ChunkTiming{Chunk: k, Stream: k, Samples: 100,
			H2D: [2]float64{s, s + 10}, Kernel: [2]float64{s + 10, s + 12}, D2H: [2]float64{s + 12, s + 22}})
	}
	r := StreamResult{SamplesIn: 300, SamplesOut: 300, Complex: true, PinnedH2D: &CopyResult{GiBps: 2}}
	r.summarize(tl, 0.001)
	if r.Chunks != 3 || r.Drops != 0 || r.BytesIn != 300*8 || r.BytesOut != 300*8 {
		t.Fatalf("counters %+v", r)
	}
	if math.Abs(r.GPUSeconds-0.042) > 1e-12 {
		t.Fatalf("GPU seconds %v, want 0.042", r.GPUSeconds)
	}
	if r.Stages.H2D.BusyMs != 30 || r.Stages.Kernel.BusyMs != 6 || r.Stages.D2H.BusyMs != 30 || r.Stages.H2D.SumMs != 30 {
		t.Fatalf("stages %+v", r.Stages)
	}
	if want := 66.0 / 42; math.Abs(r.Overlap-want) > 1e-12 {
		t.Fatalf("overlap %v, want %v", r.Overlap, want)
	}
	in := float64(300*8) / 0.001 / GiB
	if math.Abs(r.InGiBps-in) > 1e-9 || math.Abs(r.InOutGiBps-2*in) > 1e-9 || math.Abs(r.PinnedFraction-in/2) > 1e-9 {
		t.Fatalf("rates %v %v %v", r.InGiBps, r.InOutGiBps, r.PinnedFraction)
	}
	if math.Abs(r.GSps-300/0.001/1e9) > 1e-12 {
		t.Fatalf("GS/s %v", r.GSps)
	}
	var empty StreamResult
	empty.summarize(nil, 0)
	if empty.Overlap != 0 || empty.InGiBps != 0 {
		t.Fatalf("empty run %+v", empty)
	}
}

func TestStreamConfigValidate(t *testing.T) {
	ok := StreamConfig{Taps: []float32{1, 2, 3}, ChunkSamples: 1024, Streams: 3}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if ok.buffers() != 6 {
		t.Fatalf("default buffers %d, want 6", ok.buffers())
	}
	if c := (StreamConfig{Streams: 1}); c.buffers() != 3 {
		t.Fatalf("default buffers for 1 stream %d, want 3", c.buffers())
	}
	for _, tc := range []struct {
		name string
		mod  func(*StreamConfig)
		want string
	}{
		{"no taps", func(c *StreamConfig) { c.Taps = nil }, "no taps"},
		{"nan tap", func(c *StreamConfig) { c.Taps = []float32{float32(math.NaN())} }, "tap 0"},
		{"too many taps", func(c *StreamConfig) { c.Taps = make([]float32, cuda.BatchMaxTaps+1) }, "exceeds the limit"},
		{"chunk", func(c *StreamConfig) { c.ChunkSamples = 0 }, "chunk must be > 0"},
		{"huge chunk", func(c *StreamConfig) { c.ChunkSamples = 1 << 30 }, "exceeds the limit"},
		{"streams", func(c *StreamConfig) { c.Streams = 0 }, "streams must be"},
		{"buffers", func(c *StreamConfig) { c.Buffers = 1 }, "buffers must be"},
		{"device", func(c *StreamConfig) { c.Device = -2 }, "device must be"},
		{"ref", func(c *StreamConfig) { c.RefReps = 2; c.RefBytes = 100 }, "reference copy size"},
		{"ref reps", func(c *StreamConfig) { c.RefReps = -1 }, "reference reps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			if err := c.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
