//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBinary compiles this command into a temp dir, for tests that need a
// real process to signal.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the sigproc binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build the sigproc binary for the signal tests")
	}
	bin := filepath.Join(t.TempDir(), "sigproc")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeLoopbackAddr returns a 127.0.0.1 address whose port was free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitFor polls cond until it holds; the deadline only guards against a
// hung child, it is not what the test measures.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSignalStopsRunCleanly runs a paced, unbounded synthetic run into a
// SigMF sink as a child process, signals it once output is flowing, and
// checks that it drained: summary printed, metadata written, data file a
// whole number of samples matching the summary, metrics server shut down,
// and the documented exit status (SIGINT 130, SIGTERM 143).
func TestSignalStopsRunCleanly(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		sig  syscall.Signal
		exit int
	}{
		{syscall.SIGINT, 130},
		{syscall.SIGTERM, 143},
	}
	for _, tt := range tests {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "rec")
			addr := freeLoopbackAddr(t)
			cfg := writeConfig(t, fmt.Sprintf(`
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.5, seed: 1, paced: true}
block_size: 1024
filter: {taps: [0.5, 0.5]}
sink: {type: sigmf, path: %q}
metrics: {listen: "%s"}
`, base, addr))
			cmd := exec.Command(bin, "run", "-c", cfg, "--log-level", "warn")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := false
			defer func() {
				if !exited {
					cmd.Process.Kill()
					cmd.Wait()
				}
			}()
			waitFor(t, "output in "+base+".sigmf-data", func() bool {
				fi, err := os.Stat(base + ".sigmf-data")
				return err == nil && fi.Size() > 0
			})
			// The metrics endpoint serves the live run; its counters follow
			// the progress snapshots (every 200 ms).
			if m := scrapeMetrics(t, addr); m[`sigproc_backend_info{backend="cpu"}`] != 1 {
				t.Errorf("live metrics: backend_info = %v, want 1", m[`sigproc_backend_info{backend="cpu"}`])
			}
			waitFor(t, "sigproc_blocks_total > 0", func() bool {
				return scrapeMetrics(t, addr)["sigproc_blocks_total"] > 0
			})

			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			exited = true
			if code := cmd.ProcessState.ExitCode(); code != tt.exit {
				t.Fatalf("exit status %d (%v), want %d\nstdout: %s\nstderr: %s", code, err, tt.exit, &stdout, &stderr)
			}

			line := strings.TrimSpace(stdout.String())
			sm := summaryRE.FindStringSubmatch(line)
			if sm == nil || !strings.HasSuffix(line, "(interrupted)") {
				t.Fatalf("stdout %q: want one summary line marked (interrupted)", line)
			}
			out, _ := strconv.ParseInt(sm[2], 10, 64)
			if out <= 0 {
				t.Errorf("summary says out %d", out)
			}

			meta, err := os.ReadFile(base + ".sigmf-meta")
			if err != nil {
				t.Fatalf("metadata not written: %v", err)
			}
			var doc struct {
				Global map[string]any `json:"global"`
			}
			if err := json.Unmarshal(meta, &doc); err != nil {
				t.Fatalf("metadata is not JSON: %v\n%s", err, meta)
			}
			if doc.Global["core:datatype"] != "rf32_le" || doc.Global["core:sample_rate"] != 1e6 {
				t.Errorf("metadata global = %v", doc.Global)
			}
			fi, err := os.Stat(base + ".sigmf-data")
			if err != nil {
				t.Fatal(err)
			}
			const bytesPerSample = 4 // rf32_le
			if fi.Size()%bytesPerSample != 0 || fi.Size() != out*bytesPerSample {
				t.Errorf("data file %d bytes, want out %d × %d = %d", fi.Size(), out, bytesPerSample, out*bytesPerSample)
			}

			// The metrics server was shut down with the run.
			if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
				resp.Body.Close()
				t.Errorf("metrics still served at %s after exit", addr)
			}
		})
	}
}

// scrapeMetrics GETs /metrics and returns each series' value by its name
// with labels.
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	vals := map[string]float64{}
	for _, line := range strings.Split(body.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			vals[line[:i]] = v
		}
	}
	return vals
}
