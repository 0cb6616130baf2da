package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/metrics"
)

// stopSignals end a run cleanly: the source stops, the blocks already
// captured are filtered, the sink is flushed and its metadata finalised,
// and the summary is printed. SIGHUP stops a command the same way, unless
// it has taken SIGHUP for itself (claimHangup, onHangup: sigproc run
// reloads its config's stage parameters); SIGPIPE stops it when stdout or
// stderr is a pipe whose reader has gone.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} // SIGPIPE last

// signalCause is the cancellation cause of the command's context when a
// signal stopped it.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// exitStatus is the shell's 128+signal convention.
func (c signalCause) exitStatus() int {
	if s, ok := c.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitInterrupted
}

type abortKey struct{}

type hangupKey struct{}

// hangup routes SIGHUP for a command that takes it for itself (sigproc run
// reloads its config): to the handler once there is one; before that,
// from the claim on (start-up), it is held and handed to the handler when
// that is set. So a SIGHUP before the run is ready neither stops it nor
// is lost.
type hangup struct {
	mu      sync.Mutex
	claimed bool
	pending bool
	fn      func()
}

// take handles one SIGHUP; false means the command has not claimed it, and
// it stops the command like SIGTERM.
func (h *hangup) take() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.fn != nil:
		h.fn()
	case h.claimed:
		h.pending = true
	default:
		return false
	}
	return true
}

// claimHangup makes SIGHUP no longer stop the command: until onHangup sets
// a handler, a SIGHUP is held for it; after the handler is removed, it is
// ignored. Outside a signal-watching command it does nothing.
func claimHangup(ctx context.Context) {
	if h, _ := ctx.Value(hangupKey{}).(*hangup); h != nil {
		h.mu.Lock()
		h.claimed = true
		h.mu.Unlock()
	}
}

// onHangup makes SIGHUP call fn, which must return at once, instead of
// stopping the command, until the returned function is called; a SIGHUP
// held since claimHangup is handed to fn now. Outside a signal-watching
// command it does nothing.
func onHangup(ctx context.Context, fn func()) (restore func()) {
	h, _ := ctx.Value(hangupKey{}).(*hangup)
	if h == nil {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fn = fn
	if h.pending {
		h.pending = false
		fn()
	}
	return func() {
		h.mu.Lock()
		h.fn = nil
		h.mu.Unlock()
	}
}

// abortContext returns the context that a second signal cancels (see
// pipeline.Options.Abort), or nil outside a signal-watching command.
func abortContext(ctx context.Context) context.Context {
	a, _ := ctx.Value(abortKey{}).(context.Context)
	return a
}

// watchSignals returns ctx, cancelled with a signalCause by the first stop
// signal and carrying an abort context cancelled by the second: the drain
// is then cut short, but the samples already filtered are still written
// and the metadata finalised. After the second signal the default handling
// is restored, so a third one kills the process at once. stop releases the
// signal handlers.
func watchSignals(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	abort, abortNow := context.WithCancel(context.Background())
	ctx = context.WithValue(ctx, abortKey{}, abort)
	hup := &hangup{}
	ctx = context.WithValue(ctx, hangupKey{}, hup)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	go func() {
		n, piped := 0, false
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGHUP && n == 0 && hup.take() {
					continue
				}
				// A SIGPIPE from a closed metrics client (or any
				// socket) is not a reason to stop: only a dead
				// stdout or stderr is, and it counts once, as
				// every later write to it raises another.
				if s == syscall.SIGPIPE {
					if piped || !stdioBroken() {
						continue
					}
					piped = true
				}
				n++
				if n == 1 {
					fmt.Fprintf(stderr, "sigproc: %v: stopping; filtering the blocks already captured (a second signal, or run's --drain-limit, cuts that short)\n", s)
					cancel(signalCause{s})
					continue
				}
				// SIGPIPE stays caught: its default action would
				// kill the process at the next write to stderr.
				signal.Reset(stopSignals[:len(stopSignals)-1]...)
				fmt.Fprintf(stderr, "sigproc: second signal (%v): not filtering the blocks still queued; writing what is filtered (a third signal kills at once)\n", s)
				abortNow()
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
		abortNow()
	}
}

// defaultDrainLimit bounds the drain after a stop signal: a chain far
// slower than its source can hold minutes of blocks in a large ring (146 s
// measured), and a supervisor kills a stop that outlasts its timeout
// (systemd's TimeoutStopSec, 90 s by default; docker stop's 10 s) before
// the sink is flushed and its metadata finalised.
const defaultDrainLimit = 5 * time.Second

// errDrainLimit is the cause of a drain cut short by run's --drain-limit.
var errDrainLimit = errors.New("drain limit passed")

// drainAbort returns the run's abort context (pipeline.Options.Abort):
// abortContext's, which a second signal cancels, also cancelled with
// errDrainLimit limit after the first (never when limit is 0). Call stop
// as soon as the run returns: the limit then no longer applies.
func drainAbort(ctx context.Context, limit time.Duration) (abort context.Context, stop func()) {
	parent := abortContext(ctx)
	if parent == nil || limit <= 0 {
		return parent, func() {}
	}
	a, cancel := context.WithCancelCause(parent)
	var mu sync.Mutex
	var timer *time.Timer
	stopped := false
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		timer = time.AfterFunc(limit, func() {
			mu.Lock()
			defer mu.Unlock()
			if !stopped {
				cancel(errDrainLimit)
			}
		})
	})
	return a, func() {
		stopAfter()
		mu.Lock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel(nil)
	}
}

// warnExposed warns when the metrics server is reachable from other
// machines: it has no authentication.
func warnExposed(log zerolog.Logger, srv *metrics.Server) {
	if !srv.Loopback() {
		log.Warn().Str("addr", srv.Addr()).
			Msg("metrics server listens on a non-loopback address: anyone who can reach it can read the metrics (use 127.0.0.1:PORT to keep it local)")
	}
}
