// Command sigproc runs real-time FIR filtering pipelines: a capture source
// feeds a ring of fixed-size blocks, a CPU (or CUDA) backend filters them and
// a sink stores the result. See "sigproc --help" and README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Exit statuses after a signal follow the shell's 128+signal convention, so
// scripts and supervisors can tell Ctrl-C (SIGINT, 130) from a stop request
// (SIGTERM, 143, what systemd and docker stop send). Either way the run
// drains, closes the sink and prints its summary first.
const (
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// signalCause is the cancellation cause of the command's context when a
// signal stopped it.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// run executes the command line and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			// Restore default handling, so that a second Ctrl-C kills
			// a run that is stuck draining.
			signal.Stop(sigs)
			cancel(signalCause{s})
		case <-ctx.Done():
		}
	}()

	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	// ctx is cancelled before the deferred cancel only by a signal.
	var sc signalCause
	interrupted := errors.As(context.Cause(ctx), &sc)
	if err != nil {
		fmt.Fprintf(stderr, "sigproc: %v\n", err)
		return 1
	}
	if interrupted {
		if sc.sig == syscall.SIGTERM {
			return exitTerminated
		}
		return exitInterrupted
	}
	return 0
}
