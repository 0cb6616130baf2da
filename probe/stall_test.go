package probe

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The watch fires once, at the first measured block over the threshold or
// after a gap, and never in the warmup.
func TestStallWatch(t *testing.T) {
	type blk struct {
		seq uint64
		ns  int64
	}
	type fire struct {
		seq     uint64
		dropped uint64
	}
	for _, tc := range []struct {
		name   string
		blocks []blk
		want   []fire
	}{
		{"none", []blk{{0, 5e6}, {1, 10}, {2, 10}, {3, 10}}, nil},
		{"slow block", []blk{{0, 10}, {1, 10}, {2, 10}, {3, 2e6}, {4, 3e6}}, []fire{{3, 0}}},
		{"a gap", []blk{{0, 10}, {1, 10}, {2, 10}, {3, 10}, {7, 10}, {8, 5e6}}, []fire{{7, 3}}},
		{"warmup gap and stall ignored", []blk{{0, 10}, {1, 9e6}, {2, 10}, {3, 10}}, nil},
		{"a gap from the warmup into the measured blocks", []blk{{0, 10}, {4, 10}}, []fire{{4, 2}}},
		{"a gap that ends at the first measured block", []blk{{0, 10}, {2, 10}, {3, 10}}, nil},
	} {
		var got []fire
		w := newStallWatch(Config{Warmup: 2, StallOver: time.Millisecond, OnStall: func(seq uint64, _ time.Duration, dropped uint64) {
			got = append(got, fire{seq, dropped})
		}})
		for _, b := range tc.blocks {
			w.seen(b.seq, b.ns)
		}
		if len(got) != len(tc.want) || len(got) == 1 && got[0] != tc.want[0] {
			t.Errorf("%s: fired %v, want %v", tc.name, got, tc.want)
		}
	}
	var none *stallWatch // no OnStall: a nil watch ignores every block
	none.seen(5, 1e9)
	if newStallWatch(Config{}) != nil {
		t.Error("a watch without OnStall")
	}
}

// A soak calls OnStall once, on a measured block: with a threshold no
// block can beat, the first one.
func TestSoakOnStall(t *testing.T) {
	taps := []float32{0.25, 0.5, 0.25}
	cfg := soakConfig(taps)
	cfg.StallOver = time.Nanosecond
	var seqs []uint64
	cfg.OnStall = func(seq uint64, lat time.Duration, _ uint64) {
		seqs = append(seqs, seq)
		if lat <= 0 {
			t.Errorf("stall latency %v", lat)
		}
	}
	_, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, false, 64)})
	if err != nil && !(errors.Is(err, ErrLoss) && !errors.Is(err, ErrMismatch)) {
		t.Fatal(err)
	}
	if len(seqs) != 1 || seqs[0] < uint64(cfg.Warmup) {
		t.Fatalf("OnStall at %v, want once, at a measured block (from %d)", seqs, cfg.Warmup)
	}
}
