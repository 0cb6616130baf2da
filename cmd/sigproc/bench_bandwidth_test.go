package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/bench/gpubench"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"268435456", 256 << 20},
		{"256MiB", 256 << 20},
		{"256mib", 256 << 20},
		{"256M", 256 << 20},
		{"16Mi", 16 << 20},
		{"1GiB", 1 << 30},
		{"4G", 4 << 30},
		{"1.5GiB", 3 << 29},
		{"64KiB", 64 << 10},
		{"2TiB", 2 << 40},
		{"1_000", 1000},
		{"100B", 100},
		{"1GB", 1e9},
		{"2kB", 2000},
		{" 8 GiB ", 8 << 30},
	} {
		got, err := parseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "MiB", "12X", "1.5", "0.1KiB", "abcGiB", "1e30GiB", "99999999999TiB"} {
		if n, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, n)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{256 << 20, "256MiB"}, {4 << 30, "4GiB"}, {1 << 40, "1TiB"}, {1536, "1536"}, {3 << 10, "3KiB"}, {1000, "1000"}} {
		if got := formatSize(tc.n); got != tc.want {
			t.Errorf("formatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	var f sizeFlag
	if err := f.Set("1GiB"); err != nil || f.String() != "1GiB" || f.Type() != "size" {
		t.Fatalf("sizeFlag: %v %q", err, f.String())
	}
}

func TestBenchBandwidthFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--size", "512KiB"}, "below the minimum"},
		{[]string{"--size", "1048577"}, "4 KiB pages"},
		{[]string{"--size", "12X"}, "invalid size"},
		{[]string{"--reps", "0"}, "--reps must be > 0"},
		{[]string{"--warmup", "-1"}, "--warmup must be >= 0"},
		{[]string{"--device", "-1"}, "--device must be >= 0"},
		{[]string{"--only", "copy,nope"}, `--only "nope" is not a test`},
		{[]string{"--overlap-chunks", "0"}, "--overlap-chunks"},
		{[]string{"--overlap-streams", "1,0"}, "--overlap-streams 0"},
		{[]string{"extra"}, "unknown command"},
	} {
		_, _, err := execute(t, nil, nil, append([]string{"bench", "bandwidth"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchBandwidthPureBuildSaysBuiltWithoutCUDA(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, _, err := execute(t, nil, nil, "bench", "bandwidth", "--size", "1MiB", "--reps", "1")
	if err == nil || !strings.Contains(err.Error(), "built without CUDA") {
		t.Fatalf("got %v, want the built-without-CUDA error", err)
	}
}

func TestBenchBandwidthHelpTeaches(t *testing.T) {
	out, _, err := execute(t, nil, nil, "bench", "bandwidth", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pageable", "pinned", "registered", "cuMemHostRegister", "mapped", "overlap",
		"--json", "--only", "Examples:", "copy_bandwidth.py", "256MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func sampleBandwidthResult() gpubench.BandwidthResult {
	return gpubench.BandwidthResult{
		Device: "NVIDIA H200 (device 0)", Bytes: 256 << 20, Reps: 20, Warmup: 3,
		Copies: []gpubench.CopyResult{
			{Memory: gpubench.MemPageable, Direction: gpubench.DirH2D, GiBps: 16.9},
			{Memory: gpubench.MemPageable, Direction: gpubench.DirD2H, GiBps: 15},
			{Memory: gpubench.MemPinned, Direction: gpubench.DirH2D, GiBps: 51.5},
			{Memory: gpubench.MemPinned, Direction: gpubench.DirD2H, GiBps: 52},
		},
		Bidir:              &gpubench.BidirResult{H2DGiBps: 50, D2HGiBps: 49, TotalGiBps: 99},
		Mapped:             []gpubench.MappedResult{{Op: "read", GiBps: 45, Best: 46, Blocks: 1056, Threads: 256}},
		Overlap:            &gpubench.OverlapResult{Bytes: 256 << 20, Chunks: 16, H2DMs: 5, KernelMs: 5, D2HMs: 5, SerialMs: 15, BoundMs: 5, Runs: []gpubench.OverlapRun{{Streams: 1, Seconds: 0.015, Speedup: 1}, {Streams: 4, Seconds: 0.006, Speedup: 2.5}}},
		PinnedOverPageable: map[string]float64{gpubench.DirH2D: 3.05, gpubench.DirD2H: 3.47},
	}
}

func TestWriteBandwidthTable(t *testing.T) {
	var b bytes.Buffer
	if err := writeBandwidthTable(&b, sampleBandwidthResult()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"pageable", "51.5", "pinned / pageable: H2D 3.05x", "H2D 50.0 + D2H 49.0 = 99.0 GiB/s",
		"read", "45.0 GiB/s", "serial 15.00 ms", "2.50x", "83%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "registered") {
		t.Errorf("table shows a memory kind that was not measured:\n%s", out)
	}
}

func TestWriteJSONTo(t *testing.T) {
	res := sampleBandwidthResult()
	var b bytes.Buffer
	if err := writeJSONTo("-", &b, res); err != nil {
		t.Fatal(err)
	}
	var back gpubench.BandwidthResult
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if c, ok := back.Copy(gpubench.MemPinned, gpubench.DirH2D); !ok || c.GiBps != 51.5 || back.PinnedOverPageable["h2d"] != 3.05 {
		t.Fatalf("round trip: %+v", back)
	}
	p := filepath.Join(t.TempDir(), "bw.json")
	if err := writeJSONTo(p, nil, res); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(p); err != nil || !bytes.Contains(data, []byte(`"gibps": 51.5`)) {
		t.Fatalf("file: %v %s", err, data)
	}
	if err := writeJSONTo(filepath.Join(t.TempDir(), "no", "such", "dir.json"), nil, res); err == nil {
		t.Fatal("want an error for a bad path")
	}
}
