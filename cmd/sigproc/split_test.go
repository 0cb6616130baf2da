package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSplitChannels: a channelizer's kept channels, written with
// sink.split, land one SigMF recording each (named by the channelizer's
// k), byte-equal to that channel of the unsplit recording, each with its
// channel's centre as core:frequency: the source's centre plus k·fs/M
// (negative for k ≥ M/2) less the shift before the bank.
func TestRunSplitChannels(t *testing.T) {
	dir := t.TempDir()
	yaml := func(path string, split bool) string {
		return fmt.Sprintf(`
source: {type: synthetic, sample_rate: 1.024e6, complex: true, num_samples: 65536, signal: noise, noise_std: 0.5, seed: 3}
stages:
  - shift: {frequency_hz: 1000}
  - channelize: {channels: 64, decimate: 32}
  - select: {channels: [63, 3, 10]}
sink: {type: sigmf, path: %s, split: %v}
`, path, split)
	}
	for _, split := range []bool{false, true} {
		name := map[bool]string{false: "all", true: "each"}[split]
		if _, stderr, err := execute(t, nil, nil, "run", "-c", writeConfig(t, yaml(filepath.Join(dir, name), split)), "--log-level", "warn"); err != nil {
			t.Fatalf("split=%v: %v\n%s", split, err, stderr)
		}
	}
	all, err := os.ReadFile(filepath.Join(dir, "all.sigmf-data"))
	if err != nil {
		t.Fatal(err)
	}
	const frameBytes = 3 * 8 // 3 complex float32 channels
	for j, k := range []int{63, 3, 10} {
		base := filepath.Join(dir, fmt.Sprintf("each.ch%02d", k))
		data, err := os.ReadFile(base + ".sigmf-data")
		if err != nil {
			t.Fatal(err)
		}
		if len(data)*3 != len(all) {
			t.Fatalf("channel %d: %d bytes, want a third of %d", k, len(data), len(all))
		}
		for f := 0; f < len(data)/8; f++ {
			if string(data[8*f:8*f+8]) != string(all[f*frameBytes+8*j:f*frameBytes+8*j+8]) {
				t.Fatalf("channel %d frame %d differs from the unsplit recording's", k, f)
			}
		}
		raw, err := os.ReadFile(base + ".sigmf-meta")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Global   map[string]any   `json:"global"`
			Captures []map[string]any `json:"captures"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		b := k
		if k >= 32 {
			b -= 64
		}
		want := float64(b)*16000 - 1000
		if m.Captures[0]["core:frequency"] != want || m.Global["core:sample_rate"] != 32000.0 || m.Global["core:num_channels"] != nil {
			t.Errorf("channel %d: global %v captures %v; want one channel at 32 kS/s centred %g Hz", k, m.Global, m.Captures, want)
		}
	}
	if _, _, err := execute(t, nil, nil, "run", "-c", writeConfig(t, strings.Replace(yaml("-", true), "sigmf", "file", 1))); err == nil ||
		!strings.Contains(err.Error(), "sink.split: writes a file per channel") {
		t.Errorf("split to standard output: %v", err)
	}
}

// TestRunReadsChannelizedBack: a channelizer's 1024-channel recording is
// a source like any other: a select first in a later run keeps the
// channels asked for, byte for byte.
func TestRunReadsChannelizedBack(t *testing.T) {
	dir := t.TempDir()
	bank := filepath.Join(dir, "bank")
	first := fmt.Sprintf(`
source: {type: synthetic, sample_rate: 1.024e6, complex: true, num_samples: 262144, signal: noise, noise_std: 0.5, seed: 4}
stages:
  - channelize: {channels: 1024, taps_per_channel: 4}
sink: {type: sigmf, path: %s}
`, bank)
	second := fmt.Sprintf(`
source: {type: file, path: %s.sigmf-data}
stages:
  - select: {channels: [1000, 3]}
sink: {type: file, path: %s, format: cf32_le}
`, bank, filepath.Join(dir, "kept.cf32"))
	for _, y := range []string{first, second} {
		if _, stderr, err := execute(t, nil, nil, "run", "-c", writeConfig(t, y), "--log-level", "warn"); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	}
	all, err := os.ReadFile(bank + ".sigmf-data")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "kept.cf32"))
	if err != nil {
		t.Fatal(err)
	}
	const frame = 1024 * 8
	if len(all) != 256*frame || len(kept) != 256*16 {
		t.Fatalf("%d and %d bytes, want 256 frames of 1024 and of 2 channels", len(all), len(kept))
	}
	for f := range 256 {
		for j, k := range []int{1000, 3} {
			if string(kept[f*16+8*j:f*16+8*j+8]) != string(all[f*frame+8*k:f*frame+8*k+8]) {
				t.Fatalf("frame %d: kept channel %d is not channel %d of the recording", f, j, k)
			}
		}
	}
}
