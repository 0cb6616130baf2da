// Package par splits one large copy or read into parts done at once by a
// fixed set of goroutines. One core copying memory reaches a fraction of
// what a GPU's copy engine takes in, so a source that fills large blocks
// (a file in the page cache, a buffer in memory) spreads the work.
package par

import (
	"errors"
	"runtime"
)

// MaxWorkers bounds a Pool's goroutines.
const MaxWorkers = 16

// Pool runs the parts of a range on its goroutines. Its methods must be
// called from one goroutine at a time; Do allocates nothing.
type Pool struct {
	workers int
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
	if p.jobs == nil {
		p.jobs = make(chan part, MaxWorkers)
		p.done = make(chan error, MaxWorkers)
		for range p.workers {
			go work(p.jobs, p.done)
		}
	}
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

func work(jobs <-chan part, done chan<- error) {
	for j := range jobs {
		done <- j.f(j.lo, j.hi)
	}
}

// Close stops the goroutines. The pool must not be used afterwards.
func (p *Pool) Close() {
	if p.jobs != nil {
		close(p.jobs)
		p.jobs = nil
	}
}
