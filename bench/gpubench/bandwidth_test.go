package gpubench

import (
	"math"
	"strings"
	"testing"
)

func TestBandwidthConfigValidate(t *testing.T) {
	ok := BandwidthConfig{Size: 256 << 20, Reps: 20, Warmup: 3}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*BandwidthConfig)
		want string
	}{
		{"small", func(c *BandwidthConfig) { c.Size = 4096 }, "below the minimum"},
		{"pages", func(c *BandwidthConfig) { c.Size = 1<<20 + 1 }, "4 KiB pages"},
		{"reps", func(c *BandwidthConfig) { c.Reps = 0 }, "reps must be > 0"},
		{"warmup", func(c *BandwidthConfig) { c.Warmup = -1 }, "warmup must be >= 0"},
		{"chunks", func(c *BandwidthConfig) { c.OverlapChunks = 300 }, "overlap chunks"},
		{"device", func(c *BandwidthConfig) { c.Device = -1 }, "device must be >= 0"},
		{"test", func(c *BandwidthConfig) { c.Tests = []string{"copy", "nope"} }, `unknown test "nope"`},
		{"streams", func(c *BandwidthConfig) { c.OverlapStreams = []int{1, 0} }, "stream count 0"},
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

func TestBandwidthConfigDefaults(t *testing.T) {
	var c BandwidthConfig
	if c.overlapChunks() != 16 || len(c.overlapStreams()) != 3 {
		t.Fatalf("defaults: %d chunks, streams %v", c.overlapChunks(), c.overlapStreams())
	}
	for _, tt := range BandwidthTests {
		if !c.runs(tt) {
			t.Errorf("empty Tests should run %s", tt)
		}
	}
	c.Tests = []string{BWCopy}
	if !c.runs(BWCopy) || c.runs(BWMapped) {
		t.Fatal("Tests subset not honoured")
	}
}

func TestBandwidthRatiosAndSpeedups(t *testing.T) {
	r := BandwidthResult{Copies: []CopyResult{
		{Memory: MemPageable, Direction: DirH2D, GiBps: 16.9},
		{Memory: MemPinned, Direction: DirH2D, GiBps: 51.5},
		{Memory: MemPinned, Direction: DirD2H, GiBps: 50},
	}}
	r.fillRatios()
	if got := r.PinnedOverPageable[DirH2D]; math.Abs(got-51.5/16.9) > 1e-12 {
		t.Fatalf("h2d ratio %v", got)
	}
	if _, ok := r.PinnedOverPageable[DirD2H]; ok {
		t.Fatal("d2h ratio without a pageable figure")
	}
	if _, ok := r.Copy(MemRegistered, DirH2D); ok {
		t.Fatal("Copy found a result that is not there")
	}
	o := OverlapResult{Runs: []OverlapRun{{Streams: 2, Seconds: 2}, {Streams: 1, Seconds: 3}, {Streams: 4, Seconds: 1}}}
	o.fillSpeedups()
	if o.Runs[0].Speedup != 1.5 || o.Runs[1].Speedup != 1 || o.Runs[2].Speedup != 3 {
		t.Fatalf("speedups %+v", o.Runs)
	}
	o = OverlapResult{Runs: []OverlapRun{{Streams: 2, Seconds: 2}, {Streams: 4, Seconds: 1}}}
	o.fillSpeedups()
	if o.Runs[0].Speedup != 1 || o.Runs[1].Speedup != 2 {
		t.Fatalf("speedups without a 1-stream run %+v", o.Runs)
	}
}

func TestMedianAndGiBps(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.v); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if gibps(GiB, 0.5) != 2 || gibps(1, 0) != 0 {
		t.Fatal("gibps")
	}
}
