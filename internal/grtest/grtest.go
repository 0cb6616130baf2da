// Package grtest runs GNU Radio flowgraphs (bench/gr_zmq.py) from Go tests,
// so that sigproc's ZeroMQ blocks are checked against the real gr-zeromq.
//
// GNU Radio comes from Debian (apt-get install --no-install-recommends
// gnuradio) and its Python modules from Debian's /usr/bin/python3. Without
// them a test skips, unless CI=true: then it fails, so CI cannot pass
// without having run the interop tests.
package grtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// pythons are tried in order; Debian's is first because the python on
// PATH may be another one without Debian's modules.
var pythons = []string{"/usr/bin/python3", "python3"}

var (
	once   sync.Once
	python string
	whyNot string
)

// Python returns a python that imports gnuradio.zeromq, or skips the test
// (fails it when CI=true).
func Python(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var errs []string
		for _, p := range pythons {
			out, err := exec.Command(p, "-c", "from gnuradio import zeromq, gr; print(gr.version())").CombinedOutput()
			if err == nil {
				python = p
				return
			}
			errs = append(errs, fmt.Sprintf("%s: %v: %s", p, err, lastLine(string(out))))
		}
		whyNot = strings.Join(errs, "; ")
	})
	if python == "" {
		msg := "GNU Radio's Python modules not found (apt-get install --no-install-recommends gnuradio): " + whyNot
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " [CI=true: the interop tests must run]")
		}
		t.Skip(msg)
	}
	return python
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Script is the path of bench/gr_zmq.py.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bench", "gr_zmq.py")
}

// Proc is a running flowgraph.
type Proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	lines  chan string
	stderr *lockedWriter
	stdin  io.WriteCloser
}

// Start runs bench/gr_zmq.py with args and waits (up to a minute) for its
// "ready" line. The process is killed when the test ends.
func Start(t testing.TB, args ...string) *Proc {
	t.Helper()
	py := Python(t)
	cmd := exec.Command(py, append([]string{Script()}, args...)...)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{t: t, cmd: cmd, lines: make(chan string, 16), stderr: stderr, stdin: stdin}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	if line := p.Expect("ready", time.Minute); line == "" {
		t.Fatalf("gr_zmq.py %s: no ready line", strings.Join(args, " "))
	}
	return p
}

// Expect waits for a line starting with prefix and returns it; it fails
// the test on timeout or if the script exits first.
func (p *Proc) Expect(prefix string, timeout time.Duration) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("gr_zmq.py exited before %q; stderr:\n%s", prefix, p.stderr.String())
				return ""
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-ctx.Done():
			p.t.Fatalf("gr_zmq.py: no %q within %v; stderr:\n%s", prefix, timeout, p.stderr.String())
			return ""
		}
	}
}

// Wait waits for "done" and the exit, failing the test on a non-zero exit.
func (p *Proc) Wait(timeout time.Duration) string {
	p.t.Helper()
	line := p.Expect("done", timeout)
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("gr_zmq.py: %v (%s); stderr:\n%s", err, line, p.stderr.String())
	}
	return line
}

// lockedWriter collects a process's stderr for reading while it runs.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
