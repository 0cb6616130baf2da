package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunChannelizeConfig runs the shipped channelize config (fewer
// samples): the +250 kHz tone comes out at DC with its amplitude, the
// -400 kHz neighbour is gone, the output has ceil(n/8) samples, and the
// SigMF metadata carries the final rate and the moved centre frequency.
func TestRunChannelizeConfig(t *testing.T) {
	base := filepath.Join(t.TempDir(), "ch")
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", filepath.Join("..", "..", "configs", "channelize.yaml"),
		"--num-samples", "100001", "--sink-path", base, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 100001  out 12501  ") || !strings.Contains(stdout, " MS/s in  filtered 100001  filter drops 0 (0 samples)") {
		t.Errorf("summary %q", stdout)
	}
	y := readF32(t, base+".sigmf-data")
	if len(y) != 2*12501 {
		t.Fatalf("%d values, want %d", len(y), 2*12501)
	}
	// After the filter's delay (174 taps ÷8 = 22 outputs) the output is
	// 0.5 at DC plus filtered noise: the neighbour is 70 dB down.
	for i := 100; i < 12501; i++ {
		if d := math.Hypot(float64(y[2*i])-0.5, float64(y[2*i+1])); d > 0.05 {
			t.Fatalf("output %d = (%v, %v), want about (0.5, 0)", i, y[2*i], y[2*i+1])
		}
	}
	b, err := os.ReadFile(base + ".sigmf-meta")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Global   map[string]any   `json:"global"`
		Captures []map[string]any `json:"captures"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Global["core:sample_rate"] != 250000.0 || meta.Captures[0]["core:frequency"] != 250000.0 || meta.Global["core:datatype"] != "cf32_le" {
		t.Errorf("metadata %s", b)
	}
}

// TestRunStagesRealToComplex: a shift on a real source writes a complex
// sink; stages on backend cuda fail clearly.
func TestRunStagesRealToComplex(t *testing.T) {
	out := filepath.Join(t.TempDir(), "y.cf32")
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 6000, num_samples: 4800}
block_size: 100
stages:
  - shift: {frequency_hz: -6000}
  - resample: {up: 1, down: 3, design: {type: lowpass, cutoff_hz: 2000, transition_hz: 2000, attenuation_db: 60}}
sink: {type: file, path: ignored, format: cf32_le}
`)
	if _, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--sink-path", out, "--log-level", "warn"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	y := readF32(t, out)
	if len(y) != 2*1600 {
		t.Fatalf("%d values, want %d", len(y), 2*1600)
	}
	// cos(ωn)·exp(−jωn) = (1 + exp(−2jωn))/2: 0.5 at DC once filtered.
	if d := math.Hypot(float64(y[3000])-0.5, float64(y[3001])); d > 0.01 {
		t.Errorf("output 1500 = (%v, %v), want about (0.5, 0)", y[3000], y[3001])
	}
	_, _, err := execute(t, nil, nil, "run", "-c", cfg, "--sink-path", out, "--overwrite", "--backend", "cuda", "--log-level", "warn")
	if err == nil || !strings.Contains(err.Error(), "stages are not yet supported on cuda") && !strings.Contains(err.Error(), "CUDA") {
		t.Errorf("backend cuda with stages: %v", err)
	}
}

// TestDesignBySpecReport: a design by specification reports the Kaiser
// length and beta scipy's kaiserord picks and the attenuation measured
// outside the transition band the user gave; a plain kaiser design is
// measured outside its own transition width, not a fixed 4·rate/taps one.
func TestDesignBySpecReport(t *testing.T) {
	_, stderr, err := execute(t, nil, nil, "design", "--rate", "2e6", "--cutoff", "1e5", "--transition", "5e4", "--attenuation", "70")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "174 taps, kaiser beta 6.75526 window") || !strings.Contains(stderr, "(50000 Hz transition bands excluded)") {
		t.Errorf("report %q", stderr)
	}
	var atten float64
	if i := strings.Index(stderr, "stopband attenuation "); i < 0 {
		t.Fatalf("report %q", stderr)
	} else if _, err := fmt.Sscanf(stderr[i:], "stopband attenuation %f dB", &atten); err != nil || atten < 69 {
		t.Errorf("attenuation %v (%v) in %q", atten, err, stderr)
	}
	_, stderr, err = execute(t, nil, nil, "design", "--rate", "48000", "--cutoff", "6000", "--taps", "129", "--window", "kaiser")
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(stderr, "stopband attenuation "); i < 0 {
		t.Fatalf("report %q", stderr)
	} else if _, err := fmt.Sscanf(stderr[i:], "stopband attenuation %f dB", &atten); err != nil || atten < 80 {
		t.Errorf("kaiser beta 8.6 reported at %v dB (want about 86): %q", atten, stderr)
	}
	_, stderr, err = execute(t, nil, nil, "design", "-c", filepath.Join("..", "..", "configs", "channelize.yaml"))
	if err != nil || !strings.Contains(stderr, "lowpass 100000 Hz, 174 taps, kaiser beta 6.75526 window, 2000000 S/s") {
		t.Errorf("design -c channelize: %v %q", err, stderr)
	}
	if _, _, err := execute(t, nil, nil, "design", "--rate", "2e6", "--cutoff", "1e5", "--attenuation", "70"); err == nil {
		t.Error("--attenuation without --transition accepted")
	}
}
