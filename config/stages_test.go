package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// stagesBase is a valid config with a stages list: a 2 MS/s complex
// source, shift, decimating lowpass by specification, 3/2 resampler.
const stagesBase = `source:
  type: synthetic
  sample_rate: 2e6
  complex: true
  signal: tone
  frequency_hz: 250000
stages:
  - shift: {frequency_hz: -250000}
  - fir:
      design: {type: lowpass, cutoff_hz: 100000, num_taps: 129}
      decimate: 8
  - resample: {up: 3, down: 2, taps: [0.5, 1, 0.5]}
sink:
  type: null
`

func TestParseStagesGood(t *testing.T) {
	c, err := Parse([]byte(stagesBase), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chain(2e6, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []stage.Kind{stage.KindShift, stage.KindFIR, stage.KindResample}
	if len(ch.Stages) != 3 {
		t.Fatalf("stages %+v", ch.Stages)
	}
	for i, k := range want {
		if ch.Stages[i].Kind != k {
			t.Errorf("stage %d kind %s, want %s", i, ch.Stages[i].Kind, k)
		}
	}
	if s := ch.Stages[1]; len(s.Taps) != 129 || s.Decimate != 8 || s.Method != "auto" {
		t.Errorf("fir stage %+v", s)
	}
	if s := ch.Stages[2]; s.Up != 3 || s.Down != 2 || len(s.Taps) != 3 || s.Taps[1] != 1 {
		t.Errorf("resample stage (given taps, no gain) %+v", s)
	}
	if r := ch.OutRate(); r != 2e6/8*3/2 {
		t.Errorf("out rate %g", r)
	}
	if ch.Shift() != -250000 || !c.OutComplex(false) {
		t.Errorf("shift %g", ch.Shift())
	}
	if _, err := c.Taps(2e6); err == nil {
		t.Error("Taps on a stages config: no error")
	}

	// Defaults, design by specification, designed resampler gain, real
	// source with a shift and a complex sink format.
	y := `source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 1000}
stages:
  - fir: {taps: [1, 2]}
  - shift: {frequency_hz: 1000}
  - resample:
      up: 2
      down: 1
      design: {type: lowpass, cutoff_hz: 10000, transition_hz: 4000, attenuation_db: 60}
sink: {type: file, path: o.cf32, format: cf32_le}
`
	c, err = Parse([]byte(y), "y.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch, err = c.Chain(48000, false)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Stages[0].Decimate != 1 || ch.Stages[0].Method != "auto" {
		t.Errorf("fir defaults %+v", ch.Stages[0])
	}
	var dc float64
	for _, v := range ch.Stages[2].Taps {
		dc += float64(v)
	}
	if dc < 1.99 || dc > 2.01 {
		t.Errorf("designed resampler DC gain %g, want up = 2", dc)
	}
	if !ch.OutComplex() {
		t.Error("a shifted real stream is not complex")
	}
}

// TestParseStagesErrors: every bad stage value fails with its file:line.
func TestParseStagesErrors(t *testing.T) {
	with := func(old, new string) string {
		if !strings.Contains(stagesBase, old) {
			t.Fatalf("base lacks %q", old)
		}
		return strings.Replace(stagesBase, old, new, 1)
	}
	tests := []struct {
		name string
		yaml string
		line int
		frag string
	}{
		{"decimate zero", with("decimate: 8", "decimate: 0"), 11, "stages[1].fir.decimate: must be in 1..65536, got 0"},
		{"decimate negative", with("decimate: 8", "decimate: -2"), 11, "stages[1].fir.decimate: must be in 1..65536, got -2"},
		{"decimate fraction", with("decimate: 8", "decimate: 2.5"), 11, "stages[1].fir.decimate: must be an integer, got 2.5"},
		{"up zero", with("up: 3", "up: 0"), 12, "stages[2].resample.up: must be in 1..65536, got 0"},
		{"down negative", with("down: 2", "down: -1"), 12, "stages[2].resample.down: must be in 1..65536, got -1"},
		{"down missing", with("down: 2, ", ""), 12, "stages[2].resample.down: must be in 1..65536, got 0"},
		{"shift above nyquist", with("frequency_hz: -250000}", "frequency_hz: -1000001}"), 8, "stages[0].shift.frequency_hz: |-1000001| is above Nyquist (2000000 S/s / 2 = 1000000 Hz at this stage)"},
		{"shift above nyquist after decimation", with("  - resample: {up: 3, down: 2, taps: [0.5, 1, 0.5]}\n", "  - shift: {frequency_hz: 200000}\n"), 12, "stages[2].shift.frequency_hz: |200000| is above Nyquist (250000 S/s / 2 = 125000 Hz"},
		{"shift missing frequency", with("{frequency_hz: -250000}", "{}"), 8, "stages[0].shift.frequency_hz: required"},
		{"shift null", with("shift: {frequency_hz: -250000}", "shift:"), 8, "stages[0].shift: must be a mapping"},
		{"empty stage", with("  - shift: {frequency_hz: -250000}\n", "  - {}\n"), 8, "stages[0]: empty stage: give one of shift, fir"},
		{"null stage", with("  - shift: {frequency_hz: -250000}\n", "  - ~\n"), 8, "stages[0]: empty stage"},
		{"two kinds", with("  - shift: {frequency_hz: -250000}\n", "  - shift: {frequency_hz: 1}\n    fir: {taps: [1]}\n"), 9, "stages[0].fir: a stage has exactly one kind (found shift and fir)"},
		{"unknown kind", with("  - shift: {frequency_hz: -250000}\n", "  - mix: {frequency_hz: 1}\n"), 8, "unknown key"},
		{"filter and stages", stagesBase + "filter: {taps: [1]}\n", 7, "stages: give filter or stages, not both"},
		{"empty stages", with("stages:\n  - shift: {frequency_hz: -250000}\n  - fir:\n      design: {type: lowpass, cutoff_hz: 100000, num_taps: 129}\n      decimate: 8\n  - resample: {up: 3, down: 2, taps: [0.5, 1, 0.5]}\n", "stages: []\n"), 7, "stages: must not be empty"},
		{"fir no taps", with("      design: {type: lowpass, cutoff_hz: 100000, num_taps: 129}\n", ""), 9, "stages[1].fir: required: one of taps, taps_file or design"},
		{"fir cutoff above stage nyquist", with("  - resample: {up: 3, down: 2, taps: [0.5, 1, 0.5]}\n", "  - fir: {design: {type: lowpass, cutoff_hz: 200000, num_taps: 11}}\n"), 12, "stages[2].fir.design.cutoff_hz: 200000 must be below Nyquist (sample_rate/2 = 125000)"},
		{"method on resample", with("taps: [0.5, 1, 0.5]}", "taps: [0.5, 1, 0.5], method: direct}"), 12, "stages[2].resample.method: not used by resample"},
		{"bad tap", with("[0.5, 1, 0.5]", "[0.5, 1e300]"), 12, "stages[2].resample.taps[1]: must be a finite float32"},
		{"spec without attenuation", with("num_taps: 129}", "transition_hz: 20000}"), 10, "stages[1].fir.design.attenuation_db: must be in 8..6000 dB"},
		{"spec with num_taps", with("num_taps: 129}", "num_taps: 129, transition_hz: 20000, attenuation_db: 60}"), 10, "stages[1].fir.design.num_taps: not used by a design by transition_hz and attenuation_db"},
		{"spec with window", with("num_taps: 129}", "window: hann, transition_hz: 20000, attenuation_db: 60}"), 10, "stages[1].fir.design.window: not used by a design by transition_hz"},
		{"spec attenuation too small", with("num_taps: 129}", "transition_hz: 20000, attenuation_db: 5}"), 10, "attenuation_db: must be in 8..6000 dB"},
		{"spec attenuation too large", with("num_taps: 129}", "transition_hz: 20000, attenuation_db: 1e4}"), 10, "attenuation_db: must be in 8..6000 dB"},
		{"kaiser beta too large", with("num_taps: 129}", "num_taps: 129, window: kaiser, kaiser_beta: 720}"), 10, "kaiser_beta: must be in 0..700, got 720"},
		{"spec transition too wide", with("num_taps: 129}", "transition_hz: 300000, attenuation_db: 60}"), 10, "stages[1].fir.design: the 300000 Hz transition band around 100000-100000 Hz must lie inside"},
		{"real sink for shifted real source", strings.Replace(strings.Replace(stagesBase, "  complex: true\n", "", 1), "  frequency_hz: 250000\n", "  frequency_hz: 25000\n", 1) + "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "x.yaml")
			if tt.frag == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tt.frag)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			prefix := fmt.Sprintf("x.yaml:%d: ", tt.line)
			if !strings.Contains(err.Error(), prefix) || !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q\nwant prefix %q and fragment %q", err, prefix, tt.frag)
			}
		})
	}
}

// TestStagesSinkFormat: a shift makes a real source complex, so the sink
// must take a complex format.
func TestStagesSinkFormat(t *testing.T) {
	y := `source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 1000}
stages:
  - shift: {frequency_hz: -1000}
sink: {type: file, path: o.f32, format: rf32_le}
`
	_, err := Parse([]byte(y), "s.yaml")
	if err == nil || !strings.Contains(err.Error(), "s.yaml:4: sink.format: rf32_le does not match the complex output (a shift stage makes the real source complex) (use cf32_le)") {
		t.Errorf("err = %v", err)
	}
	c, err := Parse([]byte(strings.Replace(y, "rf32_le", "cf32_le", 1)), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f, err := c.SinkFormat(c.OutComplex(false)); err != nil || f != FormatCF32 {
		t.Errorf("SinkFormat = %q, %v", f, err)
	}
}

// TestStagesTapsFileAndChainErrors: a taps_file stage is read relative to
// the config, and a chain error found only once the rate is known (a wav
// or sigmf source) is positioned at its stage.
func TestStagesTapsFileAndChainErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "h.txt"), []byte("0.25 0.5 0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := `source: {type: file, path: in.wav}
stages:
  - shift: {frequency_hz: 20000}
  - fir: {taps_file: h.txt, decimate: 2}
sink: {type: null}
`
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chain(48000, false)
	if err != nil || len(ch.Stages[1].Taps) != 3 {
		t.Fatalf("Chain(48000) = %+v, %v", ch, err)
	}
	_, err = c.Chain(8000, false) // 20 kHz is above 4 kHz Nyquist
	if err == nil || !strings.Contains(err.Error(), "c.yaml:3: stages[0].shift.frequency_hz: |20000| is above Nyquist") {
		t.Errorf("Chain(8000): %v", err)
	}
}

// TestFilterShorthandChain: filter: is one plain fir stage.
func TestFilterShorthandChain(t *testing.T) {
	c, err := Parse([]byte(base), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chain(1e6, false)
	if err != nil {
		t.Fatal(err)
	}
	if taps, ok := ch.PlainFIR(); !ok || len(taps) != 2 {
		t.Errorf("chain %+v is not the plain FIR", ch)
	}
}
