package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line in process and returns the exit status,
// stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestInputIsNeverTheOutput (issue item 1): a sink path that is the input,
// directly, through sub/.., or as a SigMF recording's own base name, is
// refused before anything is opened for writing, even with --overwrite.
func TestInputIsNeverTheOutput(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "in.f32")
	content := bytes.Repeat([]byte{0, 0, 128, 63}, 1000) // 1000 × 1.0
	os.WriteFile(raw, content, 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	rec := filepath.Join(dir, "rec")
	os.WriteFile(rec+".sigmf-data", content, 0o644)
	os.WriteFile(rec+".sigmf-meta", []byte(`{"global": {"core:datatype": "rf32_le", "core:sample_rate": 1000, "core:version": "1.0.0"}, "captures": [{"core:sample_start": 0}], "annotations": []}`), 0o644)
	rawCfg := writeConfig(t, "source: {type: file, path: "+raw+", format: rf32_le, sample_rate: 1000}\nfilter: {taps: [1]}\nsink: {type: file, path: out.f32}\n")
	recCfg := writeConfig(t, "source: {type: file, path: "+rec+".sigmf-meta}\nfilter: {taps: [1]}\nsink: {type: sigmf, path: out}\n")
	tests := []struct {
		name string
		args []string
	}{
		{"raw, same path", []string{"run", "-c", rawCfg, "--sink-path", raw}},
		{"raw, through sub/..", []string{"run", "-c", rawCfg, "--sink-path", filepath.Join(dir, "sub", "..", "in.f32"), "--overwrite"}},
		{"sigmf, its own base name", []string{"run", "-c", recCfg, "--sink-path", rec, "--overwrite"}},
		{"the config itself", []string{"run", "-c", rawCfg, "--sink-type", "file", "--sink-path", rawCfg, "--overwrite"}},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, "", tt.args...)
		if code != 1 || !strings.Contains(errs, "refusing to write over an input") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 refusing to write over an input", tt.name, code, out, errs)
		}
	}
	for _, p := range []string{raw, rec + ".sigmf-data"} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
			t.Errorf("input %s changed (%d bytes)", p, len(b))
		}
	}
}

// TestExistingOutputIsKept (issue item 2): an existing output is refused
// without --overwrite; with it, a run that fails at start (here the backend,
// and the metrics port in use) leaves the old file untouched.
func TestExistingOutputIsKept(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.f32")
	os.WriteFile(old, []byte("precious"), 0o644)
	cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}\nfilter: {taps: [1]}\nsink: {type: file, path: "+old+"}\n")
	code, _, errs := runCLI(t, "", "run", "-c", cfg)
	if code != 1 || !strings.Contains(errs, "already exists") || !strings.Contains(errs, "--overwrite") {
		t.Errorf("no --overwrite: exit %d, stderr %q", code, errs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := writeConfig(t, "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}\nfilter: {taps: [1]}\nsink: {type: file, path: "+old+", overwrite: true}\nmetrics: {listen: \""+ln.Addr().String()+"\"}\n")
	for _, args := range [][]string{
		{"run", "-c", cfg, "--overwrite", "--backend", "cuda"}, // pure build: the backend fails after the source opened
		{"run", "-c", busy},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 1 {
			t.Errorf("%v: exit %d (%s), want a failed start", args, code, errs)
		}
		if b, _ := os.ReadFile(old); string(b) != "precious" {
			t.Fatalf("%v: a failed start changed the existing output to %q", args, b)
		}
	}
	if code, _, errs := runCLI(t, "", "run", "-c", cfg, "--overwrite"); code != 0 {
		t.Fatalf("--overwrite: exit %d: %s", code, errs)
	}
	if fi, _ := os.Stat(old); fi.Size() != 400 {
		t.Errorf("--overwrite wrote %d bytes, want 400", fi.Size())
	}
}

// TestClippingReported (issue item 7): clipping to int16 is warned about
// once, as it starts, and counted in the summary.
func TestClippingReported(t *testing.T) {
	out := filepath.Join(t.TempDir(), "loud")
	cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, amplitude: 2, num_samples: 10000}\nblock_size: 100\nfilter: {taps: [1]}\nsink: {type: file, path: "+out+", format: ri16_le}\n")
	code, stdout, errs := runCLI(t, "", "run", "-c", cfg, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "output clipping"); n != 1 {
		t.Errorf("clipping warned %d times, want once:\n%s", n, errs)
	}
	if !strings.Contains(stdout, "  clipped ") || strings.Contains(stdout, "  clipped 0") {
		t.Errorf("summary %q: want a non-zero clipped count", stdout)
	}
}

// TestSmallerProblems (issue item 12): flow-style type errors name the
// right key; a long inline tap list is accepted; design --points is bounded.
func TestSmallerProblems(t *testing.T) {
	cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, amplitude: [1]}\nfilter: {taps: [1]}\nsink: {type: null}\n")
	if _, _, errs := runCLI(t, "", "run", "-c", cfg); !strings.Contains(errs, "source.amplitude: wrong type: list") {
		t.Errorf("flow-style type error: %s", errs)
	}
	taps := strings.TrimSuffix(strings.Repeat("1,", 250000), ",")
	cfg = writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000}\nfilter: {taps: ["+taps+"]}\nsink: {type: null}\n")
	if code, out, errs := runCLI(t, "", "run", "-c", cfg, "--num-samples", "256", "--log-level", "error"); code != 0 || !strings.HasPrefix(out, "samples in 256") {
		t.Errorf("250k inline taps: exit %d: %s", code, errs)
	}
	resp := filepath.Join(t.TempDir(), "r.csv")
	if code, _, errs := runCLI(t, "", "design", "--type", "lowpass", "--rate", "1e6", "--cutoff", "1e5", "--taps", "11", "--response", resp, "--points", "2000000000"); code != 1 || !strings.Contains(errs, "--points: must be in 2..") {
		t.Errorf("design --points 2e9: exit %d: %s", code, errs)
	}
}

// TestBenchInputBounded (issue items 9 and 1): bench cpu refuses a device
// input instead of reading it until memory runs out, and never writes its
// output over its input.
func TestBenchInputBounded(t *testing.T) {
	if code, _, errs := runCLI(t, "", "bench", "cpu", "--input", "/dev/zero"); code != 1 || !strings.Contains(errs, "not a regular file") {
		t.Errorf("bench cpu --input /dev/zero: exit %d: %s", code, errs)
	}
	in := filepath.Join(t.TempDir(), "x.f32")
	content := bytes.Repeat([]byte{0, 0, 128, 63}, 4096)
	os.WriteFile(in, content, 0o644)
	if code, _, errs := runCLI(t, "", "bench", "cpu", "--input", in, "--output", in, "--taps", "3"); code != 1 || !strings.Contains(errs, "refusing to write over an input") {
		t.Errorf("bench cpu --output = --input: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(in); !bytes.Equal(b, content) {
		t.Error("bench cpu overwrote its input")
	}
}

// sigmfMeta reads a .sigmf-meta file; it must be valid JSON.
func sigmfMeta(t *testing.T, path string) (caps, notes []map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	var doc struct {
		Captures    []map[string]any `json:"captures"`
		Annotations []map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("metadata is not valid JSON: %v", err)
	}
	return doc.Captures, doc.Annotations
}

// TestReportOutputsKeepExistingFiles: every output of bench and probe
// refuses a file that exists, before any work, and keeps its bytes;
// --overwrite replaces it.
func TestReportOutputsKeepExistingFiles(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	probeArgs := []string{"probe", "--paths", "cpu", "--blocks", "10", "--period", "5ms"} // slow enough for a loaded CI machine
	for _, tc := range []struct {
		args    []string
		replace bool // run again with --overwrite (commands the pure build can finish)
	}{
		{[]string{"bench", "cpu", "--samples", "4096", "--reps", "1", "--output", old}, true},
		{[]string{"bench", "chain", "--samples", "4096", "--reps", "1", "--output", old}, true},
		{[]string{"bench", "cpu", "--samples", "4096", "--reps", "1", "--json", old}, true},
		{[]string{"bench", "chain", "--samples", "4096", "--reps", "1", "--json=" + old}, true},
		{[]string{"bench", "channelize", "--samples", "4096", "--reps", "1", "--channels", "16", "--json", old}, true},
		{[]string{"bench", "fir", "--taps", "16", "--output", old}, false},
		{[]string{"bench", "fir", "--taps", "16", "--json", old}, false},
		{[]string{"bench", "fir", "--png", old}, false},
		{[]string{"bench", "stream", "--output", old}, false},
		{[]string{"bench", "stream", "--json", old}, false},
		{[]string{"bench", "bandwidth", "--json", old}, false},
		{append(probeArgs, "--json", old), true},
		{append(probeArgs, "--png", old), true},
	} {
		if err := os.WriteFile(old, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, "", tc.args...)
		if code != 1 || !strings.Contains(errs, "the file exists") || !strings.Contains(errs, "--overwrite") {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
		if b, _ := os.ReadFile(old); string(b) != "precious" {
			t.Errorf("%v: the existing file now holds %q", tc.args, b)
		}
		if !tc.replace {
			continue
		}
		if code, _, errs := runCLI(t, "", append(tc.args, "--overwrite")...); code != 0 {
			t.Errorf("%v --overwrite: exit %d: %s", tc.args, code, errs)
		} else if b, _ := os.ReadFile(old); string(b) == "precious" {
			t.Errorf("%v --overwrite: the file was not replaced", tc.args)
		}
	}
}
