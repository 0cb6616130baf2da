package main

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sigproc/sigproc/pipeline"
)

// progress is a progress bar of samples on stderr, for run and bench
// stream. Its methods may be called from a pipeline goroutine after stop
// (they are then ignored), and on a nil *progress (no bar).
type progress struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	stopped bool
	endless bool // no known length: a spinner with the rates
}

// newProgress starts a bar towards total samples (a spinner if total <= 0)
// described by desc; rate adds the samples-per-second figure.
func newProgress(w io.Writer, total int64, desc string, rate bool) *progress {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("samples"),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetDescription(desc),
	}
	if rate {
		opts = append(opts, progressbar.OptionShowIts())
	}
	endless := total <= 0
	if endless {
		total = -1 // unknown length: spinner
		opts = append(opts, progressbar.OptionSpinnerType(14))
	} else {
		opts = append(opts, progressbar.OptionSetPredictTime(true))
	}
	return &progress{bar: progressbar.NewOptions64(total, opts...), endless: endless}
}

// update shows a pipeline's samples in and its rates: the output rate on
// a bar (which shows the percentage and time left), the input and output
// rates and any drops on an endless run's spinner.
func (p *progress) update(st pipeline.Stats) {
	desc := fmt.Sprintf("%6.2f MS/s", st.MSps())
	if p != nil && p.endless {
		desc = fmt.Sprintf("in %.3g MS/s  out %.3g MS/s", st.InMSps(), st.MSps())
		if st.DroppedSamples > 0 {
			desc += fmt.Sprintf("  drops %d", st.DroppedSamples)
		}
	}
	p.setDescribed(int64(min(st.SamplesIn, math.MaxInt64)), desc)
}

func (p *progress) setDescribed(n int64, desc string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if desc != "" {
		p.bar.Describe(desc)
	}
	_ = p.bar.Set64(n)
}

// stop finishes the bar, which clears its line (OptionClearOnFinish).
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	_ = p.bar.Finish()
}
