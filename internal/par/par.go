// Package par splits one large copy or read into parts done at once by a
// fixed set of goroutines. One core copying memory reaches a fraction of
// what a GPU's copy engine takes in, so a source that fills large blocks
// (a file in the page cache, a buffer in memory) spreads the work.
package par

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// MaxWorkers bounds a Pool's goroutines.
const MaxWorkers = 16

// Pool runs the parts of a range on its goroutines. Its methods must be
// called from one goroutine at a time; Do allocates nothing.
type Pool struct {
	workers int
	spin    time.Duration // how long an idle goroutine looks for work before it parks
	jobs    chan part
	done    chan error
}

type part struct {
	f      func(lo, hi int) error
	lo, hi int
}

// NewPool returns a pool of up to workers goroutines (at most MaxWorkers;
// 0 means all CPUs but two, which a pipeline's consumer and producer
// keep busy), started on first use.
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0)-2)
	}
	return &Pool{workers: min(workers, MaxWorkers)}
}

// Do calls f on consecutive parts of [0, n), each at least minPart long
// (the last may be shorter) and aligned to align, at most one part per
// worker, and waits for all of them. It returns the parts' errors,
// joined. With one part, f runs on the calling goroutine.
func (p *Pool) Do(n, minPart, align int, f func(lo, hi int) error) error {
	parts := min(p.workers, n/max(minPart, 1))
	if parts <= 1 {
		return f(0, n)
	}
	p.start()
	align = max(align, 1)
	size := ((n+parts-1)/parts + align - 1) / align * align
	sent := 0
	for lo := 0; lo < n; lo += size {
		p.jobs <- part{f: f, lo: lo, hi: min(lo+size, n)}
		sent++
	}
	var err error
	for range sent {
		if e := <-p.done; e != nil {
			err = errors.Join(err, e)
		}
	}
	return err
}

// Share calls f(i, i+1) for every i in [0, n), n at most one more than
// the pool's workers: i = 0 on the calling goroutine, the others on the
// pool's, and
// waits for all of them. It returns their errors, joined. Running one part
// here saves waking a goroutine for it, which on a virtual machine costs
// tens of microseconds.
func (p *Pool) Share(n int, f func(lo, hi int) error) error {
	if n > p.workers+1 {
		return fmt.Errorf("par: %d parts for %d workers and the caller", n, p.workers)
	}
	if n <= 0 {
		return nil
	}
	if n == 1 {
		return f(0, 1)
	}
	p.start()
	for i := 1; i < n; i++ {
		p.jobs <- part{f: f, lo: i, hi: i + 1}
	}
	err := f(0, 1)
	for range n - 1 {
		if e, _ := poll(p.done, p.spin); e != nil {
			err = errors.Join(err, e)
		}
	}
	return err
}

// start starts the goroutines on first use.
func (p *Pool) start() {
	if p.jobs != nil {
		return
	}
	p.jobs = make(chan part, MaxWorkers)
	p.done = make(chan error, MaxWorkers)
	for range p.workers {
		go work(p.jobs, p.done, p.spin)
	}
}

func work(jobs <-chan part, done chan<- error, spin time.Duration) {
	for {
		j, ok := poll(jobs, spin)
		if !ok {
			return
		}
		done <- j.f(j.lo, j.hi)
	}
}

// Spin makes the pool's goroutines, once they finish a part, and Share's
// caller, waiting for the others, look for the next for d, yielding the
// core between looks, before they park: a stream of blocks hands over the
// next within it, where waking a parked goroutine costs tens of
// microseconds on a virtual machine. It must be called before first use.
func (p *Pool) Spin(d time.Duration) { p.spin = d }

// yieldEvery is how often poll yields while it looks: runtime.Gosched
// takes the scheduler's global lock, and 15 goroutines yielding in a
// loop while they waited for a block's segments spent 12–18 % of a
// 16-core run's CPU samples in it (H100 and H200 hosts, 2026-12-06).
// Yielding now and then still lets a goroutine waiting for this core
// (the source, the sink) run.
const yieldEvery = 10 * time.Microsecond

// poll receives from c, looking for spin before it blocks.
func poll[T any](c <-chan T, spin time.Duration) (T, bool) {
	if spin <= 0 {
		v, ok := <-c
		return v, ok
	}
	t0 := time.Now()
	yielded := t0
	for k := 1; ; k++ {
		select {
		case v, ok := <-c:
			return v, ok
		default:
		}
		if k%64 != 0 { // about a microsecond of looks between clock reads
			continue
		}
		now := time.Now()
		if now.Sub(t0) > spin {
			v, ok := <-c
			return v, ok
		}
		if now.Sub(yielded) >= yieldEvery {
			runtime.Gosched()
			yielded = now
		}
	}
}

// Close stops the goroutines. The pool must not be used afterwards.
func (p *Pool) Close() {
	if p.jobs != nil {
		close(p.jobs)
		p.jobs = nil
	}
}
