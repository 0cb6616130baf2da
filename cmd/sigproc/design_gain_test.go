package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/config"
)

// TestDesignPrintsAppliedTaps (issue 27 item 9): design -c prints the taps
// the run applies: a resampler's designed taps with its gain of up (and
// says so), a fir's as designed.
func TestDesignPrintsAppliedTaps(t *testing.T) {
	const src = "source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 1000}\nsink: {type: null}\n"
	const d = "design: {type: lowpass, cutoff_hz: 3000, num_taps: 31}"
	tests := []struct {
		name, stages string
		stage        int
		gain         string // "" = no gain line
	}{
		{"filter.design", "filter: {" + d + "}\n", 0, ""},
		{"fir stage", "stages:\n  - fir: {" + d + ", decimate: 2}\n", 0, ""},
		{"resample stage, up 3", "stages:\n  - resample: {up: 3, down: 2, " + d + "}\n", 0, "×3"},
		{"resample after a fir, up 4", "stages:\n  - fir: {taps: [1], decimate: 2}\n  - resample: {up: 4, down: 3, " + d + "}\n", 1, "×4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, src+tt.stages)
			code, out, errs := runCLI(t, "", "design", "-c", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := cfg.Chain(48000, false)
			if err != nil {
				t.Fatal(err)
			}
			want := ch.Stages[tt.stage].Taps
			lines := strings.Fields(out)
			if len(lines) != len(want) {
				t.Fatalf("%d taps printed, the run applies %d", len(lines), len(want))
			}
			for i, l := range lines {
				v, err := strconv.ParseFloat(l, 32)
				if err != nil || float32(v) != want[i] {
					t.Fatalf("tap %d printed %s, the run applies %v", i, l, want[i])
				}
			}
			if hasGain := strings.Contains(errs, "gain of "+tt.gain); tt.gain != "" && !hasGain || tt.gain == "" && strings.Contains(errs, "gain of") {
				t.Errorf("stderr %q: want the gain %q said", errs, tt.gain)
			}
		})
	}
}
