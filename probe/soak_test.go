package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// soakConfig is a short soak on the CPU path: 3 intervals of 100 ms, one
// 64-sample block every 10 µs (10,000 blocks per interval). Under the race
// detector, on a small machine, the CPU path drops blocks at this rate: the
// tests accept losses (reported as ErrLoss) but check the accounting.
func soakConfig(taps []float32) Config {
	return Config{BlockSize: 64, Taps: taps, Warmup: 100, Period: 10 * time.Microsecond, Slots: 256, Seed: 11,
		Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond}
}

// checkAccounting checks what holds for any soak, lossy or not.
func checkAccounting(t *testing.T, r Result, want int) {
	t.Helper()
	s := r.Soak
	if s == nil || len(s.Intervals) != want {
		t.Fatalf("want %d intervals, got %+v", want, s)
	}
	var seen, sched uint64
	for i, iv := range s.Intervals {
		if iv.Index != i+1 || iv.Scheduled != iv.Blocks+iv.Dropped {
			t.Errorf("interval %d: %+v", i, iv)
		}
		seen += iv.Blocks
		sched += iv.Scheduled
	}
	if seen != uint64(r.Blocks) || sched != s.Scheduled || s.Dropped > r.Dropped || s.Gaps != s.Dropped {
		t.Errorf("totals: seen %d blocks %d scheduled %d/%d dropped %d/%d", seen, r.Blocks, sched, s.Scheduled, s.Dropped, r.Dropped)
	}
}

func TestSoakCPUPath(t *testing.T) {
	taps := []float32{0.25, 0.5, 0.25, -0.1, 0.05}
	for _, every := range []int{1, 7} {
		t.Run(fmt.Sprint("verify every ", every), func(t *testing.T) {
			cfg := soakConfig(taps)
			cfg.VerifyEvery = every
			var mu sync.Mutex
			lat := map[int][]int64{} // the same data the histograms saw
			cfg.onLatency = func(k int, ns int64) { lat[k] = append(lat[k], ns) }
			var printed []int
			cfg.OnInterval = func(path string, iv Interval) {
				mu.Lock()
				printed = append(printed, iv.Index)
				mu.Unlock()
				if path != "cpu" {
					t.Errorf("OnInterval path %q", path)
				}
			}
			rs, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, false, 64)})
			// A loaded machine (the race detector) may drop blocks at
			// this rate: that fails the soak, but only as a loss.
			if err != nil && !(errors.Is(err, ErrLoss) && !errors.Is(err, ErrMismatch)) {
				t.Fatal(err)
			}
			r := rs[0]
			checkAccounting(t, r, 3)
			s := r.Soak
			if err == nil && (!s.Passed || s.Dropped != 0) || err != nil && s.Passed {
				t.Errorf("err %v but passed=%v", err, s.Passed)
			}
			if s.Scheduled != 30000 {
				t.Errorf("scheduled %d blocks, want 300 ms / 10 µs = 30000", s.Scheduled)
			}
			if r.Mismatches != 0 || s.Mismatches != 0 {
				t.Fatalf("mismatches on a correct backend: %+v", r)
			}
			if !slices.Equal(printed, []int{1, 2, 3}) {
				t.Errorf("OnInterval saw intervals %v, want 1 2 3 in order", printed)
			}
			measured := 0
			for k, iv := range s.Intervals {
				ref := slices.Clone(lat[k])
				if len(ref) != int(iv.Blocks) || len(ref) == 0 && iv.Dropped == 0 {
					t.Fatalf("interval %d: %d latencies for %d blocks (%d dropped)", k, len(ref), iv.Blocks, iv.Dropped)
				}
				if len(ref) == 0 {
					// A loaded machine (the race detector, other tests)
					// can hold the consumer back for a whole interval.
					t.Logf("interval %d: all %d blocks dropped", k, iv.Dropped)
					continue
				}
				measured++
				slices.Sort(ref)
				for i, got := range []float64{iv.P50, iv.P90, iv.P99, iv.P999} {
					want := float64(sortQuantile(ref, quantiles[i])) / 1e3
					if want < float64(HistRange)/1e3 && (got < want-0.01 || got > want+0.01) {
						t.Errorf("interval %d p%g = %.3f µs, sort says %.3f", k, quantiles[i]*100, got, want)
					}
				}
				if iv.Max != float64(ref[len(ref)-1])/1e3 {
					t.Errorf("interval %d max %v, want %v", k, iv.Max, float64(ref[len(ref)-1])/1e3)
				}
				// Sampling checks 1 block in N (Seq%N == 0); a check
				// without the input copy (lost under heavy drops) counts
				// as unverified. Of the interval's scheduled Seqs about
				// 1 in N qualify, and each dropped block can remove one.
				c, n := iv.Verified+iv.Unverified, int(iv.Scheduled)/every
				if c < n-2-int(iv.Dropped) || c > n+2 || iv.Verified == 0 {
					t.Errorf("interval %d: %d verified, %d unverified of %d blocks, verify every %d", k, iv.Verified, iv.Unverified, iv.Blocks, every)
				}
			}
			if measured == 0 {
				t.Fatal("no interval delivered a block")
			}
			if r.Latencies != nil || r.P50 <= 0 || r.P50 > r.P99 || r.P99 > r.Max {
				t.Errorf("overall figures %+v", r)
			}
		})
	}
}

// seqCorrupt adds 1 to the outputs of blocks lo <= Seq < hi.
type seqCorrupt struct {
	pipeline.Backend
	lo, hi uint64
}

func (b seqCorrupt) Next(ctx context.Context) (pipeline.Output, error) {
	o, err := b.Backend.Next(ctx)
	if o.Seq >= b.lo && o.Seq < b.hi {
		for i := range o.Samples {
			o.Samples[i]++
		}
	}
	return o, err
}

func TestSoakReportsMismatchInOneInterval(t *testing.T) {
	taps := []float32{1, 2, -1}
	for _, every := range []int{1, 4} {
		cfg := soakConfig(taps)
		cfg.VerifyEvery = every
		// Interval 1 (0-based) holds blocks 100+10000 .. 100+20000: all
		// of them are wrong (losses under the race detector come in
		// bursts that could swallow a short run of bad blocks).
		const n = 10000
		lo := uint64(cfg.Warmup + 10000)
		p := cpuPath(t, taps, false, 64)
		bad := Path{Name: "bad", New: func() (pipeline.Backend, error) {
			be, err := p.New()
			return seqCorrupt{be, lo, lo + n}, err
		}}
		// On a loaded 2-core machine under the race detector the check can
		// lag past every input copy of interval 2 (each block unverified):
		// then nothing there was compared, and the run is tried again.
		var rs []Result
		var err error
		for try := 1; ; try++ {
			rs, err = Run(context.Background(), cfg, []Path{bad})
			if len(rs) == 0 {
				t.Fatalf("verify every %d: no result (%v)", every, err)
			}
			if ivs := rs[0].Soak; try == 3 || ivs == nil || len(ivs.Intervals) != 3 || ivs.Intervals[1].Verified > 0 {
				break
			}
			t.Logf("verify every %d, try %d: nothing verified in interval 2 (%v); again", every, try, err)
		}
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "interval 2:") {
			t.Fatalf("verify every %d: err %v, want a mismatch in interval 2", every, err)
		}
		r := rs[0]
		checkAccounting(t, r, 3)
		ivs := r.Soak.Intervals
		if ivs[0].Mismatches != 0 || ivs[1].Mismatches == 0 || ivs[2].Mismatches != 0 || r.Soak.Passed {
			t.Fatalf("verify every %d: mismatches per interval %d %d %d, passed %v", every,
				ivs[0].Mismatches, ivs[1].Mismatches, ivs[2].Mismatches, r.Soak.Passed)
		}
		// Blocks dropped at capture are not compared; the others are.
		if want := n / every; ivs[1].Dropped == 0 && ivs[1].Unverified == 0 && ivs[1].Mismatches != want {
			t.Errorf("verify every %d: %d mismatches, want %d", every, ivs[1].Mismatches, want)
		}
	}
}

// stallAt holds the consumer up for d at block seq, once: the source goes
// on drawing and recording blocks (and the full ring drops them).
type stallAt struct {
	pipeline.Backend
	seq  uint64
	d    time.Duration
	done *bool
}

func (b stallAt) Next(ctx context.Context) (pipeline.Output, error) {
	o, err := b.Backend.Next(ctx)
	if o.Seq >= b.seq && !*b.done {
		*b.done = true
		time.Sleep(b.d)
	}
	return o, err
}

// TestSoakChainCheckLostFails: a chain soak whose consumer stalls longer
// than the source's input records last loses the input of the blocks
// queued for the check; the chain's check cannot re-prime, so the rest of
// the run goes unverified, and the soak fails with ErrUnverified (it used
// to pass that as "0 mismatches"). With records for the stall, the same
// run verifies its blocks after it.
func TestSoakChainCheckLostFails(t *testing.T) {
	taps := []float32{0.1, 0.2, 0.4, 0.2, 0.1}
	c := stage.Chain{SampleRate: 6.4e6, Complex: true, Stages: []stage.Stage{stage.NewShift(-1e5), stage.NewFIR(taps, 4)}}
	for _, tt := range []struct {
		name    string
		records int
		want    error
	}{
		{"records lost in the stall", 1024, ErrUnverified},
		{"records outlast the stall", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// 200 ms at one block per 10 µs; a 50 ms stall at 20 ms draws
			// 5000 blocks, far more than 1024 records.
			cfg := Config{BlockSize: 64, Chain: c, Complex: true, Warmup: 100, Period: 10 * time.Microsecond, Slots: 64, Seed: 5,
				Duration: 200 * time.Millisecond, Interval: 100 * time.Millisecond, records: tt.records}
			stalled := false
			path := Path{Name: "cpu", New: func() (pipeline.Backend, error) {
				be, err := cpu.New(c, 64)
				return stallAt{be, 2100, 50 * time.Millisecond, &stalled}, err
			}}
			rs, err := Run(context.Background(), cfg, []Path{path})
			if len(rs) == 0 {
				t.Fatalf("no result: %v", err)
			}
			r := rs[0]
			if !errors.Is(err, ErrLoss) { // the stall fills the ring
				t.Errorf("err %v, want the stall's drops (ErrLoss)", err)
			}
			if got := errors.Is(err, ErrUnverified); got != (tt.want != nil) || got != (r.Soak.Unverified > 0) {
				t.Errorf("err %v with %d unverified blocks, want ErrUnverified %v", err, r.Soak.Unverified, tt.want != nil)
			}
			if tt.want == nil && r.Soak.Intervals[1].Verified == 0 {
				t.Errorf("nothing verified after the stall: %+v", r.Soak.Intervals[1])
			}
			if r.Mismatches != 0 || r.Soak.Passed {
				t.Errorf("mismatches %d, passed %v", r.Mismatches, r.Soak.Passed)
			}
		})
	}
}

func TestSoakInterruptedIsNotAPass(t *testing.T) {
	taps := []float32{0.5, 0.5}
	cfg := soakConfig(taps)
	cfg.Duration, cfg.Interval = time.Hour, time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	rs, err := Run(ctx, cfg, []Path{cpuPath(t, taps, false, 64)})
	if err != nil && !errors.Is(err, ErrLoss) {
		t.Fatal(err)
	}
	s := rs[0].Soak
	if !s.Interrupted || s.Passed || len(s.Intervals) != 1 || s.Intervals[0].Blocks == 0 {
		t.Fatalf("soak %+v", s)
	}
}

// TestVerifierSampledMatchesContinuous feeds the same lossy stream (block 5
// and 6 dropped at capture) to a continuous and a sampled verifier: the
// primed reference of a sampled block is bit-identical, with taps spanning
// several blocks.
func TestVerifierSampledMatchesContinuous(t *testing.T) {
	for _, complex := range []bool{false, true} {
		ch := 1
		if complex {
			ch = 2
		}
		taps := make([]float32, 70) // 69 history samples: 3 blocks of 32
		for i := range taps {
			taps[i] = float32(i%7) - 3
		}
		cfg := Config{BlockSize: 32, Taps: taps, Complex: complex, Seed: 5}
		src := newSource(cfg, ch)
		backend, _ := filter.NewFIR(taps, complex, 32)
		cont, _ := newVerifier(cfg, src, ch, nil)
		cfg.VerifyEvery = 3
		samp, _ := newVerifier(cfg, src, ch, nil)
		buf := make([]float32, 32*ch)
		out := make([]float32, 32*ch)
		sampled := 0
		for seq := range uint64(40) {
			if _, err := src.Read(context.Background(), buf); err != nil {
				t.Fatal(err)
			}
			if seq == 5 || seq == 6 {
				continue // dropped: the backend never sees it
			}
			if err := backend.Process(out, buf); err != nil {
				t.Fatal(err)
			}
			o := pipeline.Output{Seq: seq, Samples: out}
			if vd, e := cont.check(o); vd != verified || e != 0 {
				t.Fatalf("continuous: block %d: %v %g", seq, vd, e)
			}
			vd, e := samp.check(o)
			switch {
			case seq%3 != 0 && vd != notSampled:
				t.Fatalf("sampled: block %d checked", seq)
			case seq%3 == 0 && (vd != verified || e != 0):
				t.Fatalf("complex %v: sampled: block %d: %v, rel err %g, want an exact match", complex, seq, vd, e)
			}
			if vd == verified {
				sampled++
			}
		}
		if sampled != 13 {
			t.Fatalf("%d blocks sampled, want 13", sampled)
		}
	}
}

func TestSoakConfigValidation(t *testing.T) {
	base := Config{BlockSize: 8, Taps: []float32{1}, Duration: time.Second, Interval: 100 * time.Millisecond}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"blocks and duration", func(c *Config) { c.Blocks = 10 }, "blocks (10) and duration (1s) are exclusive"},
		{"interval too long", func(c *Config) { c.Interval = 2 * time.Second }, "interval 2s is longer than the duration 1s"},
		{"interval without duration", func(c *Config) { c.Duration, c.Blocks = 0, 10 }, "an interval (100ms) needs a duration"},
		{"negative duration", func(c *Config) { c.Duration = -1 }, "duration must be >= 0"},
		{"negative interval", func(c *Config) { c.Interval = -1 }, "interval must be >= 0"},
		{"negative verify-every", func(c *Config) { c.VerifyEvery = -2 }, "verify-every must be >= 0"},
		{"too many intervals", func(c *Config) { c.Interval = time.Nanosecond }, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			_, err := Run(context.Background(), c, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "probe: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if err := base.validate(); err != nil {
		t.Fatalf("valid soak config rejected: %v", err)
	}
}

func TestSoakReportJSON(t *testing.T) {
	taps := []float32{0.5, 0.5}
	cfg := soakConfig(taps)
	cfg.Duration, cfg.Interval = 60*time.Millisecond, 20*time.Millisecond
	rs, err := Run(context.Background(), cfg, []Path{cpuPath(t, taps, false, 64)})
	if err != nil && !errors.Is(err, ErrLoss) {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "soak.json")
	if err := NewReport("test", rs).WriteJSON(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			P99  float64 `json:"p99_us"`
			Soak struct {
				DurationS float64 `json:"duration_s"`
				IntervalS float64 `json:"interval_s"`
				Intervals []struct {
					P99     *float64 `json:"p99_us"`
					Dropped *uint64  `json:"dropped_blocks"`
				} `json:"intervals"`
				Passed *bool `json:"passed"`
			} `json:"soak"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Results[0].Soak
	if s.DurationS != 0.06 || s.IntervalS != 0.02 || len(s.Intervals) != 3 || s.Passed == nil ||
		s.Intervals[0].P99 == nil || s.Intervals[0].Dropped == nil || rep.Results[0].P99 <= 0 {
		t.Fatalf("report %s", data)
	}
}

// BenchmarkSoakOnBlock is the consumer's per-block cost in the soak mode:
// queueing the block for the check, histogram, interval bookkeeping. It
// must not allocate. The check is made cheap here (1 block in 2^30), so
// the checker keeps up; its own cost is BenchmarkShadowCheck.
func BenchmarkSoakOnBlock(b *testing.B) {
	cfg := Config{BlockSize: 256, Taps: []float32{1}, Duration: time.Hour, Interval: time.Minute, VerifyEvery: 1 << 30}
	src := newSource(cfg, 1)
	ver, _ := newVerifier(cfg, src, 1, nil)
	m, err := newMeter(context.Background(), cfg, "bench", src, ver, 1, 1e-5, &Result{})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float32, 256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.onBlock(pipeline.Output{Seq: uint64(i), Timestamp: int64(i) * 10000, Samples: out}, int64(i)*10000+4000)
	}
	b.StopTimer()
	if err := m.chk.close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkShadowCheck is the checker's per-block cost: shadow FIR and
// compare (every block, or 1 in 16), 256 samples, 64 taps.
func BenchmarkShadowCheck(b *testing.B) {
	taps := make([]float32, 64)
	for i := range taps {
		taps[i] = 1 / 64.0
	}
	for _, every := range []int{1, 16} {
		b.Run(fmt.Sprint("verify every ", every), func(b *testing.B) {
			cfg := Config{BlockSize: 256, Taps: taps, Duration: time.Hour, Interval: time.Minute, VerifyEvery: every}
			src := newSource(cfg, 1)
			ver, _ := newVerifier(cfg, src, 1, nil)
			res := &Result{}
			// A real stream of n blocks and its filtered output, replayed
			// (the source keeps the last 1024 inputs).
			const n = 512
			fir, _ := filter.NewFIR(taps, false, 256)
			outs := make([][]float32, n)
			buf := make([]float32, 256)
			for i := range outs {
				if _, err := src.Read(context.Background(), buf); err != nil {
					b.Fatal(err)
				}
				outs[i] = make([]float32, 256)
				_ = fir.Process(outs[i], buf)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				seq := uint64(i % n)
				if seq == 0 { // replay from the start: fresh history
					ver.shadow.Reset()
					ver.nrec, ver.head = 0, 0
				}
				vd, e := ver.check(pipeline.Output{Seq: seq, Samples: outs[seq]})
				res.count(vd, e, 1e-5)
			}
			b.StopTimer()
			if res.Mismatches != 0 || res.Verified == 0 {
				b.Fatalf("verified %d, mismatches %d", res.Verified, res.Mismatches)
			}
		})
	}
}

// TestSoakFailsOnUnverifiedBlocks: blocks the check should have compared
// and could not (their input records overwritten in a long stall) fail
// the soak as ErrUnverified, interval by interval, and the report says
// how many.
func TestSoakFailsOnUnverifiedBlocks(t *testing.T) {
	for _, tt := range []struct {
		name       string
		unverified int
		want       error
	}{
		{"all verified", 0, nil},
		{"a chain's check broke", 25, ErrUnverified},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iv := []Interval{{Index: 1, Scheduled: 100, Blocks: 100, Verified: 100}, {Index: 2, Scheduled: 100, Blocks: 100, Verified: 100 - tt.unverified, Unverified: tt.unverified}}
			s := &Soak{Intervals: iv, Unverified: tt.unverified, VerifyEvery: 1}
			r := &Result{Path: "zero-copy", Blocks: 200, Verified: 200 - tt.unverified, Unverified: tt.unverified, Soak: s}
			err := soakError(s, r, 1e-5)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("soakError = %v, want %v", err, tt.want)
			}
			if iv[1].OK() != (tt.unverified == 0) {
				t.Errorf("interval 2 OK = %v with %d unverified", iv[1].OK(), tt.unverified)
			}
			var b strings.Builder
			WriteInterval(&b, r.Path, iv[1])
			s.Passed = err == nil
			WriteSoakSummary(&b, []Result{*r})
			if got := strings.Count(b.String(), fmt.Sprintf("%d unverified", tt.unverified)); tt.unverified > 0 && got != 2 {
				t.Errorf("report names the unverified blocks %d times, want 2 (interval and summary):\n%s", got, b.String())
			}
			if tt.unverified > 0 && (!strings.Contains(b.String(), "FAIL") || !strings.Contains(err.Error(), "25 blocks")) {
				t.Errorf("report %q, error %v: want FAIL and the count", b.String(), err)
			}
		})
	}
}

// The check spins between blocks only where the source, the consumer and
// the check can each have a core.
func TestCheckerSpinFor(t *testing.T) {
	for _, tc := range []struct {
		procs int
		want  time.Duration
	}{{1, 0}, {2, 0}, {3, 0}, {4, checkerSpin}, {16, checkerSpin}} {
		if got := checkerSpinFor(tc.procs); got != tc.want {
			t.Errorf("%d procs: spin %v, want %v", tc.procs, got, tc.want)
		}
	}
}
