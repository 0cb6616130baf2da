package config

import (
	"strings"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

func TestParseStage(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // error substring; "" = valid
		check      func(stage.Stage) bool
	}{
		{"fir taps", `{"fir": {"taps": [0.25, 0.5, 0.25]}}`, "", func(s stage.Stage) bool {
			return s.Kind == stage.KindFIR && len(s.Taps) == 3 && s.Decimate == 0 && s.Method == ""
		}},
		{"fir design", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 5000, "num_taps": 65}, "decimate": 4}}`, "", func(s stage.Stage) bool {
			return len(s.Taps) == 65 && s.Decimate == 4
		}},
		{"shift", `{"shift": {"frequency_hz": -1234.5}}`, "", func(s stage.Stage) bool { return s.Kind == stage.KindShift && s.FrequencyHz == -1234.5 }},
		{"yaml", "fir: {taps: [1, 2]}\n", "", func(s stage.Stage) bool { return len(s.Taps) == 2 }},
		{"resample", `{"resample": {"up": 3, "down": 2, "taps": [1]}}`, "", func(s stage.Stage) bool { return s.Up == 3 }},
		{"empty", ``, "empty", nil},
		{"two kinds", `{"fir": {"taps": [1]}, "shift": {"frequency_hz": 1}}`, "exactly one", nil},
		{"none", `{}`, "exactly one", nil},
		{"unknown key", `{"fir": {"tapz": [1]}}`, "tapz", nil},
		{"taps_file", `{"fir": {"taps_file": "/etc/passwd"}}`, "fir.taps_file: not accepted", nil},
		{"no taps", `{"fir": {"taps": []}}`, "fir.taps: must not be empty", nil},
		{"string tap", `{"fir": {"taps": ["x"]}}`, "body", nil},
		{"nan", `{"fir": {"taps": [.nan]}}`, "finite", nil},
		{"above nyquist", `{"shift": {"frequency_hz": 30000}}`, "above Nyquist", nil},
		{"bad design", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 40000, "num_taps": 65}}}`, "fir.design", nil},
		{"fraction decimate", `{"fir": {"taps": [1], "decimate": 2.5}}`, "body", nil},
		{"not a mapping", `[1, 2]`, "body", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseStage([]byte(tt.body), "body", 48000)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !tt.check(s) {
					t.Errorf("parsed %+v", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "body") {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzParseStage(f *testing.F) {
	f.Add([]byte(`{"fir": {"taps": [0.25, 0.5, 0.25], "decimate": 2}}`))
	f.Add([]byte(`{"shift": {"frequency_hz": 1000}}`))
	f.Add([]byte(`{"fir": {"design": {"type": "bandpass", "low_hz": 100, "high_hz": 2000, "num_taps": 33, "window": "kaiser"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := ParseStage(body, "body", 48000)
		if err == nil {
			if err := (stage.Chain{SampleRate: 48000, Stages: []stage.Stage{fillDecimate(s)}}).Validate(); err != nil {
				t.Fatalf("accepted %q but the stage is invalid: %v", body, err)
			}
		}
	})
}

func fillDecimate(s stage.Stage) stage.Stage {
	if s.Kind == stage.KindFIR && s.Decimate == 0 {
		s.Decimate = 1
	}
	return s
}
