package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	exptrace "golang.org/x/exp/trace"
)

// TestRunProfiles runs with --cpu-profile and --trace and reads the
// files' headers: a pprof profile is gzip, a trace names its Go version.
// An existing file is refused without --overwrite and kept as it was, and
// neither may name one of the run's inputs.
func TestRunProfiles(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 1, num_samples: 2000000}
filter: {design: {type: lowpass, cutoff_hz: 1e5, num_taps: 129}}
sink: {type: null}
`)
	prof, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "run.trace")
	if _, stderr, err := execute(t, nil, nil, "run", cfg, "--cpu-profile", prof, "--trace", tr, "--log-level", "warn"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	for path, head := range map[string]string{prof: "\x1f\x8b", tr: "go 1."} {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(head)) {
			t.Errorf("%s: %v, %d bytes starting %q, want %q", path, err, len(b), b[:min(len(b), 8)], head)
		}
	}
	if err := os.WriteFile(prof, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // "" for a run that succeeds
	}{
		{"profile exists", []string{"--cpu-profile", prof}, "the file exists"},
		{"trace exists", []string{"--trace", prof}, "the file exists"},
		{"profile is the config", []string{"--cpu-profile", cfg, "--overwrite"}, "--cpu-profile: "},
		{"both one file", []string{"--cpu-profile", tr, "--trace", tr, "--overwrite"}, "are the same file"},
		{"replaced with --overwrite", []string{"--cpu-profile", prof, "--overwrite"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(prof)
			_, _, err := execute(t, nil, nil, append([]string{"run", cfg, "--log-level", "warn"}, tt.args...)...)
			after, _ := os.ReadFile(prof)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("run: %v", err)
			case tt.want == "" && !bytes.HasPrefix(after, []byte("\x1f\x8b")):
				t.Fatalf("profile not written over: %q", after[:min(len(after), 8)])
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			case tt.want != "" && !bytes.Equal(before, after):
				t.Fatal("a refused run changed the existing file")
			}
		})
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "synthetic") {
		t.Fatalf("config overwritten: %q", b)
	}
}

// TestProbeProfiles: the probe writes the same profiles as run, refuses
// one that exists without --overwrite, and an output named twice.
func TestProbeProfiles(t *testing.T) {
	dir := t.TempDir()
	prof, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "probe.trace")
	probe := []string{"probe", "--paths", "cpu", "--blocks", "300", "--warmup", "20", "--period", "200us", "--log-level", "warn"}
	if _, stderr, err := execute(t, nil, nil, append(probe, "--cpu-profile", prof, "--trace", tr)...); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	for path, head := range map[string]string{prof: "\x1f\x8b", tr: "go 1."} {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(head)) {
			t.Errorf("%s: %v, %d bytes starting %q, want %q", path, err, len(b), b[:min(len(b), 8)], head)
		}
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"trace exists", []string{"--trace", tr}, "--trace " + tr + ": the file exists"},
		{"trace is the json", []string{"--trace", tr, "--json", tr, "--overwrite"}, "are the same file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(tr)
			_, _, err := execute(t, nil, nil, append(probe, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if after, _ := os.ReadFile(tr); !bytes.Equal(before, after) {
				t.Fatal("a refused probe changed the existing file")
			}
		})
	}
}

// TestProbeTraceStall: --trace-stall writes the flight recorder's window
// at the first stall (every block is one over 1 ns), says so, and leaves
// the file empty when no block stalls; an existing file is refused.
func TestProbeTraceStall(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "stall.trace")
	// 4096 slots: a busy host's stall would drop a block (which counts as
	// a stall whatever --stall-over says) only after 0.8 s.
	probe := []string{"probe", "--paths", "cpu", "--blocks", "300", "--warmup", "20", "--period", "200us", "--ring-slots", "4096",
		"--log-level", "warn", "--trace-stall", tr}
	stdout, stderr, err := execute(t, nil, nil, append(probe, "--stall-over", "1ns")...)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "trace-stall: "+tr+" holds") {
		t.Errorf("stdout does not say what the trace holds:\n%s", stdout)
	}
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := exptrace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s does not read as a trace: %v", tr, err)
	}
	if _, err := r.ReadEvent(); err != nil {
		t.Fatalf("%s: first event: %v", tr, err)
	}
	if _, _, err := execute(t, nil, nil, probe...); err == nil || !strings.Contains(err.Error(), "--trace-stall "+tr+": the file exists") {
		t.Errorf("an existing file: err = %v", err)
	}
	stdout, stderr, err = execute(t, nil, nil, append(probe, "--stall-over", "1h", "--overwrite")...)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(tr); len(b) != 0 || !strings.Contains(stdout, "no stall") {
		t.Errorf("no stall: %d bytes written, stdout:\n%s", len(b), stdout)
	}
	if _, _, err := execute(t, nil, nil, append(probe, "--stall-over", "0", "--overwrite")...); err == nil || !strings.Contains(err.Error(), "--stall-over") {
		t.Errorf("--stall-over 0: err = %v", err)
	}
}
