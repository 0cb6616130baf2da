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
	"syscall"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Exit statuses after a signal follow the shell's 128+signal convention, so
// scripts and supervisors can tell Ctrl-C (SIGINT, 130) from a stop request
// (SIGTERM, 143, what systemd and docker stop send), a hang-up (SIGHUP, 129)
// or a closed stdout/stderr pipe (SIGPIPE, 141). Every one of them drains,
// closes the sink and prints its summary first (see stopSignals).
const (
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
	exitBrokenPipe  = 128 + int(syscall.SIGPIPE) // 141
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := watchSignals(context.Background(), stderr)
	defer stop()

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
		var si *startupInterrupted
		switch {
		case errors.As(err, &si):
			return si.cause.exitStatus()
		case errors.Is(err, syscall.EPIPE):
			// The output's reader went away (stdout piped into "head"):
			// the status a shell tool killed by SIGPIPE would give.
			return exitBrokenPipe
		}
		return 1
	}
	if interrupted {
		return sc.exitStatus()
	}
	return 0
}
