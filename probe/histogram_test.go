package probe

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// sortQuantile is the block-count mode's percentile: the value of rank
// min(n-1, floor(p·n)) in sorted order.
func sortQuantile(s []int64, p float64) int64 {
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func TestHistogramQuantilesMatchSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	gen := func(n int, f func() int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = f()
		}
		return v
	}
	tests := []struct {
		name string
		v    []int64
	}{
		{"one value", []int64{4321}},
		{"constant", gen(1000, func() int64 { return 7000 })},
		{"uniform 2-20 µs", gen(100000, func() int64 { return 2000 + r.Int64N(18000) })},
		{"exponential tail", gen(50000, func() int64 { return 3000 + int64(r.ExpFloat64()*2000) })},
		{"some over range", gen(20000, func() int64 {
			if r.IntN(100) == 0 {
				return int64(HistRange) + r.Int64N(1e7)
			}
			return 5000 + r.Int64N(1000)
		})},
		{"mostly over range", gen(1000, func() int64 { return int64(HistRange) + r.Int64N(1e6) })},
		{"negative clamps to 0", []int64{-5, -1, 0, 3, 12}},
		{"bucket edges", []int64{0, 9, 10, 19, 20, 1999999, 2000000}},
	}
	ps := []float64{0, 0.5, 0.9, 0.99, 0.999, 1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHistogram(HistBucket, HistRange)
			if err != nil {
				t.Fatal(err)
			}
			ref := slices.Clone(tt.v)
			var sum, over int64
			for i, v := range ref {
				h.Record(v)
				ref[i] = max(v, 0)
				sum += ref[i]
				if ref[i] >= int64(HistRange) {
					over++
				}
			}
			slices.Sort(ref)
			got := h.Quantiles(ps)
			for i, p := range ps {
				want := sortQuantile(ref, p)
				if want >= int64(HistRange) {
					// Beyond the range the histogram reports the exact max.
					if got[i] != ref[len(ref)-1] {
						t.Errorf("p%g = %d ns, want the max %d for an over-range rank", p*100, got[i], ref[len(ref)-1])
					}
					continue
				}
				if d := got[i] - want; d < -int64(HistBucket) || d > int64(HistBucket) {
					t.Errorf("p%g = %d ns, sort says %d: more than one bucket apart", p*100, got[i], want)
				}
			}
			if h.Count() != uint64(len(ref)) || h.Max() != ref[len(ref)-1] || h.OverRange() != uint64(over) ||
				math.Abs(h.Mean()-float64(sum)/float64(len(ref))) > 1e-6 {
				t.Errorf("count %d max %d over %d mean %v", h.Count(), h.Max(), h.OverRange(), h.Mean())
			}
			// Above counts by whole buckets: exact at a bucket's start.
			for _, at := range []int64{0, 10, 5000, int64(SlowLatency), int64(HistRange), int64(HistRange) + 1e6} {
				want := len(ref) - sort.Search(len(ref), func(i int) bool { return ref[i] >= at })
				if at > int64(HistRange) {
					want = int(over) // beyond the range: every over-range latency
				}
				if got := h.Above(at); got != uint64(want) {
					t.Errorf("Above(%d) = %d, want %d", at, got, want)
				}
			}
		})
	}
}

func TestHistogramAddAndReset(t *testing.T) {
	a, _ := NewHistogram(HistBucket, HistRange)
	b, _ := NewHistogram(HistBucket, HistRange)
	all, _ := NewHistogram(HistBucket, HistRange)
	for i := range int64(1000) {
		v := i * 37 % 9000
		all.Record(v)
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Add(b)
	if !slices.Equal(a.Quantiles(quantiles), all.Quantiles(quantiles)) || a.Count() != all.Count() || a.Max() != all.Max() || a.Mean() != all.Mean() {
		t.Fatal("merged histogram differs from the one that saw everything")
	}
	a.Reset()
	if a.Count() != 0 || a.Max() != 0 || !slices.Equal(a.Quantiles(quantiles), make([]int64, len(quantiles))) {
		t.Fatal("Reset left data")
	}
	a.Record(50)
	if q := a.Quantiles([]float64{0.5}); q[0] != 50 {
		t.Fatalf("after Reset: p50 %d, want 50", q[0])
	}
}

func TestNewHistogramRejectsBadGeometry(t *testing.T) {
	for _, g := range [][2]time.Duration{{0, time.Millisecond}, {10, 5}, {-1, 10}, {1, time.Hour}} {
		if _, err := NewHistogram(g[0], g[1]); err == nil {
			t.Errorf("NewHistogram(%v, %v) accepted", g[0], g[1])
		}
	}
}

func TestHistogramRecordAllocatesNothing(t *testing.T) {
	h, _ := NewHistogram(HistBucket, HistRange)
	var v int64
	if n := testing.AllocsPerRun(1000, func() { v += 997; h.Record(v % 3e6) }); n != 0 {
		t.Fatalf("Record allocates %v times per call", n)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h, _ := NewHistogram(HistBucket, HistRange)
	b.ReportAllocs()
	for i := range b.N {
		h.Record(int64(3000 + i%4000))
	}
}
