//go:build unix

package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fifoPoll is how often a FIFO output without a reader is tried again.
const fifoPoll = 20 * time.Millisecond

// openFIFO opens a FIFO for writing once a reader has it open. A plain
// open would block in the kernel, where no signal stops it; opened
// non-blocking, it fails with ENXIO until a reader comes, so it is retried
// until ctx ends. onWait, if set, is told once that it waits. The file is
// left non-blocking: Go's poller then waits for a full pipe to drain.
func openFIFO(ctx context.Context, path string, onWait func(string)) (*os.File, error) {
	var t *time.Ticker
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.ENXIO) {
			return f, err
		}
		if t == nil {
			if onWait != nil {
				onWait(path)
			}
			t = time.NewTicker(fifoPoll)
			defer t.Stop()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting for a reader of the FIFO: %w", path, context.Cause(ctx))
		}
	}
}
