//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopBound is how long a run may take to exit after SIGINT or SIGTERM,
// however its source stalls (the bound).
const stopBound = time.Second

// child is a sigproc process under test.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// startChild starts bin with args; stdin may be nil.
func startChild(t *testing.T, bin string, stdin *os.File, args ...string) *child {
	t.Helper()
	c := &child{t: t, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	c.cmd.Stdin = stdin
	c.cmd.Stdout = &c.stdout
	c.cmd.Stderr = writerFunc(func(p []byte) (int, error) { c.mu.Lock(); defer c.mu.Unlock(); return c.stderr.Write(p) })
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (c *child) stderrText() string { c.mu.Lock(); defer c.mu.Unlock(); return c.stderr.String() }

// signal sends sig and returns when the process has exited, with the time
// that took; it fails the test if the process outlives the watchdog.
func (c *child) signal(sig os.Signal) time.Duration {
	c.t.Helper()
	start := time.Now()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatal(err)
	}
	return c.wait(start)
}

func (c *child) wait(start time.Time) time.Duration {
	c.t.Helper()
	select {
	case <-c.done:
		return time.Since(start)
	case <-time.After(60 * time.Second):
		c.t.Fatalf("process still running 60 s after the signal\nstderr: %s", c.stderrText())
	}
	return 0
}

// checkStopped checks the exit status, the summary and the recording.
func (c *child) checkStopped(status int, base string, bytesPerSample int64) (out int64) {
	c.t.Helper()
	if code := c.cmd.ProcessState.ExitCode(); code != status {
		c.t.Fatalf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, status, &c.stdout, c.stderrText())
	}
	line := strings.TrimSpace(c.stdout.String())
	sm := summaryRE.FindStringSubmatch(line)
	if sm == nil || !strings.HasSuffix(line, "(interrupted)") {
		c.t.Fatalf("stdout %q: want one summary line marked (interrupted)", line)
	}
	out, _ = strconv.ParseInt(sm[2], 10, 64)
	sigmfMeta(c.t, base+".sigmf-meta")
	fi, err := os.Stat(base + ".sigmf-data")
	if err != nil {
		c.t.Fatal(err)
	}
	if fi.Size() != out*bytesPerSample {
		c.t.Errorf("data file %d bytes, want out %d × %d", fi.Size(), out, bytesPerSample)
	}
	return out
}

func waitExists(t *testing.T, path string) {
	t.Helper()
	waitFor(t, path, func() bool { _, err := os.Stat(path); return err == nil })
}

// TestSafetySignals runs the built binary for the signal cases.
func TestSafetySignals(t *testing.T) {
	bin := buildBinary(t)
	cfgFor := func(t *testing.T, source, base, extra string) string {
		return writeConfig(t, fmt.Sprintf("source: %s\nfilter: {taps: [0.5, 0.5]}\nsink: {type: sigmf, path: %q}\n%s", source, base, extra))
	}

	// Issue item 3: a silent writer on stdin or a FIFO no longer holds the
	// run: SIGINT and SIGTERM stop it within stopBound.
	t.Run("stalled stdin", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close() // the writer stays open and silent
		c := startChild(t, bin, r, "run", "-c", cfgFor(t, "{type: stdin, format: rf32_le, sample_rate: 1e6}", base, ""))
		r.Close()
		waitExists(t, base+".sigmf-meta")
		took := c.signal(syscall.SIGINT)
		c.checkStopped(130, base, 4)
		t.Logf("stopped %v after SIGINT", took)
		if took > stopBound {
			t.Errorf("took %v to stop, want <= %v", took, stopBound)
		}
	})
	t.Run("stalled fifo", func(t *testing.T) {
		dir := t.TempDir()
		fifo, base := filepath.Join(dir, "in.fifo"), filepath.Join(dir, "rec")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		c := startChild(t, bin, nil, "run", "-c", cfgFor(t, "{type: file, path: "+fifo+", format: rf32_le, sample_rate: 1e6}", base, ""))
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		waitExists(t, base+".sigmf-meta")
		took := c.signal(syscall.SIGTERM)
		c.checkStopped(143, base, 4)
		t.Logf("stopped %v after SIGTERM", took)
		if took > stopBound {
			t.Errorf("took %v to stop, want <= %v", took, stopBound)
		}
	})

	// A FIFO output no reader opens: the open no longer blocks in the
	// kernel, where no signal reached it; the run says that it waits, and
	// a signal stops it.
	t.Run("fifo sink without a reader", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "out.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		c := startChild(t, bin, nil, "run", "-c", writeConfig(t, fmt.Sprintf("source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.1, seed: 1}\nfilter: {taps: [1]}\nsink: {type: file, path: %q}\n", fifo)))
		waitFor(t, "the run to say it waits for the FIFO's reader", func() bool {
			return strings.Contains(c.stderrText(), "no reader yet")
		})
		took := c.signal(syscall.SIGTERM)
		if code := c.cmd.ProcessState.ExitCode(); code != 143 {
			t.Fatalf("exit status %d, want 143\nstderr: %s", code, c.stderrText())
		}
		t.Logf("stopped %v after SIGTERM", took)
		if took > stopBound {
			t.Errorf("took %v to stop, want <= %v", took, stopBound)
		}
	})

	// slowDrain is a run whose filter falls far behind its source, so that
	// a stop leaves a long drain.
	slowDrain := func(t *testing.T, base string) string {
		return writeConfig(t, fmt.Sprintf(`source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.1, seed: 1}
block_size: 65536
ring_slots: 256
filter:
  method: direct # slow on purpose: the filter must fall behind
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: 16385}
sink: {type: sigmf, path: %q}
`, base))
	}

	// Issue item 3: a second signal cuts a long drain short, and still
	// writes the samples already filtered and a valid, final metadata
	// whose annotations count the blocks never filtered.
	t.Run("second signal", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		cfg := slowDrain(t, base)
		c := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "warn")
		waitFor(t, "output", func() bool { fi, err := os.Stat(base + ".sigmf-data"); return err == nil && fi.Size() > 0 })
		c.cmd.Process.Signal(syscall.SIGINT)
		waitFor(t, "the first signal's message", func() bool {
			return strings.Contains(c.stderrText(), "a second signal, or run's --drain-limit, cuts that short")
		})
		took := c.signal(syscall.SIGINT)
		out := c.checkStopped(130, base, 4)
		t.Logf("stopped %v after the second SIGINT, %d samples out", took, out)
		if took > stopBound {
			t.Errorf("took %v after the second signal, want <= %v", took, stopBound)
		}
		m := lossRE.FindStringSubmatch(strings.TrimSpace(c.stdout.String()))
		if m == nil || m[2] == "0" {
			t.Fatalf("summary %q: want blocks dropped at the filter", c.stdout.String())
		}
		in, _ := strconv.ParseInt(summaryRE.FindStringSubmatch(c.stdout.String())[1], 10, 64)
		_, notes := sigmfMeta(t, base+".sigmf-meta")
		var annotated int64
		for _, a := range notes {
			annotated += int64(a["sigproc:dropped_samples"].(float64))
		}
		if annotated != in-out {
			t.Errorf("annotations account for %d samples, want in %d - out %d", annotated, in, out)
		}
	})

	// A drain slower than --drain-limit is cut short as by a second
	// signal, so that a supervisor's one SIGTERM (then SIGKILL after its
	// timeout) still gets a flushed, final recording.
	t.Run("drain limit", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		cfg := slowDrain(t, base)
		const limit = 300 * time.Millisecond
		c := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "warn", "--drain-limit", limit.String())
		// Eight blocks filtered first: the source, many times faster than
		// the filter, has queued far more than the limit drains by then.
		// At the first block only, the queue once drained in 296 ms, under
		// the limit, and nothing was cut.
		waitFor(t, "output", func() bool {
			fi, err := os.Stat(base + ".sigmf-data")
			return err == nil && fi.Size() >= 8*65536*4
		})
		took := c.signal(syscall.SIGTERM)
		out := c.checkStopped(143, base, 4)
		t.Logf("stopped %v after SIGTERM, %d samples out", took, out)
		if took > limit+stopBound {
			t.Errorf("took %v after SIGTERM, want <= %v", took, limit+stopBound)
		}
		if !strings.Contains(c.stderrText(), "still filtering after --drain-limit 300ms") {
			t.Errorf("stderr does not say the limit cut the drain short:\n%s", c.stderrText())
		}
		m := lossRE.FindStringSubmatch(strings.TrimSpace(c.stdout.String()))
		if m == nil || m[2] == "0" {
			t.Fatalf("summary %q: want blocks dropped at the filter", c.stdout.String())
		}
	})

	// Issue item 2: a run that dies of out-of-memory on a huge ring (here
	// under a 1 GB address-space limit) has not touched the existing
	// output it was allowed to overwrite: outputs are created after the
	// ring is allocated.
	t.Run("ring out of memory", func(t *testing.T) {
		old := filepath.Join(t.TempDir(), "old.f32")
		os.WriteFile(old, []byte("precious"), 0o644)
		cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000}\nblock_size: 1048576\nring_slots: 512\nfilter: {taps: [1]}\nsink: {type: file, path: "+old+", overwrite: true}\n")
		out, err := exec.Command("/bin/sh", "-c", `ulimit -v 1000000 && exec "$0" run -c "$1" --num-samples 1000`, bin, cfg).CombinedOutput()
		if err == nil || !bytes.Contains(out, []byte("out of memory")) || !bytes.Contains(out, []byte("pipeline.NewRing")) && !bytes.Contains(out, []byte("pipeline.AlignedBytes")) {
			t.Fatalf("want the 2 GiB ring to run out of memory under a 1 GB limit: %v\n%.2000s", err, out)
		}
		if b, _ := os.ReadFile(old); string(b) != "precious" {
			t.Fatalf("the failed run changed the existing output to %q\n%s", b, out)
		}
	})

	// Issue item 4, as issue 18 changed it: SIGHUP reloads the config's
	// stage parameters and the run goes on; SIGTERM still stops it.
	t.Run("SIGHUP reloads", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		c := startChild(t, bin, nil, "run", "-c", cfgFor(t, "{type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}", base, ""))
		waitFor(t, "output", func() bool { fi, err := os.Stat(base + ".sigmf-data"); return err == nil && fi.Size() > 0 })
		if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the reload's log line", func() bool { return strings.Contains(c.stderrText(), "reload: no stage parameter changed") })
		select {
		case <-c.done:
			t.Fatalf("SIGHUP stopped the run\n%s", c.stderrText())
		default:
		}
		c.signal(syscall.SIGTERM)
		if out := c.checkStopped(143, base, 4); out <= 0 {
			t.Errorf("out %d", out)
		}
	})

	// Issue item 11: stderr piped into a command that exits early ends the
	// run cleanly (exit 141) with its output flushed and metadata valid.
	t.Run("SIGPIPE on stderr", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "-c", cfgFor(t, "{type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, paced: true}", base, ""), "--progress")
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		// The reader takes the first line, like "| head -1", and goes.
		if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		r.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatal("run did not stop after its stderr reader went away")
		}
		c := &child{t: t, cmd: cmd}
		c.stdout = stdout
		c.checkStopped(141, base, 4)
	})

	// Issue item 5: kill -9 at any moment leaves a valid metadata file
	// that promises no more than the data holds, and whole samples; here
	// mid-run with gaps being recorded.
	t.Run("kill -9", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "rec")
		cfg := writeConfig(t, fmt.Sprintf(`source: {type: synthetic, sample_rate: 50e6, signal: noise, noise_std: 0.1, seed: 1, paced: true}
block_size: 4096
ring_slots: 4
filter:
  method: direct # slow on purpose: the filter must fall behind
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: 4097}
sink: {type: sigmf, path: %q, format: ri16_le}
`, base))
		c := startChild(t, bin, nil, "run", "-c", cfg, "--log-level", "error")
		waitFor(t, "a gap in the metadata", func() bool {
			b, err := os.ReadFile(base + ".sigmf-meta")
			var d struct{ Captures []any }
			return err == nil && json.Unmarshal(b, &d) == nil && len(d.Captures) > 1
		})
		c.cmd.Process.Kill()
		<-c.done
		caps, notes := sigmfMeta(t, base+".sigmf-meta")
		fi, _ := os.Stat(base + ".sigmf-data")
		const frame = 2 // ri16_le
		if fi.Size()%frame != 0 {
			t.Errorf("data file %d bytes: not whole %d-byte samples", fi.Size(), frame)
		}
		for _, seg := range append(caps, notes...) {
			if s := int64(seg["core:sample_start"].(float64)); s > fi.Size()/frame {
				t.Errorf("metadata names sample %d, but the data holds %d", s, fi.Size()/frame)
			}
		}
	})
}

// TestGapsRecorded (issue item 6): a paced source faster than the filter,
// overrun drop: every gap starts a capture segment with a datetime and
// carries an annotation, and the annotations add up to the summary's drops.
func TestGapsRecorded(t *testing.T) {
	base := filepath.Join(t.TempDir(), "rec")
	cfg := writeConfig(t, fmt.Sprintf(`source: {type: synthetic, sample_rate: 50e6, signal: noise, noise_std: 0.1, seed: 1, paced: true, num_samples: 5e6}
block_size: 4096
ring_slots: 4
overrun: drop
filter:
  method: direct # slow on purpose: the filter must fall behind
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: 16385}
sink: {type: sigmf, path: %q}
`, base))
	code, out, errs := runCLI(t, "", "run", "-c", cfg, "--log-level", "error")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sm := summaryRE.FindStringSubmatch(out)
	drops, _ := strconv.ParseInt(sm[5], 10, 64)
	if drops == 0 {
		t.Fatalf("no drops: %s", out)
	}
	caps, notes := sigmfMeta(t, base+".sigmf-meta")
	var annotated int64
	inner := 0
	for _, a := range notes {
		annotated += int64(a["sigproc:dropped_samples"].(float64))
		if !strings.Contains(a["core:comment"].(string), "end of the run") {
			inner++
			if caps[inner]["core:sample_start"] != a["core:sample_start"] {
				t.Fatalf("annotation %v has no capture segment at its index (%v)", a, caps[inner])
			}
		}
	}
	if annotated != drops || len(caps) != inner+1 {
		t.Fatalf("annotated %d samples in %d annotations, %d captures; summary drops %d", annotated, len(notes), len(caps), drops)
	}
	rfc := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
	for _, c := range caps {
		if d, _ := c["core:datetime"].(string); !rfc.MatchString(d) {
			t.Fatalf("capture %v: no RFC 3339 core:datetime", c)
		}
	}
}

// TestFullDiskSummary (issue item 5): on a full disk the summary's "out"
// counts only the samples that reached the file.
func TestFullDiskSummary(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100000}\nfilter: {taps: [1]}\nsink: {type: file, path: /dev/full}\n")
	code, out, errs := runCLI(t, "", "run", "-c", cfg, "--log-level", "error")
	if code != 1 || !strings.Contains(errs, "no space left") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if sm := summaryRE.FindStringSubmatch(out); sm == nil || sm[2] != "0" {
		t.Fatalf("summary %q: want out 0, nothing reached /dev/full", out)
	}
}

// TestFileSizeLimitSummary: a recording cut short part way (here by the
// file size limit, EFBIG, as a disk that fills up) holds whole frames
// only, though its 6-byte frames do not divide the sink's buffer, and the
// summary's "out" is what the file holds: the samples of the block whose
// write failed that did reach it count too.
func TestFileSizeLimitSummary(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	in, outPath := filepath.Join(dir, "in.i16"), filepath.Join(dir, "out.i16")
	x := make([]byte, 6*200000) // 200000 frames of 3 ri16 channels
	for i := range x {
		x[i] = byte(i % 251)
	}
	if err := os.WriteFile(in, x, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "source: {type: file, path: "+in+", format: ri16_le, channels: 3, sample_rate: 1000}\nfilter: {taps: [1]}\nsink: {type: file, path: "+outPath+", format: ri16_le}\n")
	// ulimit -f counts blocks of 512 or 1024 bytes, by shell: either way
	// the limit falls inside the file, not on a frame.
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", `ulimit -f 301 && exec "$0" run -c "$1" --log-level error`, bin, cfg)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "file too large") {
		t.Fatalf("want the write to fail with EFBIG: %v\n%s", err, stderr.String())
	}
	fi, err := os.Stat(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 || fi.Size()%6 != 0 {
		t.Fatalf("the output holds %d bytes, want whole 6-byte frames", fi.Size())
	}
	sm := summaryRE.FindStringSubmatch(stdout.String())
	if sm == nil || sm[2] != strconv.FormatInt(fi.Size()/6, 10) {
		t.Fatalf("summary %q: want out %d, the frames in the file", stdout.String(), fi.Size()/6)
	}
}

// TestStdinFileCheckedBeforeOutputs: stdin redirected from a WAV file
// while the config says raw samples is refused before any output exists,
// not at the first read (which left an empty recording behind that the
// corrected run then refused to replace).
func TestStdinFileCheckedBeforeOutputs(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wav")
	hdr := []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
	if err := os.WriteFile(in, append(hdr, make([]byte, 2000)...), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "rec")
	cfg := writeConfig(t, "source: {type: stdin, format: ri16_le, sample_rate: 8000}\nfilter: {taps: [1]}\nsink: {type: sigmf, path: "+base+"}\n")
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "run", "-c", cfg)
	cmd.Stdin = f
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("WAV")) {
		t.Fatalf("want the WAV input refused: %v\n%s", err, out)
	}
	for _, p := range []string{base + ".sigmf-data", base + ".sigmf-meta"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}
