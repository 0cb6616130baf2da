package probe

import (
	"fmt"
	"math"
	"time"
)

// Histogram bucket geometry of the soak mode: 10 ns buckets up to 2 ms
// (200,000 buckets, 1.6 MB); longer latencies are counted as over range and
// still set the exact maximum.
const (
	HistBucket = 10 * time.Nanosecond
	HistRange  = 2 * time.Millisecond
)

// Histogram counts latencies in fixed-width buckets. Record is O(1) and
// allocation-free, so it can run on the consumer goroutine at every block;
// Quantile scans the buckets and belongs off the hot path. Count, sum, min
// and max are exact. The zero value is not usable: see NewHistogram.
type Histogram struct {
	width    int64 // ns per bucket
	counts   []uint64
	over     uint64 // latencies >= width*len(counts)
	n        uint64
	sum      int64 // ns
	min, max int64 // ns, valid when n > 0
}

// NewHistogram returns an empty histogram of buckets of width up to limit
// (rounded up to a whole bucket).
func NewHistogram(width, limit time.Duration) (*Histogram, error) {
	if width <= 0 || limit < width {
		return nil, fmt.Errorf("probe: histogram needs 0 < bucket width <= range, got %v and %v", width, limit)
	}
	nb := (int64(limit) + int64(width) - 1) / int64(width)
	if nb > 1<<26 {
		return nil, fmt.Errorf("probe: histogram of %d buckets is too large", nb)
	}
	return &Histogram{width: int64(width), counts: make([]uint64, nb)}, nil
}

// Record adds one latency in ns; negative values count as 0.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	if b := ns / h.width; b < int64(len(h.counts)) {
		h.counts[b]++
	} else {
		h.over++
	}
	if h.n == 0 || ns < h.min {
		h.min = ns
	}
	if ns > h.max {
		h.max = ns
	}
	h.n++
	h.sum += ns
}

// Count is the number of recorded latencies.
func (h *Histogram) Count() uint64 { return h.n }

// OverRange is the number of latencies beyond the bucket range.
func (h *Histogram) OverRange() uint64 { return h.over }

// Above is the number of latencies of at least ns, counted by whole
// buckets: ns is rounded down to its bucket's start.
func (h *Histogram) Above(ns int64) uint64 {
	n := h.over
	for _, c := range h.counts[min(max(ns/h.width, 0), int64(len(h.counts))):] {
		n += c
	}
	return n
}

// Max is the largest recorded latency in ns (0 when empty).
func (h *Histogram) Max() int64 { return h.max }

// Mean is the mean latency in ns (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.n)
}

// Quantiles returns, for each p in ps (ascending, in [0, 1]), the latency
// in ns of rank min(n-1, floor(p·n)) in sorted order, the rank the
// block-count mode's sort uses: the middle of the bucket holding it, clamped
// to the exact min and max, so it is within one bucket width of the exact
// value. A rank beyond the range reports the exact max. Empty: all zero.
func (h *Histogram) Quantiles(ps []float64) []int64 {
	out := make([]int64, len(ps))
	if h.n == 0 {
		return out
	}
	i := 0
	var cum uint64
	for b, c := range h.counts {
		if c == 0 {
			continue
		}
		cum += c
		for ; i < len(ps) && h.rank(ps[i]) < cum; i++ {
			v := int64(b)*h.width + h.width/2
			out[i] = min(max(v, h.min), h.max)
		}
		if i == len(ps) {
			return out
		}
	}
	for ; i < len(ps); i++ {
		out[i] = h.max
	}
	return out
}

func (h *Histogram) rank(p float64) uint64 {
	r := math.Floor(p * float64(h.n))
	if !(r >= 0) {
		return 0
	}
	return min(h.n-1, uint64(r))
}

// Add merges o into h; both must have the same geometry.
func (h *Histogram) Add(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.over += o.over
	h.n += o.n
	h.sum += o.sum
}

// Reset empties h, keeping its buckets.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.over, h.n, h.sum, h.min, h.max = 0, 0, 0, 0, 0
}
