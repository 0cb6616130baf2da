package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// runMain runs the command line through main's run and returns the exit
// status and output.
func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRunSinkDiskFull writes to /dev/full: the first buffer flush fails
// with ENOSPC, the run stops early with status 1 and says why.
func TestRunSinkDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("/dev/full not available (Linux only)")
	}
	const total = 4_000_000
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.5, num_samples: 4000000}
block_size: 1024
filter: {taps: [0.5, 0.5]}
sink: {type: file, path: /dev/full}
`)
	code, stdout, stderr := runMain("run", "-c", cfg, "--log-level", "warn")
	if code != 1 {
		t.Fatalf("exit status %d, want 1\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "sigproc: write sink: ") || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("stderr %q: want a write sink error saying no space left on device", stderr)
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("stderr shows a panic: %s", stderr)
	}
	// The run stopped at the failure instead of generating all samples:
	// at most the ring (64 blocks) and the sink buffer were ahead of it.
	m := summaryRE.FindStringSubmatch(strings.TrimSpace(stdout))
	if m == nil {
		t.Fatalf("no summary line on stdout: %q", stdout)
	}
	if in, _ := strconv.Atoi(m[1]); in >= total {
		t.Errorf("samples in %d: the run did not stop at the write error", in)
	}
}

// TestRunSinkUnwritable covers output paths that cannot be created.
func TestRunSinkUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sinkType, path, want string
		needNonRoot                bool
	}{
		// A regular file as a parent directory fails for root too.
		{"file under a regular file", "file", filepath.Join(file, "out.raw"), "not a directory", false},
		{"sigmf under a regular file", "sigmf", filepath.Join(file, "rec"), "not a directory", false},
		// Root ignores permission bits, so this case needs another user.
		{"read-only directory", "file", filepath.Join(readOnly, "out.raw"), "permission denied", true},
		{"sigmf in read-only directory", "sigmf", filepath.Join(readOnly, "rec"), "permission denied", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needNonRoot && os.Geteuid() == 0 {
				t.Skip("running as root, which ignores directory permissions")
			}
			cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}
filter: {taps: [1]}
sink: {type: `+tt.sinkType+`, path: `+strconv.Quote(tt.path)+`}
`)
			code, stdout, stderr := runMain("run", "-c", cfg)
			if code != 1 {
				t.Fatalf("exit status %d, want 1\nstderr: %s", code, stderr)
			}
			if !strings.Contains(stderr, "sink.path") || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q: want a sink.path error containing %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("the run started (stdout %q); it should fail before", stdout)
			}
		})
	}
}

// TestRunFileSourceEndsMidBlock reads raw files whose length is not a
// multiple of block_size: the partial last block is filtered and written,
// so the output has exactly as many samples as the input, and every one of
// them equals the direct convolution. Inputs are small integers and taps
// powers of two, so the float32 results are exact.
func TestRunFileSourceEndsMidBlock(t *testing.T) {
	taps := []float32{0.5, 0.25, -0.125}
	tests := []struct {
		name    string
		format  string
		samples int
		block   int
		complex bool
	}{
		{"real 1000 samples in blocks of 256", "rf32_le", 1000, 256, false},
		{"real shorter than one block", "rf32_le", 5, 256, false},
		{"complex 1001 pairs in blocks of 128", "cf32_le", 1001, 128, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := 1
			if tt.complex {
				ch = 2
			}
			x := make([]float32, tt.samples*ch)
			raw := make([]byte, 4*len(x))
			for i := range x {
				x[i] = float32(i%7 - 3 + 10*(i%ch))
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x[i]))
			}
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in.raw"), filepath.Join(dir, "out.raw")
			if err := os.WriteFile(in, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := writeConfig(t, `
source: {type: file, path: `+strconv.Quote(in)+`, format: `+tt.format+`, sample_rate: 1000}
block_size: `+strconv.Itoa(tt.block)+`
filter: {taps: [0.5, 0.25, -0.125]}
sink: {type: file, path: `+strconv.Quote(out)+`, format: `+tt.format+`}
`)
			stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--log-level", "warn")
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			n := strconv.Itoa(tt.samples)
			blocks := strconv.Itoa((tt.samples + tt.block - 1) / tt.block)
			if !strings.HasPrefix(stdout, "samples in "+n+"  out "+n+"  blocks "+blocks+" ") {
				t.Errorf("summary %q, want %s samples in and out in %s blocks", stdout, n, blocks)
			}
			y := readF32(t, out)
			if len(y) != len(x) {
				t.Fatalf("output has %d values, want %d (input length)", len(y), len(x))
			}
			for i := range y {
				var want float32
				for k, h := range taps {
					if j := i - k*ch; j >= 0 {
						want += h * x[j]
					}
				}
				if y[i] != want {
					t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
				}
			}
		})
	}
}

// TestRunMetricsPortInUse: a metrics port that is taken fails the run
// before it starts, naming the config field, and creates no output.
func TestRunMetricsPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out := filepath.Join(t.TempDir(), "y.f32")
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}
filter: {taps: [1]}
sink: {type: file, path: `+strconv.Quote(out)+`}
metrics: {listen: "`+ln.Addr().String()+`"}
`)
	stdout, _, err := execute(t, nil, nil, "run", "-c", cfg)
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "metrics.listen: metrics: listen on "+ln.Addr().String()) {
		t.Fatalf("err = %v, want metrics.listen: address already in use", err)
	}
	if stdout != "" {
		t.Errorf("the run started: stdout %q", stdout)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sink file was created (stat: %v)", err)
	}
}
