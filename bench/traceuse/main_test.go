package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	exptrace "golang.org/x/exp/trace"
)

// spin keeps a core busy for d.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// TestSummarise traces two goroutines that each spin 30 ms at once and
// finds them: named by the function they started in, each running about
// that long, with two running at once for part of the trace and of its
// timeline.
func TestSummarise(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs 2 Ps")
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	for range 2 {
		go func() { // started here, not in WaitGroup.Go: named by this test
			defer wg.Done()
			spin(30 * time.Millisecond)
		}()
	}
	wg.Wait()
	trace.Stop()
	s, err := summarise(&buf, 5*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	var spinners int
	for g, ns := range s.byG {
		if strings.Contains(s.names[g], "TestSummarise") && ns > 20e6 {
			spinners++
		}
	}
	// The timeline: some 5 ms interval ran both spinners most of the time.
	busiest := 0.0
	for _, ns := range s.running {
		busiest = max(busiest, ns/float64(s.bin))
	}
	if spinners != 2 || s.atOnce[2] < 10e6 || s.procs != runtime.GOMAXPROCS(0) || s.mean() <= 1 || busiest < 1.5 {
		var out bytes.Buffer
		s.write(&out)
		t.Fatalf("%d spinners found, two at once %.1f ms:\n%s", spinners, s.atOnce[2]/1e6, out.String())
	}
}

// TestRegions traces three kinds of region: one that spins (on a core
// throughout), one that sleeps (off a core for most of it) and one that
// runs a GC, and reads each back with its count, length and off-core time.
func TestRegions(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 5 {
		trace.WithRegion(ctx, "spin", func() { spin(2 * time.Millisecond) })
		trace.WithRegion(ctx, "sleep", func() { time.Sleep(3 * time.Millisecond) })
	}
	trace.WithRegion(ctx, "gc", runtime.GC)
	trace.Stop()
	s, err := summarise(&buf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s.write(&out)
	check := func(typ string, n int, minNs, minOff, maxOff float64, gc bool) {
		t.Helper()
		rs := s.regions[typ]
		if len(rs) != n {
			t.Fatalf("%d %q regions, want %d:\n%s", len(rs), typ, n, out.String())
		}
		for _, r := range rs {
			if r.ns < minNs || r.offCPU < minOff || r.offCPU > maxOff || r.gc != gc {
				t.Fatalf("%q region %+v: want at least %.0f ns, %.0f..%.0f ns off a core, gc %v:\n%s", typ, r, minNs, minOff, maxOff, gc, out.String())
			}
		}
	}
	check("spin", 5, 2e6, 0, 1e6, false)
	check("sleep", 5, 3e6, 2e6, 1e9, false)
	check("gc", 1, 0, 0, 1e9, true)
	if !strings.Contains(out.String(), "regions (µs)") || !strings.Contains(out.String(), "sleep") {
		t.Fatalf("no region table:\n%s", out.String())
	}
}

// -gaps lists the longest times off a core, longest first, with the
// state a goroutine left for: a goroutine that sleeps 3 ms five times
// is off a core for at least 3 ms each time, waiting.
func TestGaps(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		time.Sleep(3 * time.Millisecond)
	}
	trace.Stop()
	s, err := summarise(&buf, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s.write(&out)
	if len(s.gaps) != 3 {
		t.Fatalf("%d gaps, want 3:\n%s", len(s.gaps), out.String())
	}
	for i, p := range s.gaps {
		if p.ns < 3e6 || p.to != exptrace.GoWaiting || i > 0 && p.ns > s.gaps[i-1].ns {
			t.Fatalf("gap %d %+v: want at least 3 ms waiting, longest first:\n%s", i, p, out.String())
		}
	}
	if !strings.Contains(out.String(), "longest times a goroutine was off a core") {
		t.Fatalf("no gaps listed:\n%s", out.String())
	}
}
