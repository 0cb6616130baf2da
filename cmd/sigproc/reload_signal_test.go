//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFIFOOpen waits until the process pid is blocked opening a FIFO that
// has no writer (a thread's wchan is the kernel's wait_for_partner): its
// start-up is held there. Where /proc hides wchan it waits a second, ample
// for the signal handlers to be installed.
func waitFIFOOpen(t *testing.T, c *child) {
	t.Helper()
	pid := c.cmd.Process.Pid
	start := time.Now()
	waitFor(t, "the run to wait for its FIFO's writer", func() bool {
		select {
		case <-c.done:
			t.Fatalf("the run ended: %v\n%s", c.err, c.stderrText())
		default:
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		hidden := true
		for _, p := range tasks {
			b, _ := os.ReadFile(p)
			switch string(b) {
			case "wait_for_partner", "fifo_open":
				return true
			case "", "0":
			default:
				hidden = false
			}
		}
		return hidden && time.Since(start) > time.Second
	})
}

// fifoConfig writes a config reading raw rf32_le from a new FIFO, and
// returns the config's and the FIFO's paths.
func fifoConfig(t *testing.T, rest string) (cfg, fifo string) {
	t.Helper()
	dir := t.TempDir()
	fifo = filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, fmt.Sprintf("source: {type: file, path: %q, format: rf32_le, sample_rate: 1e6}\nblock_size: 256\n%s", fifo, rest))
	return cfg, fifo
}

// writeFile replaces path's content atomically, as an editor saving it.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestStartupSignals (issue 27 item 6): SIGINT or SIGTERM while the run
// is still starting (here its source waits for a FIFO's writer) ends it
// with the signal's exit status, quickly, and creates no output.
func TestStartupSignals(t *testing.T) {
	bin := buildBinary(t)
	for _, tt := range []struct {
		sig    syscall.Signal
		status int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "rec")
			cfg, _ := fifoConfig(t, fmt.Sprintf("filter: {taps: [1]}\nsink: {type: sigmf, path: %q}\n", base))
			c := startChild(t, bin, nil, "run", "-c", cfg)
			waitFIFOOpen(t, c)
			took := c.signal(tt.sig)
			t.Logf("exit %d %v after %v", c.cmd.ProcessState.ExitCode(), took, tt.sig)
			if code := c.cmd.ProcessState.ExitCode(); code != tt.status {
				t.Fatalf("exit %d, want %d\n%s", code, tt.status, c.stderrText())
			}
			if took > stopBound {
				t.Errorf("took %v, want <= %v", took, stopBound)
			}
			if !strings.Contains(c.stderrText(), "during start-up: stopped before any output was created") {
				t.Errorf("stderr does not say the start-up was interrupted:\n%s", c.stderrText())
			}
			for _, p := range []string{base + ".sigmf-meta", base + ".sigmf-data"} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after an interrupted start-up (%v)", p, err)
				}
			}
		})
	}
}

// TestHangupBeforeFirstBlock (issue 27 item 6): a SIGHUP before the first
// block, even during start-up, does not stop the run and is not lost: the
// config's new taps apply from the first sample.
func TestHangupBeforeFirstBlock(t *testing.T) {
	bin := buildBinary(t)
	const n = 4096
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i%100) / 100
	}
	for _, startup := range []bool{true, false} {
		name := map[bool]string{true: "during start-up", false: "after start-up"}[startup]
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.f32")
			body := func(tap int) string {
				return fmt.Sprintf("filter: {taps: [%d]}\nsink: {type: file, path: %q}\n", tap, out)
			}
			cfg, fifo := fifoConfig(t, body(1))
			c := startChild(t, bin, nil, "run", "-c", cfg)
			var w *os.File
			openWriter := func() {
				var err error
				if w, err = os.OpenFile(fifo, os.O_WRONLY, 0); err != nil {
					t.Fatal(err)
				}
			}
			if startup {
				waitFIFOOpen(t, c)
			} else {
				openWriter()
				waitFor(t, "the run to start", func() bool { return strings.Contains(c.stderrText(), "starting") })
			}
			old, _ := os.ReadFile(cfg)
			writeFile(t, cfg, strings.Replace(string(old), body(1), body(2), 1))
			if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			if startup {
				time.Sleep(200 * time.Millisecond) // time enough to stop, had SIGHUP stopped it
				select {
				case <-c.done:
					t.Fatalf("SIGHUP during start-up stopped the run: %v\n%s", c.err, c.stderrText())
				default:
				}
				openWriter()
			} else {
				waitFor(t, "the reload", func() bool { return strings.Contains(c.stderrText(), "reloaded the config's stage parameters") })
			}
			if _, err := w.Write(float32Bytes(in)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			c.wait(time.Now())
			if code := c.cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("exit %d\n%s", code, c.stderrText())
			}
			if !regexp.MustCompile(`trigger=SIGHUP.*reloaded the config's stage parameters|reloaded the config's stage parameters.*trigger=SIGHUP`).MatchString(c.stderrText()) {
				t.Errorf("no SIGHUP reload in the log:\n%s", c.stderrText())
			}
			y := readF32(t, out)
			if len(y) != n {
				t.Fatalf("%d samples out, want %d", len(y), n)
			}
			for i := range y {
				if y[i] != 2*in[i] {
					t.Fatalf("out[%d] = %g, want the new taps' 2 × %g: the SIGHUP was not applied from the first block", i, y[i], in[i])
				}
			}
		})
	}
}

// TestReloadsApplyInOrder (issue 27 item 6): SIGHUPs sent as fast as the
// config is rewritten, with watch_config polling the same file, apply its
// versions in order, never an older one after a newer, and end on the
// newest.
func TestReloadsApplyInOrder(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	body := func(k int) string {
		return fmt.Sprintf(`source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.1, seed: 1, paced: true, complex: true}
stages:
  - shift: {frequency_hz: %d}
  - fir: {design: {type: lowpass, cutoff_hz: 1e5, num_taps: 4097}} # a reload's read takes a while
sink: {type: null}
control: {watch_config: true}
`, k*1000)
	}
	writeFile(t, cfg, body(0))
	c := startChild(t, bin, nil, "run", "-c", cfg)
	waitFor(t, "the run to start", func() bool { return strings.Contains(c.stderrText(), "starting") })
	const versions = 40
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 1; k <= versions; k++ {
		writeFile(t, cfg, body(k))
		if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // the watcher polls every 500 ms
	}
	retuned := regexp.MustCompile(`stage retuned .*to="?shift (\d+) Hz`)
	applied := func() []int {
		var v []int
		for _, m := range retuned.FindAllStringSubmatch(c.stderrText(), -1) {
			k, _ := strconv.Atoi(m[1])
			v = append(v, k/1000)
		}
		return v
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := applied()
		if len(v) > 0 && v[len(v)-1] == versions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the newest version (%d) was not the last applied: %v\n%s", versions, v, c.stderrText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	v := applied()
	t.Logf("%d SIGHUPs and the watcher applied %d reloads: %v", versions, len(v), v)
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			t.Fatalf("version %d applied after %d: %v", v[i], v[i-1], v)
		}
	}
	c.signal(syscall.SIGTERM)
	if code := c.cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("exit %d\n%s", code, c.stderrText())
	}
}

// TestReloadNeverHangs (issue 27 item 6): a FIFO as the config or a taps
// file, whether met at start or at a reload, is refused at once; the run
// goes on and still stops within stopBound.
func TestReloadNeverHangs(t *testing.T) {
	bin := buildBinary(t)
	t.Run("config a FIFO at start", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "c.yaml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		c := startChild(t, bin, nil, "run", "-c", fifo)
		c.wait(time.Now())
		if code := c.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(c.stderrText(), "not a regular file (a FIFO)") {
			t.Fatalf("exit %d, want 1 refusing the FIFO\n%s", code, c.stderrText())
		}
	})
	for _, tt := range []struct {
		name    string
		replace string // "config" or "taps": which file becomes a FIFO
	}{
		{"config replaced by a FIFO (watch_config and SIGHUP)", "config"},
		{"taps file replaced by a FIFO (SIGHUP)", "taps"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, taps := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "taps.txt")
			writeFile(t, taps, "0.5\n0.5\n")
			base := filepath.Join(dir, "rec")
			writeFile(t, cfg, fmt.Sprintf(`source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}
filter: {taps_file: %q}
sink: {type: sigmf, path: %q}
control: {watch_config: true}
`, taps, base))
			c := startChild(t, bin, nil, "run", "-c", cfg)
			waitFor(t, "output", func() bool { fi, err := os.Stat(base + ".sigmf-data"); return err == nil && fi.Size() > 0 })
			victim := map[string]string{"config": cfg, "taps": taps}[tt.replace]
			if err := os.Remove(victim); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(victim, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the reload refused", func() bool {
				return strings.Contains(c.stderrText(), "reload refused") && strings.Contains(c.stderrText(), "not a regular file (a FIFO)")
			})
			if tt.replace == "config" { // and the watcher's own reload, which it waits for at the stop
				waitFor(t, "the watcher's reload refused", func() bool { return strings.Contains(c.stderrText(), `trigger="file changed"`) })
			}
			took := c.signal(syscall.SIGTERM)
			c.checkStopped(143, base, 4)
			t.Logf("stopped %v after SIGTERM", took)
			if took > stopBound {
				t.Errorf("took %v to stop, want <= %v", took, stopBound)
			}
		})
	}
}

// TestBrokenStdoutPipe (issue 27 item 6): samples on stdout into a reader
// that goes away ("| head -c") end the run with 141, the status of a shell
// tool killed by SIGPIPE, not 1.
func TestBrokenStdoutPipe(t *testing.T) {
	bin := buildBinary(t)
	for _, tt := range []struct{ name, source string }{
		{"synthetic as fast as it goes", "{type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000}"},
		{"paced", "{type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeConfig(t, "source: "+tt.source+"\nfilter: {taps: [0.5, 0.5]}\nsink: {type: file, path: \"-\"}\n")
			cmd := exec.Command(bin, "run", "-c", cfg, "--log-level", "warn")
			r, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(bufio.NewReader(r), make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
			r.Close() // like head -c 100
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the run did not stop after its stdout reader went away")
			}
			if code := cmd.ProcessState.ExitCode(); code != 141 {
				t.Fatalf("exit %d, want 141\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "broken pipe") {
				t.Errorf("stderr does not say why:\n%s", stderr.String())
			}
		})
	}
}

// TestZMQStalledPeerStop (issue 27 item 8): a ZeroMQ peer that connects
// (or accepts) and then stalls in the ZMTP greeting delays SIGINT by less
// than stopBound, as a source and as a sink.
func TestZMQStalledPeerStop(t *testing.T) {
	bin := buildBinary(t)
	for _, tt := range []struct {
		name, source, sink string
		sourceSide         bool // the stalled peer is the source's sender
	}{
		{"source's sender stalled", "{type: zmq, endpoint: \"tcp://%s\", pattern: pull, format: rf32_le, sample_rate: 1e6}", "{type: null}", true},
		{"sink's consumer stalled", "{type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}", "{type: zmq, endpoint: \"tcp://%s\", pattern: pub, format: rf32_le}", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeLoopbackAddr(t)
			src, snk := tt.source, tt.sink
			var ln net.Listener
			if tt.sourceSide {
				var err error
				if ln, err = net.Listen("tcp", addr); err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				src = fmt.Sprintf(src, addr)
			} else {
				snk = fmt.Sprintf(snk, addr)
			}
			cfg := writeConfig(t, "source: "+src+"\nfilter: {taps: [1]}\nsink: "+snk+"\n")
			c := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "warn")
			var nc net.Conn
			var err error
			if tt.sourceSide {
				nc, err = ln.Accept()
			} else {
				waitFor(t, "the sink's bind", func() bool {
					nc, err = net.Dial("tcp", addr)
					return err == nil
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			// The other side greets first: once its signature is here, it
			// waits for ours, which never comes.
			if _, err := io.ReadFull(nc, make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			took := c.signal(syscall.SIGINT)
			t.Logf("exit %d %v after SIGINT", c.cmd.ProcessState.ExitCode(), took)
			if code := c.cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130\n%s", code, c.stderrText())
			}
			if took > stopBound {
				t.Errorf("took %v to stop, want <= %v", took, stopBound)
			}
		})
	}
}

// TestZMQSecondSinkRefused (issue 27 item 8): a second run binding the
// same ipc endpoint as a live one is refused, and the first keeps its
// socket.
func TestZMQSecondSinkRefused(t *testing.T) {
	bin := buildBinary(t)
	sock := filepath.Join(t.TempDir(), "s")
	cfg := writeConfig(t, fmt.Sprintf("source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}\nfilter: {taps: [1]}\nsink: {type: zmq, endpoint: \"ipc://%s\", pattern: pub, format: rf32_le}\n", sock))
	first := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "warn")
	waitFor(t, "the first sink's socket", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	second := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "warn")
	second.wait(time.Now())
	if code := second.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(second.stderrText(), "address in use") {
		t.Fatalf("second run: exit %d, want 1 with \"address in use\"\n%s", code, second.stderrText())
	}
	t.Log(strings.TrimSpace(second.stderrText()))
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("the first run's socket is gone: %v", err)
	}
	c.Close()
	select {
	case <-first.done:
		t.Fatalf("the first run ended: %v\n%s", first.err, first.stderrText())
	default:
	}
	first.signal(syscall.SIGINT)
	if code := first.cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("first run: exit %d\n%s", code, first.stderrText())
	}
}
