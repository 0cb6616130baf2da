//go:build cuda

package gpubench

import (
	"fmt"
	"time"

	"github.com/sigproc/sigproc/internal/cudrv"
)

// spacing is how timePasses lays its timed passes on the stream.
type spacing bool

const (
	// backToBack queues the passes behind one another, one event between
	// each two: each pass is timed on a busy stream, as in a stream of work.
	backToBack spacing = false
	// apart waits for each pass before the next starts: each is timed from
	// an idle stream, its enqueueing on the host included.
	apart spacing = true
)

// passTimes are the times of a run of timed passes, in seconds.
type passTimes struct {
	per  []float64 // each pass, by events
	span float64   // first pass's start to last pass's end, by events
	host float64   // the same by the host clock, waits between passes included
}

// timePasses runs warmup untimed passes on stream and waits for them, then
// reps timed passes laid out as sp says, each between two events, and
// waits for the last. pass enqueues one pass on stream (it may check a
// context: a pass that fails ends the run with its error as it is); what
// names a pass in errors. It needs a current context, and creates and
// destroys its events.
func timePasses(stream cudrv.Stream, what string, warmup, reps int, sp spacing, pass func() error) (t passTimes, err error) {
	if reps <= 0 {
		return passTimes{}, fmt.Errorf("gpu: %s: reps must be > 0, got %d", what, reps)
	}
	// Pass i runs from evs[step*i] to evs[step*i+1]: back to back one
	// pass's end is the next one's start; apart each has two of its own.
	step := 1
	if sp == apart {
		step = 2
	}
	evs, err := cudrv.MakeEvents(step*(reps-1) + 2)
	if err != nil {
		return passTimes{}, err
	}
	defer func() {
		if e := cudrv.DestroyEvents(evs); e != nil && err == nil {
			err = e
		}
	}()
	for range warmup {
		if err := pass(); err != nil {
			return passTimes{}, err
		}
	}
	if err := stream.Synchronize(); err != nil {
		return passTimes{}, fmt.Errorf("gpu: %s warmup: %w", what, err)
	}
	t0 := time.Now()
	for i := range reps {
		start := evs[step*i]
		if sp == apart && i > 0 {
			if err := evs[step*i-1].Synchronize(); err != nil {
				return passTimes{}, fmt.Errorf("gpu: %s pass %d: %w", what, i-1, err)
			}
		}
		if sp == apart || i == 0 {
			if err := start.Record(stream); err != nil {
				return passTimes{}, fmt.Errorf("gpu: record event: %w", err)
			}
		}
		if err := pass(); err != nil {
			return passTimes{}, err
		}
		if err := evs[step*i+1].Record(stream); err != nil {
			return passTimes{}, fmt.Errorf("gpu: record event: %w", err)
		}
	}
	last := evs[len(evs)-1]
	if err := last.Synchronize(); err != nil {
		return passTimes{}, fmt.Errorf("gpu: %s passes: %w", what, err)
	}
	t.host = time.Since(t0).Seconds()
	t.per = make([]float64, reps)
	for i := range t.per {
		if t.per[i], err = cudrv.Elapsed(evs[step*i], evs[step*i+1]); err != nil {
			return passTimes{}, err
		}
	}
	if t.span, err = cudrv.Elapsed(evs[0], last); err != nil {
		return passTimes{}, err
	}
	return t, nil
}
