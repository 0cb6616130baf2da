package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/metrics"
)

// stopSignals end a run cleanly: the source stops, the blocks already
// captured are filtered, the sink is flushed and its metadata finalised,
// and the summary is printed. SIGHUP stops a command the same way, unless
// it has taken SIGHUP for itself (onHangup: sigproc run reloads its
// config's stage parameters); SIGPIPE stops it when stdout or stderr is a
// pipe whose reader has gone.
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

// hangup holds the handler SIGHUP calls instead of stopping, if any.
type hangup struct{ fn atomic.Pointer[func()] }

// onHangup makes SIGHUP call fn (on its own goroutine) instead of stopping
// the command, until the returned function is called. Outside a
// signal-watching command it does nothing.
func onHangup(ctx context.Context, fn func()) (restore func()) {
	h, _ := ctx.Value(hangupKey{}).(*hangup)
	if h == nil {
		return func() {}
	}
	h.fn.Store(&fn)
	return func() { h.fn.Store(nil) }
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
				if f := hup.fn.Load(); s == syscall.SIGHUP && f != nil && n == 0 {
					go (*f)()
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
					fmt.Fprintf(stderr, "sigproc: %v: stopping; filtering the blocks already captured (a second signal cuts that short)\n", s)
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

// warnExposed warns when the metrics server is reachable from other
// machines: it has no authentication.
func warnExposed(log zerolog.Logger, srv *metrics.Server) {
	if !srv.Loopback() {
		log.Warn().Str("addr", srv.Addr()).
			Msg("metrics server listens on a non-loopback address: anyone who can reach it can read the metrics (use 127.0.0.1:PORT to keep it local)")
	}
}
