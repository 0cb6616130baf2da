package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
)

func TestBenchFIRFlagErrors(t *testing.T) {
	dir := t.TempDir()
	tapsFile := filepath.Join(dir, "taps.txt")
	if err := os.WriteFile(tapsFile, []byte("0.25\n0.5\n0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--samples", "0"}, "--samples must be > 0"},
		{[]string{"--samples", "-5"}, "--samples must be > 0"},
		{[]string{"--samples", "1000000000"}, "exceeds the limit"},
		{[]string{"--reps", "0"}, "--reps must be > 0"},
		{[]string{"--warmup", "-1"}, "--warmup must be >= 0"},
		{[]string{"--device", "-1"}, "--device must be >= 0"},
		{[]string{"--threads", "100"}, "--threads must be"},
		{[]string{"--threads", "512"}, "--threads must be"},
		{[]string{"--hbm-peak", "-3"}, "--hbm-peak"},
		{[]string{"--taps", "0"}, "--taps 0 out of range"},
		{[]string{"--taps", "16,9000", "--method", "direct"}, "--taps 9000 out of range"},
		{[]string{"--taps", "2000000"}, "--taps 2000000 out of range"},
		{[]string{"--method", "fast"}, "unknown method"},
		{[]string{"--fft-size", "-1"}, "--fft-size -1"},
		{[]string{"--taps", "16,32", "--output", filepath.Join(dir, "y.f32")}, "--output needs exactly one tap count"},
		{[]string{"--taps", "16", "--taps-file", tapsFile}, "not both"},
		{[]string{"--taps", "x"}, "invalid argument"},
		{[]string{"extra"}, "unknown command"},
	} {
		_, _, err := execute(t, nil, nil, append([]string{"bench", "fir"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchFIRPureBuildSaysBuiltWithoutCUDA(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, _, err := execute(t, nil, nil, "bench", "fir", "--taps", "129", "--samples", "4096")
	if err == nil || !strings.Contains(err.Error(), "built without CUDA") || !strings.Contains(err.Error(), "make cuda") {
		t.Fatalf("got %v, want the built-without-CUDA error", err)
	}
}

func TestBenchFIRHelpTeaches(t *testing.T) {
	out, _, err := execute(t, nil, nil, "bench", "fir", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GS/s", "HBM", "--taps-file", "--verify", "--png", "Examples:", "cupy_compare.py"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestFIRRowRates(t *testing.T) {
	run := gpubench.BenchFIRRun{Taps: 129, Seconds: []float64{0.003, 0.001, 0.002, 0.004}}
	const n = 1 << 20
	row := firRow(run, n, 1, 1, 1000)
	if row.Ms != 2.5 || row.MsBest != 1 {
		t.Fatalf("median %v ms, best %v ms", row.Ms, row.MsBest)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if want := n / 0.0025 / 1e9; !near(row.GSps, want) {
		t.Errorf("GS/s %v, want %v", row.GSps, want)
	}
	if want := 4 * float64(128+2*n) / 0.0025 / 1e9; !near(row.GBps, want) || !near(row.HBMFraction, want/1000) {
		t.Errorf("GB/s %v (fraction %v), want %v", row.GBps, row.HBMFraction, want)
	}
	if want := 2 * 129 * float64(n) / 0.0025 / 1e9; !near(row.GFLOPs, want) {
		t.Errorf("GFLOP/s %v, want %v", row.GFLOPs, want)
	}
	// Complex: a sample is two values.
	c := firRow(run, 2*n, 2, 2, 0)
	if !near(c.GSps, row.GSps) || c.HBMFraction != 0 {
		t.Errorf("complex GS/s %v, fraction %v", c.GSps, c.HBMFraction)
	}
	// 8 real channels: every channel's sample counts; the history is 8 lanes'.
	m := firRow(run, 8*n, 8, 1, 0)
	if want := 8 * n / 0.0025 / 1e9; !near(m.GSps, want) {
		t.Errorf("8 channels: GS/s %v, want %v", m.GSps, want)
	}
	if want := 4 * float64(8*128+2*8*n) / 0.0025 / 1e9; !near(m.GBps, want) {
		t.Errorf("8 channels: GB/s %v, want %v", m.GBps, want)
	}
}

func TestFIRTableAndPlot(t *testing.T) {
	ok, bad := true, false
	rep := benchFIRReport{
		Device: "Test GPU", Samples: 1 << 20, Reps: 3, Warmup: 1, Input: "noise", HBMPeakGBps: 4800,
		HBMPeakSource: "device attributes", Verified: true, Tolerance: gpubench.Tolerance,
		Results: []benchFIRRow{
			{Taps: 129, Ms: 0.5, GSps: 200, GSpsBest: 210, GBps: 1600, HBMFraction: 0.33, GFLOPs: 50000, MaxRelErr: 2e-7, Match: &ok},
			{Taps: 16, Ms: 0.2, GSps: 400, GSpsBest: 410, GBps: 3200, HBMFraction: 0.66, GFLOPs: 12000, MaxRelErr: 3e-3, Match: &bad},
		},
	}
	var b bytes.Buffer
	if err := writeFIRTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Test GPU", "GS/s", "HBM", "200.0", "33.0%", "FAIL", "verified"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	png := filepath.Join(t.TempDir(), "fir.png")
	if err := plotFIR(png, rep); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("%s is not a PNG", png)
	}
}
