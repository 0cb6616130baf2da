//go:build unix

package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fifoPoll is how often a FIFO output without a reader is tried again.
const fifoPoll = 20 * time.Millisecond

// openFIFO opens a FIFO for writing once a reader has it open. A plain
// open would block in the kernel, where no signal stops it; opened
// non-blocking, it fails with ENXIO until a reader comes, so it is retried
// until ctx ends. onWait, if set, is told once that it waits. On Linux
// the file is left non-blocking: Go's poller then waits for a full pipe to
// drain. Elsewhere (darwin registers no FIFO with the poller) it is made
// blocking again, so that a full pipe waits rather than fails with EAGAIN.
func openFIFO(ctx context.Context, path string, onWait func(string)) (*os.File, error) {
	var t *time.Ticker
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil && runtime.GOOS != "linux" {
			if err = setBlocking(f); err != nil {
				f.Close()
				f = nil
			}
		}
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

// setBlocking clears O_NONBLOCK on f's descriptor.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// appending reports whether f was opened for appending (a shell's >>):
// every write then lands at the end, so a header cannot be patched.
func appending(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flags, ferr := 0, error(nil)
	if err := sc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		return true // unknown: do not patch
	}
	return flags&unix.O_APPEND != 0
}
