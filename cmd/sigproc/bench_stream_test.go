package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
)

func TestBenchStreamFlagErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(in, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	tapsFile := filepath.Join(dir, "taps.txt")
	if err := os.WriteFile(tapsFile, []byte("0.5\n0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", "tape"}, `--source "tape"`},
		{[]string{"--source", "file"}, "needs --input"},
		{[]string{"--source", "memory", "--input", in}, "--input is for --source file"},
		{[]string{"--size", "2B"}, "less than one sample"},
		{[]string{"--size", "0"}, "invalid size"},
		{[]string{"--block", "2GiB"}, "--block"},
		{[]string{"--slots", "3"}, "power of two"},
		{[]string{"--taps", "0"}, "--taps 0 out of range"},
		{[]string{"--taps", "9000", "--method", "direct"}, "--taps 9000 out of range"},
		{[]string{"--taps", "2000000"}, "--taps 2000000 out of range"},
		{[]string{"--method", "fast"}, "unknown method"},
		{[]string{"--taps", "16", "--taps-file", tapsFile}, "not both"},
		{[]string{"--verify", "maybe"}, `--verify "maybe"`},
		{[]string{"--verify", "all", "--source", "synthetic"}, "--verify all needs --source memory"},
		{[]string{"--ref-reps", "-1"}, "--ref-reps"},
		{[]string{"--ref-size", "1000"}, "--ref-size"},
		{[]string{"--device", "-1"}, "--device must be"},
		{[]string{"extra"}, "unknown command"},
	} {
		_, _, err := execute(t, nil, nil, append([]string{"bench", "stream"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchStreamInputImpliesFile(t *testing.T) {
	o := benchStreamOptions{source: gpubench.StreamMemory, input: "x.f32", block: 1024, slots: 16, taps: 129, verify: gpubench.VerifySample}
	if cfg, err := o.config(); err != nil || cfg.Source != gpubench.StreamFile {
		t.Fatalf("source %q, err %v; want file", cfg.Source, err)
	}
}

func TestBenchStreamPureBuildSaysBuiltWithoutCUDA(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, _, err := execute(t, nil, nil, "bench", "stream", "--size", "1MiB")
	if err == nil || !strings.Contains(err.Error(), "built without CUDA") {
		t.Fatalf("got %v, want the built-without-CUDA error", err)
	}
}

func TestBenchStreamHelpTeaches(t *testing.T) {
	out, _, err := execute(t, nil, nil, "bench", "stream", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sigproc run", "pinned", "--source", "memory", "synthetic", "--input",
		"--verify", "80 %", "Ctrl-C", "Examples:", "startup"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func sampleStreamReport() gpubench.StreamResult {
	ok := true
	return gpubench.StreamResult{
		Device: "NVIDIA H200 (device 0)", Transport: "cuda/explicit", Taps: 129, Block: 1 << 20, Slots: 16,
		SamplesIn: 1 << 28, SamplesOut: 1 << 28, StartupSeconds: 0.2, WallSeconds: 0.05,
		InGiBps: 46.2, InOutGiBps: 92.4, GSps: 5.4,
		PinnedH2D: &gpubench.CopyResult{Bytes: 256 << 20, Reps: 10, GiBps: 51.5}, PinnedFraction: 0.897,
		Source: "memory: 2048 MiB", Sink: "null", Verify: gpubench.VerifySample, VerifyErr: 2e-7, Verified: &ok, Target: gpubench.StreamTarget,
	}
}

func TestWriteStreamText(t *testing.T) {
	var b bytes.Buffer
	if err := writeStreamText(&b, sampleStreamReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"0 dropped: ok", "46.20 GiB/s in", "after 200 ms of startup", "stream = 89.7% of it", "target 80%: pass",
		"verify (sample)", "pass", "cuda/explicit"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestReportStreamJSON(t *testing.T) {
	dir := t.TempDir()
	o := benchStreamOptions{json: filepath.Join(dir, "s.json")}
	var b bytes.Buffer
	if err := reportStream(o, sampleStreamReport(), &b); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(o.json)
	if err != nil || !bytes.Contains(js, []byte(`"pinned_fraction": 0.897`)) {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if !strings.Contains(b.String(), "stream = ") {
		t.Fatalf("text not printed with --json FILE:\n%s", b.String())
	}
	// --json - prints JSON instead of the text.
	b.Reset()
	if err := reportStream(benchStreamOptions{json: "-"}, sampleStreamReport(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "{") {
		t.Fatalf("--json - printed:\n%s", b.String())
	}
}
