package control

import (
	"slices"
	"sync"
	"sync/atomic"
)

// scopeLen is how many recent samples each point keeps: 16 Welch segments
// of 2048 samples with half overlap fit.
const scopeLen = 16384

// scopeValues bounds a scope's buffer: a point of many channels (a
// channelizer's) keeps fewer frames than scopeLen, 4 MiB of them.
const scopeValues = 1 << 20

// scope keeps the most recent samples seen at one point of the chain,
// written by the consumer goroutine and read by API requests.
type scope struct {
	mu      sync.Mutex
	ch      int           // values of a frame: channels × (1 or 2)
	chans   int           // channels of a frame
	buf     []float32     // circular, whole frames
	pos     int           // next write, in values
	n       int           // values held, up to len(buf)
	total   atomic.Uint64 // frames seen
	rate    float64
	complex bool
}

func newScope(rate float64, complex bool, chans int) *scope {
	chans = max(1, chans)
	ch := chans
	if complex {
		ch *= 2
	}
	frames := min(scopeLen, scopeValues/ch)
	return &scope{ch: ch, chans: chans, buf: make([]float32, frames*ch), rate: rate, complex: complex}
}

// write appends x; it allocates nothing and never waits: it is called on
// the sample path, so while a reader copies the samples out (a few µs, at
// most once per spectrumTTL per point) the block is left out of the view.
func (s *scope) write(x []float32) {
	if !s.mu.TryLock() {
		return
	}
	x = x[:len(x)-len(x)%s.ch] // whole frames: the buffer holds whole frames only
	if len(x) >= len(s.buf) {
		copy(s.buf, x[len(x)-len(s.buf):])
		s.pos, s.n = 0, len(s.buf)
	} else {
		k := copy(s.buf[s.pos:], x)
		copy(s.buf, x[k:])
		s.pos = (s.pos + len(x)) % len(s.buf)
		s.n = min(s.n+len(x), len(s.buf))
	}
	s.total.Add(uint64(len(x) / s.ch))
	s.mu.Unlock()
}

// snapshot returns a copy of the samples held, oldest first.
func (s *scope) snapshot() []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]float32, s.n)
	start := (s.pos - s.n + len(s.buf)) % len(s.buf)
	k := copy(out, s.buf[start:min(start+s.n, len(s.buf))])
	copy(out[k:], s.buf[:s.n-k])
	return out
}

// latencyLen is how many recent block latencies the percentiles cover.
const latencyLen = 4096

// latencies keeps the most recent block latencies, in ns.
type latencies struct {
	mu  sync.Mutex
	buf []int64
	pos int
	n   int
}

// add records one latency; on the sample path, it skips the value rather
// than wait for a reader.
func (l *latencies) add(ns int64) {
	if !l.mu.TryLock() {
		return
	}
	if l.buf == nil {
		l.buf = make([]int64, latencyLen)
	}
	l.buf[l.pos] = ns
	l.pos = (l.pos + 1) % latencyLen
	l.n = min(l.n+1, latencyLen)
	l.mu.Unlock()
}

// percentiles returns the p50 and p99 of the recent latencies in µs, and
// how many there were.
func (l *latencies) percentiles() (p50, p99 float64, n int) {
	l.mu.Lock()
	v := slices.Clone(l.buf[:l.n])
	l.mu.Unlock()
	if len(v) == 0 {
		return 0, 0, 0
	}
	slices.Sort(v)
	at := func(q float64) float64 { return float64(v[min(len(v)-1, int(q*float64(len(v))))]) / 1e3 }
	return at(0.5), at(0.99), len(v)
}
