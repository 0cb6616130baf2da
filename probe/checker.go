package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/pipeline"
)

// checkerSlots bounds how far the shadow check may lag the consumer. The
// source keeps input records for this lag plus the pipeline ring's (see
// recordSlots), so the check's own lag never costs a record; only a stall long
// enough to drop blocks can (then counted as unverified, never as passed).
const checkerSlots = 256

// checkerSpin is how long the check goroutine spins for the next block
// before it parks, where GOMAXPROCS is checkerSpinProcs or more (the
// source, the consumer and the check each spinning on a core of their
// own, one left for the rest; --retune-spin takes that one): a check that
// parks between blocks is woken by the consumer, the goroutine that times
// the blocks, through a futex wake at every block. On an H100 host at one
// 2048-sample chain block per 20 µs (the CPU chain checks one in ~4 µs on
// the dev machine, so the check waits for every block), the host took
// 180 000 context switches and 90 000 interrupts a second, 3.6 and 1.8 a
// block (vmstat, 2026-12-08, docs/data/zc-soak-2026-12-08.txt). With
// fewer cores a spinning check would take the consumer's.
const (
	checkerSpin      = 50 * time.Millisecond
	checkerSpinProcs = 4
)

// checkerSpinFor is the check's spin with procs cores (GOMAXPROCS).
func checkerSpinFor(procs int) time.Duration {
	if procs >= checkerSpinProcs {
		return checkerSpin
	}
	return 0
}

// checker runs the shadow check (verifier) on its own goroutine, fed
// through an SPSC ring. The consumer thread that times the blocks then only
// copies each block into the ring and goes straight back to waiting for the
// next one: the check's FIR and record lookups no longer sit between two
// Next calls, where after any stall they stretched the catch-up and with it
// the latency tail. The check is still done on every block, in order; when
// the ring is full, submit waits. Where cores allow, the check spins for
// the next block rather than parking (checkerSpin).
type checker struct {
	ring      *pipeline.Ring
	ch        int
	submitted uint64        // blocks queued (consumer goroutine only)
	checked   atomic.Uint64 // blocks whose verdict has been handed on
	done      chan struct{} // closed when the check goroutine has exited
	qerr      error         // submit's first error (consumer goroutine only)
	cerr      error         // the check goroutine's error; read after done
}

// startChecker starts the goroutine that checks submitted blocks with ver
// and hands each verdict to verdict, on that goroutine, in submission order.
// ch is the values of an input frame; a chain's blocks are its output's,
// which may hold more (an upsampler, a channelizer).
func startChecker(cfg Config, ch int, ver *verifier, verdict func(seq uint64, vd verdict, e float64)) (*checker, error) {
	block := cfg.BlockSize
	if cfg.chain() {
		block, ch = cfg.Chain.MaxOut(cfg.BlockSize), pipeline.FrameValues(cfg.Chain.OutChannels(), cfg.Chain.OutComplex())
	}
	l := pipeline.Layout{BlockSize: block, Channels: ch, Slots: checkerSlots}
	ring, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, fmt.Errorf("probe: check ring: %w", err)
	}
	ring.SetSpin(checkerSpinFor(runtime.GOMAXPROCS(0)))
	c := &checker{ring: ring, ch: ch, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			blk, err := ring.Next(context.Background()) // io.EOF once closed and drained
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.cerr = fmt.Errorf("probe: check: %w", err)
				}
				return
			}
			vd, e := ver.check(pipeline.Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: blk.Samples})
			verdict(blk.Seq, vd, e)
			ring.Release()
			c.checked.Add(1)
		}
	}()
	return c, nil
}

// submit queues a copy of o for the check. It runs on the consumer thread
// (the pipeline's OnBlock). The block is then not counted at all when it
// cannot be queued: the run being stopped while the ring is full is the
// run's interruption (the soak says so), any other failure is kept for
// close.
func (c *checker) submit(ctx context.Context, o pipeline.Output) {
	buf, err := c.ring.Acquire(ctx, true)
	if err == nil {
		n := copy(buf, o.Samples)
		err = c.ring.Publish(n/c.ch, o.Seq, o.Timestamp)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return
		}
		if c.qerr == nil {
			c.qerr = fmt.Errorf("probe: queue block %d for the check: %w", o.Seq, err)
		}
		return
	}
	c.submitted++
}

// waitChecked waits until n blocks have been checked, or the check goroutine
// has exited. Any goroutine may call it.
func (c *checker) waitChecked(n uint64) {
	for c.checked.Load() < n {
		select {
		case <-c.done:
			return
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// close waits until every submitted block has been checked and returns the
// errors met, if any. Call it from the goroutine that called submit.
func (c *checker) close() error {
	c.ring.Close()
	<-c.done
	return errors.Join(c.qerr, c.cerr)
}
