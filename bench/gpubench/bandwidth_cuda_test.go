//go:build cuda

package gpubench

import (
	"context"
	"errors"
	"testing"
)

// TestBandwidthQuick runs every bandwidth test small (16 MiB x 2) and
// checks that each figure is there and positive. Whether pinned beats
// pageable is the benchmark's business, not asserted here.
func TestBandwidthQuick(t *testing.T) {
	skipWithoutGPU(t)
	res, err := Bandwidth(context.Background(), BandwidthConfig{Size: 16 << 20, Reps: 2, Warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copies) != 6 {
		t.Fatalf("%d copy results, want 6", len(res.Copies))
	}
	for _, c := range res.Copies {
		if !(c.GiBps > 0 && c.BestGiBps > 0 && c.MedianGiBps > 0 && c.HostGiBps > 0) {
			t.Errorf("%s %s: %+v", c.Memory, c.Direction, c)
		}
	}
	if len(res.PinnedOverPageable) != 2 {
		t.Errorf("ratios %v", res.PinnedOverPageable)
	}
	if b := res.Bidir; b == nil || !(b.H2DGiBps > 0 && b.D2HGiBps > 0 && b.TotalGiBps > 0) {
		t.Errorf("bidir %+v", b)
	}
	for _, m := range res.Mapped {
		if !(m.GiBps > 0 && m.Best > 0) {
			t.Errorf("mapped %+v", m)
		}
	}
	o := res.Overlap
	if o == nil || len(o.Runs) != 3 || o.KernelIters < 1 || !(o.H2DMs > 0 && o.KernelMs > 0 && o.D2HMs > 0) {
		t.Fatalf("overlap %+v", o)
	}
	for _, r := range o.Runs {
		if !(r.Seconds > 0 && r.GiBps > 0 && r.Speedup > 0) {
			t.Errorf("overlap run %+v", r)
		}
	}
	t.Logf("pinned/pageable %v, bidir %+v, mapped %+v, overlap %+v", res.PinnedOverPageable, res.Bidir, res.Mapped, o.Runs)
}

func TestBandwidthSubsetAndCancel(t *testing.T) {
	skipWithoutGPU(t)
	res, err := Bandwidth(context.Background(), BandwidthConfig{Size: 1 << 20, Reps: 1, Tests: []string{BWMapped}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copies) != 0 || res.Bidir != nil || res.Overlap != nil || len(res.Mapped) != 2 {
		t.Fatalf("subset: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Bandwidth(ctx, BandwidthConfig{Size: 1 << 20, Reps: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v", err)
	}
}
