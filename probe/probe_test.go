package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

func cpuPath(t *testing.T, taps []float32, complex bool, block int) Path {
	return Path{Name: "cpu", New: func() (pipeline.Backend, error) {
		f, err := filter.NewFIR(taps, complex, block)
		if err != nil {
			return nil, err
		}
		return cpu.NewBackend(f), nil
	}}
}

func TestProbeCPUPathVerifiesAndTimes(t *testing.T) {
	taps := []float32{0.25, 0.5, 0.25, -0.1}
	for _, complex := range []bool{false, true} {
		cfg := Config{BlockSize: 64, Taps: taps, Complex: complex, Blocks: 300, Warmup: 20, Period: 20 * time.Microsecond, Seed: 7}
		rs, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, complex, 64)})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		// A loaded CI machine may drop blocks at this rate; every block is
		// either verified or counted as dropped.
		if r.Verified+int(r.Dropped) != 320 || r.Mismatches != 0 || r.Unverified != 0 || r.Gaps != r.Dropped {
			t.Fatalf("result %+v", r)
		}
		if !(r.P50 > 0 && r.P50 <= r.P99 && r.P99 <= r.Max) {
			t.Fatalf("percentiles not ordered: %+v", r)
		}
	}
}

// wrongBackend adds 1 to every output: the probe must catch it.
type wrongBackend struct{ pipeline.Backend }

func (w wrongBackend) Next(ctx context.Context) (pipeline.Output, error) {
	o, err := w.Backend.Next(ctx)
	for i := range o.Samples {
		o.Samples[i]++
	}
	return o, err
}

func TestProbeFailsLoudlyOnMismatch(t *testing.T) {
	taps := []float32{1, 2}
	p := cpuPath(t, taps, false, 32)
	bad := Path{Name: "bad", New: func() (pipeline.Backend, error) {
		be, err := p.New()
		return wrongBackend{be}, err
	}}
	rs, err := Run(context.Background(), Config{BlockSize: 32, Taps: taps, Blocks: 10}, []Path{bad})
	if !errors.Is(err, ErrMismatch) || rs[0].Mismatches != 10 {
		t.Fatalf("err %v, result %+v", err, rs)
	}
}

// TestProbeUsesRealtime checks that the producer's thread settings reach
// the pipeline: a locked thread runs as before, and a CPU the process cannot
// use fails the run, in both the block and the soak mode.
func TestProbeUsesRealtime(t *testing.T) {
	taps := []float32{0.5, 0.5}
	for _, soak := range []bool{false, true} {
		cfg := Config{BlockSize: 32, Taps: taps, Blocks: 50, Seed: 3, Realtime: pipeline.Realtime{LockThread: true}}
		if soak {
			// 256 slots of 1 ms: a loaded CI machine's stalls drop nothing.
			cfg.Blocks, cfg.Duration, cfg.Period, cfg.Slots = 0, 30*time.Millisecond, time.Millisecond, 256
		}
		rs, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, false, 32)})
		if err != nil || rs[0].Verified == 0 {
			t.Fatalf("soak=%v locked thread: %v, %+v", soak, err, rs)
		}
		cfg.Realtime = pipeline.Realtime{CPUs: []int{-1}}
		if _, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, false, 32)}); err == nil || !strings.Contains(err.Error(), "realtime CPU -1") {
			t.Fatalf("soak=%v bad CPU: %v", soak, err)
		}
	}
}

func TestProbeBadConfig(t *testing.T) {
	for _, c := range []Config{{BlockSize: 0, Taps: []float32{1}, Blocks: 1}, {BlockSize: 8, Blocks: 1}, {BlockSize: 8, Taps: []float32{1}}, {BlockSize: 8, Taps: []float32{1}, Blocks: 1, Period: -1}} {
		if _, err := Run(context.Background(), c, nil); err == nil || !strings.HasPrefix(err.Error(), "probe:") {
			t.Fatalf("config %+v: %v", c, err)
		}
	}
}

func TestReportFiles(t *testing.T) {
	taps := []float32{0.5, 0.5}
	rs, err := Run(context.Background(), Config{BlockSize: 16, Taps: taps, Blocks: 200}, []Path{cpuPath(t, taps, false, 16)})
	if err != nil {
		t.Fatal(err)
	}
	rs = append(rs, rs[0])
	rs[0].Path, rs[1].Path = "zero-copy", "explicit"
	rs[1].P50 = rs[0].P50 * 4
	rep := NewReport("test", rs)
	if got := rep.Ratios["explicit/zero-copy"]; got < 3.99 || got > 4.01 {
		t.Fatalf("ratio %v", got)
	}
	dir := t.TempDir()
	if err := rep.WriteJSON(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	if err := WriteHistogram(filepath.Join(dir, "h.png"), "test", rs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"r.json", "h.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	var sb strings.Builder
	rep.WriteTable(&sb)
	if !strings.Contains(sb.String(), "p50 ratio explicit/zero-copy = 4.00x") {
		t.Fatalf("table:\n%s", sb.String())
	}
}

func TestCheckerCountsInOrderAndReportsQueueErrors(t *testing.T) {
	cfg := Config{BlockSize: 4, Taps: []float32{1}}
	src := newSource(cfg, 1)
	ver, err := newVerifier(cfg, src, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	count := func(_ uint64, vd verdict, e float64) { res.count(vd, e, 1e-5) }
	chk, err := startChecker(cfg, 1, ver, count)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, 4)
	for seq := 0; seq < 3*checkerSlots; seq++ { // more than the ring holds: submit waits
		if _, err := src.Read(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		out := slices.Clone(in) // one tap of 1: output = input
		if seq == 7 {
			out[2] += 1 // a wrong block
		}
		chk.submit(context.Background(), pipeline.Output{Seq: uint64(seq), Samples: out})
	}
	if err := chk.close(); err != nil {
		t.Fatal(err)
	}
	if res.Verified != 3*checkerSlots || res.Mismatches != 1 || res.Unverified != 0 {
		t.Fatalf("verified %d, mismatches %d, unverified %d", res.Verified, res.Mismatches, res.Unverified)
	}

	// A cancelled run while the ring is full: the error reaches close.
	chk, err = startChecker(cfg, 1, ver, count)
	if err != nil {
		t.Fatal(err)
	}
	chk.ring.Close() // Acquire now fails at once
	chk.submit(context.Background(), pipeline.Output{Seq: 0, Samples: in})
	if err := chk.close(); err == nil {
		t.Fatal("queue error lost")
	}
}

func TestRecordSlotsCoverTheCheckLag(t *testing.T) {
	for _, tt := range []struct {
		slots  int
		period time.Duration
		want   int
	}{
		{0, 0, 1024}, {64, 0, 1024}, {1024 - checkerSlots, 0, 1024}, {1024 - checkerSlots + 1, 0, 2048}, {1024, 0, 2048}, {4096, 0, 8192},
		// Paced: a second of blocks, up to maxRecordSlots.
		{64, 20 * time.Microsecond, 65536}, {64, 10 * time.Microsecond, 131072}, {64, time.Microsecond, maxRecordSlots},
		{64, 10 * time.Millisecond, 1024}, {4096, 100 * time.Microsecond, 16384},
	} {
		got := recordSlots(Config{Slots: tt.slots, Period: tt.period})
		if got != tt.want || got < max(tt.slots, 64)+checkerSlots {
			t.Errorf("slots %d, period %v: %d records, want %d", tt.slots, tt.period, got, tt.want)
		}
	}
}

// TestRetuneEveryChecked: periodic retunes of the cpu backend, alternating
// two tap sets, are followed by the shadow check at the sample each one
// reports: no block mismatches (without the switch the
// check fails, as the second set is the first × -0.5).
func TestRetuneEveryChecked(t *testing.T) {
	taps := []float32{0.1, 0.2, 0.4, 0.2, 0.1, -0.05, 0.3}
	for _, tc := range []struct{ complex, spin bool }{{false, false}, {true, false}, {false, true}} {
		complex := tc.complex
		cfg := Config{BlockSize: 64, Taps: taps, Complex: complex, Blocks: 1500, Warmup: 10, Period: 100 * time.Microsecond,
			Slots: 64, Seed: 3, RetuneEvery: 5 * time.Millisecond, RetuneSpin: tc.spin}
		path := Path{Name: "cpu", New: func() (pipeline.Backend, error) {
			return cpu.New(stage.FIR(1, complex, taps), 64)
		}}
		rs, err := Run(context.Background(), cfg, []Path{path})
		if err != nil {
			t.Fatalf("complex=%v: %v", complex, err)
		}
		r := rs[0]
		// A loaded machine may drop blocks (and lose the check's history
		// after them), never mismatch.
		if r.Retunes == 0 || r.Mismatches != 0 || r.Verified == 0 {
			t.Errorf("%+v: retunes %d, verified %d, unverified %d, dropped %d, mismatches %d (worst %g)", tc, r.Retunes, r.Verified, r.Unverified, r.Dropped, r.Mismatches, r.MaxRelErr)
		}
		// (The CPU backend retunes from the next block it takes, which may
		// have waited in the ring since before the call: its own latency
		// may be longer than the time from the call.)
		if r.RetuneBlockP50 <= 0 {
			t.Errorf("%+v: the retuned block's own latency p50 %.1f µs", tc, r.RetuneBlockP50)
		}
		t.Logf("%+v: %d retunes, apply p50 %.1f µs, call p50 %.1f µs, the block's own p50 %.1f µs", tc, r.Retunes, r.RetuneApplyP50, r.RetuneCallP50, r.RetuneBlockP50)
	}
	if err := (Config{BlockSize: 64, Taps: taps, Duration: time.Second, RetuneEvery: time.Millisecond}).validate(); err == nil {
		t.Error("retunes in a soak accepted")
	}
	if err := (Config{BlockSize: 64, Taps: taps, Blocks: 10, RetuneSpin: true}).validate(); !errors.Is(err, errRetuneConfig) {
		t.Errorf("--retune-spin without a retune period: %v", err)
	}
}

// TestRetuneEveryChain: a chain's periodic retunes (its first shift
// between its frequency and the opposite; a chain without a shift its
// first fir's taps) are followed by the shadow check, which retunes the
// CPU chain at the frame each one reports: no block mismatches, through
// decimation and a shift whose phase carries on across the retunes.
func TestRetuneEveryChain(t *testing.T) {
	taps := []float32{0.1, 0.2, 0.4, 0.2, 0.1, -0.05, 0.3, 0.02, -0.1}
	for _, tc := range []struct {
		name   string
		stages []stage.Stage
	}{
		{"shift+fir/4", []stage.Stage{stage.NewShift(-1.25e5), stage.NewFIR(taps, 4)}},
		{"fir/2+shift", []stage.Stage{stage.NewFIR(taps, 2), stage.NewShift(3e4)}},
		{"fir/2", []stage.Stage{stage.NewFIR(taps, 2)}},
	} {
		c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: tc.stages}
		cfg := Config{BlockSize: 64, Chain: c, Complex: true, Blocks: 1500, Warmup: 10, Period: 100 * time.Microsecond,
			Slots: 64, Seed: 3, RetuneEvery: 5 * time.Millisecond}
		path := Path{Name: "cpu", New: func() (pipeline.Backend, error) { return cpu.New(c, 64) }}
		rs, err := Run(context.Background(), cfg, []Path{path})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := rs[0]
		if r.Retunes == 0 || r.Mismatches != 0 || r.Verified == 0 {
			t.Errorf("%s: retunes %d, verified %d, unverified %d, dropped %d, mismatches %d (worst %g)", tc.name, r.Retunes, r.Verified, r.Unverified, r.Dropped, r.Mismatches, r.MaxRelErr)
		}
		t.Logf("%s: %d retunes, apply p50 %.1f µs", tc.name, r.Retunes, r.RetuneApplyP50)
	}
	bare := Config{BlockSize: 64, Chain: stage.Chain{SampleRate: 1, Stages: []stage.Stage{stage.NewResample([]float32{1, 1}, 3, 2)}}, Blocks: 10, RetuneEvery: time.Millisecond}
	if _, err := newRetuner(bare); err == nil {
		t.Error("a chain with nothing to retune accepted")
	}
}

// The source counts a block as late when it starts more than a period
// after its time, and fills every block from its noise table either way;
// its pace is the mean time from one block's start to the next's.
func TestSourceCountsLateBlocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		since time.Duration // the schedule started this long ago
		late  int64
	}{
		{"on time", 0, 0},
		{"a second behind", time.Second, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BlockSize: 64, Complex: true, Period: 20 * time.Millisecond, Seed: 3}
			s := newSource(cfg, 2)
			s.n, s.start = 1, time.Now().Add(-tc.since) // block 1 is due a period after the start
			rec, err := s.next(context.Background(), 128)
			if err != nil {
				t.Fatal(err)
			}
			s.done()
			if got := s.late.Load(); got != tc.late {
				t.Errorf("late %d, want %d", got, tc.late)
			}
			// Block 1 started at its time or later: the pace is the time
			// from block 0's start to block 1's.
			if p := s.pace(); p < cfg.Period || p < tc.since {
				t.Errorf("pace %v, want at least the period %v and the lag %v", p, cfg.Period, tc.since)
			}
			if slices.Equal(rec, make([]float32, 128)) {
				t.Error("the block is all zeros")
			}
		})
	}
}

// The source asks for a block's tag once the block is due, not before
// its wait: a retune accepted during the wait applies to that block.
func TestSourceTagsWhenDue(t *testing.T) {
	cfg := Config{BlockSize: 64, Complex: true, Period: 20 * time.Millisecond, Seed: 3}
	s := newSource(cfg, 2)
	s.n, s.start = 1, time.Now() // block 1 is due a period after the start
	var asked time.Duration
	dst := make([]uint64, 128)
	if _, err := s.ReadWords(context.Background(), dst, func() uint32 {
		asked = time.Since(s.start)
		return 1
	}); err != nil {
		t.Fatal(err)
	}
	if asked < cfg.Period {
		t.Fatalf("tag asked for %v after the start, before the block was due (%v)", asked, cfg.Period)
	}
}

// BenchmarkSourceWords is the source's own work a block on the zero-copy
// path, unpaced: a 2048-sample complex block's window of the noise table,
// its record, and its tagged words into a slot (ordinary memory here, not
// the mapped ring). Allocates nothing.
func BenchmarkSourceWords(b *testing.B) {
	cfg := Config{BlockSize: 2048, Complex: true, Seed: 1}
	s := newSource(cfg, 2)
	dst := make([]uint64, 4096)
	ctx := context.Background()
	b.SetBytes(int64(8 * len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ReadWords(ctx, dst, func() uint32 { return 1 }); err != nil {
			b.Fatal(err)
		}
	}
}
