// Command sigproc runs real-time FIR filtering pipelines: a capture source
// feeds a ring of fixed-size blocks, a CPU (or CUDA) backend filters them and
// a sink stores the result. See "sigproc --help" and README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// exitInterrupted is the conventional exit status after SIGINT (128+2).
const exitInterrupted = 130

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, restore default handling so that a
		// second Ctrl-C kills a run that is stuck draining.
		<-ctx.Done()
		stop()
	}()

	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	// stop has not run yet unless a signal arrived, so a done ctx means
	// SIGINT or SIGTERM.
	interrupted := ctx.Err() != nil
	if err != nil {
		fmt.Fprintf(stderr, "sigproc: %v\n", err)
		return 1
	}
	if interrupted {
		return exitInterrupted
	}
	return 0
}
