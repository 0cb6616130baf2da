package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sigproc/sigproc/stage"
)

// parseStage is DecodeStage and Resolve of data, for a stage whose input
// is 64 channels when it is a select.
func parseStage(data []byte, name string, rate float64) (stage.Stage, error) {
	b, err := DecodeStage(bytes.NewReader(data), name)
	if err != nil {
		return stage.Stage{}, err
	}
	channels := 1
	if bytes.Contains(data, []byte(`"select"`)) {
		channels = 64
	}
	return b.Resolve(rate, channels, stage.Stage{})
}

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
		{"resample", `{"resample": {"up": 3, "down": 2, "taps": [1]}}`, "", func(s stage.Stage) bool { return s.Up == 3 }},
		{"integral float", `{"fir": {"taps": [1], "decimate": 2.0}}`, "", func(s stage.Stage) bool { return s.Decimate == 2 }},
		{"explicit method", `{"fir": {"taps": [1], "method": "fft"}}`, "", func(s stage.Stage) bool { return s.Method == "fft" }},
		{"select", `{"select": {"channels": [3, 56, 0]}}`, "", func(s stage.Stage) bool { return s.Kind == stage.KindSelect && fmt.Sprint(s.Keep) == "[3 56 0]" }},
		// Refused as the file parser refuses them, by its validator.
		{"yaml", "fir: {taps: [1, 2]}\n", "not valid JSON", nil},
		{"empty", ``, "empty", nil},
		{"two kinds", `{"fir": {"taps": [1]}, "shift": {"frequency_hz": 1}}`, "a stage has exactly one kind (found shift and fir)", nil},
		{"none", `{}`, "empty stage", nil},
		{"null kind", `{"fir": null}`, "fir: must be a mapping", nil},
		{"unknown key", `{"fir": {"tapz": [1]}}`, "fir.tapz: unknown key, did you mean taps? (allowed here: taps, taps_file, design, method, decimate)", nil},
		{"repeated key", `{"fir": {"taps": [1], "taps": [2]}}`, "fir.taps: given twice", nil},
		{"taps_file", `{"fir": {"taps_file": "/etc/passwd"}}`, "fir.taps_file: not accepted", nil},
		{"resample taps_file", `{"resample": {"up": 2, "down": 1, "taps_file": "x"}}`, "resample.taps_file: not accepted", nil},
		{"no taps", `{"fir": {"taps": []}}`, "fir.taps: must not be empty", nil},
		{"string tap", `{"fir": {"taps": [1, "x"]}}`, "fir.taps[1]: wrong type: string \"x\"", nil},
		{"nested list", `{"fir": {"taps": [[1]]}}`, "fir.taps[0]: wrong type: list", nil},
		{"tap beyond float32", `{"fir": {"taps": [1, 1e39]}}`, "fir.taps[1]: must be a finite float32", nil},
		{"above nyquist", `{"shift": {"frequency_hz": 30000}}`, "above Nyquist", nil},
		{"shift without frequency", `{"shift": {}}`, "shift.frequency_hz: required", nil},
		{"huge frequency", `{"shift": {"frequency_hz": 1e400}}`, "shift.frequency_hz: must be a finite number", nil},
		{"bad design", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 40000, "num_taps": 65}}}`, "fir.design", nil},
		{"design key of another type", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 65, "low_hz": 10}}}`, "fir.design.low_hz: not used by lowpass", nil},
		{"fraction decimate", `{"fir": {"taps": [1], "decimate": 2.5}}`, "fir.decimate: must be an integer, got 2.5", nil},
		{"explicit decimate 0", `{"fir": {"taps": [1], "decimate": 0}}`, "fir.decimate: must be in 1..65536, got 0", nil},
		{"negative decimate", `{"fir": {"taps": [1], "decimate": -2}}`, "fir.decimate: must be in 1..65536, got -2", nil},
		{"huge decimate", `{"fir": {"taps": [1], "decimate": 1e30}}`, "fir.decimate: must be an integer", nil},
		{"string decimate", `{"fir": {"taps": [1], "decimate": "2"}}`, "fir.decimate: wrong type: string", nil},
		{"empty method", `{"fir": {"taps": [1], "method": ""}}`, "fir.method: must not be zero or empty", nil},
		{"unknown method", `{"fir": {"taps": [1], "method": "fast"}}`, "fir.method: unknown value", nil},
		{"resample method", `{"resample": {"up": 2, "down": 1, "taps": [1], "method": "fft"}}`, "resample.method: not used by resample", nil},
		{"zero up", `{"resample": {"up": 0, "down": 1, "taps": [1]}}`, "resample.up: must be in 1..65536, got 0", nil},
		{"empty window", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 65, "window": ""}}}`, "fir.design.window: must not be zero or empty", nil},
		{"fraction channel", `{"select": {"channels": [1.5]}}`, "select.channels[0]: must be an integer, got 1.5", nil},
		{"string channel", `{"select": {"channels": ["3"]}}`, "select.channels[0]: wrong type: string \"3\" where a whole number is expected", nil},
		{"channels not a list", `{"select": {"channels": 3}}`, "select.channels: wrong type: number where a list is expected", nil},
		{"negative channel", `{"select": {"channels": [-1]}}`, "channel -1: channels count from 0", nil},
		{"not an object", `[1, 2]`, "must be a JSON object", nil},
		{"two documents", `{"shift": {"frequency_hz": 1}} {"shift": {"frequency_hz": 2}}`, "more after the stage's object", nil},
		{"truncated", `{"fir": {"taps": [1, 2`, "not valid JSON", nil},
		{"syntax", `{"fir": {"taps": [1,, 2]}}`, "not valid JSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseStage([]byte(tt.body), "body", 48000)
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
		s, err := parseStage(body, "body", 48000)
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

// TestDecodeStageMemory (issue 27 item 5): a 1 MiB body of taps, the most
// the API reads, is decoded as it streams in: the allocations are the taps
// (4 bytes each, with the slice's growth) and the tokens' garbage, not a
// node tree (the YAML route took 254 MB for this body).
func TestDecodeStageMemory(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"fir": {"taps": [0`)
	for b.Len() < MaxStageBodySize-4 {
		b.WriteString(",0")
	}
	b.WriteString("]}}")
	body := b.String()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sb, err := DecodeStage(strings.NewReader(body), "body")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	n := len(sb.c.Stages[0].FIR.Taps)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes, %d taps: %.1f MB allocated", len(body), n, float64(alloc)/1e6)
	if n < 500000 || alloc > 40<<20 {
		t.Errorf("%d taps, %d bytes allocated; want ≥ 500000 taps in < 40 MiB", n, alloc)
	}
}

// TestDecodeStageReadError: an error reading the body (the API's size
// limit) comes back wrapped, so the API can answer 413.
func TestDecodeStageReadError(t *testing.T) {
	errLimit := errors.New("too large")
	r := io.MultiReader(strings.NewReader(`{"fir": {"taps": [1, 2, `), iotest.ErrReader(errLimit))
	if _, err := DecodeStage(r, "body"); !errors.Is(err, errLimit) {
		t.Fatalf("err %v, want it to wrap %v", err, errLimit)
	}
	// After the document, only white space may follow, and is read to
	// the end (where a size limit is met).
	r = io.MultiReader(strings.NewReader(`{"fir": {"taps": [1]}}   `), iotest.ErrReader(errLimit))
	if _, err := DecodeStage(r, "body"); !errors.Is(err, errLimit) {
		t.Fatalf("trailing: err %v, want it to wrap %v", err, errLimit)
	}
}

// TestParseStageAgreesWithFile (issue 27 item 8): a body is accepted or
// refused as the same stage written in a config file is, by the same
// validator, and an accepted one is the same stage (an absent decimate is
// the file's default 1, which the API reads as "keep the running one").
func TestParseStageAgreesWithFile(t *testing.T) {
	for _, body := range []string{
		`{"fir": {"taps": [0.25, 0.5, 0.25]}}`,
		`{"fir": {"taps": [1], "decimate": 4, "method": "direct"}}`,
		`{"fir": {"taps": [1], "decimate": 0}}`,
		`{"fir": {"taps": [1], "decimate": -1}}`,
		`{"fir": {"taps": [1], "decimate": 1.5}}`,
		`{"fir": {"taps": [1], "method": ""}}`,
		`{"fir": {"taps": []}}`,
		`{"fir": {"taps": [1e39]}}`,
		`{"fir": {}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 65}}}`,
		`{"fir": {"design": {"type": "bandpass", "low_hz": 100, "high_hz": 2000, "num_taps": 33, "window": "kaiser", "kaiser_beta": 5}}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "transition_hz": 1000, "attenuation_db": 60}}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 0}}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 64, "window": "hann", "kaiser_beta": 3}}}`,
		`{"fir": {"design": {"type": "highpass", "cutoff_hz": 4000, "num_taps": 64}}}`,
		`{"fir": {"design": {"type": "notch", "cutoff_hz": 4000, "num_taps": 65}}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 24000, "num_taps": 65}}}`,
		`{"fir": {"design": {"type": "lowpass", "cutoff_hz": 4000, "num_taps": 2000000}}}`,
		`{"shift": {"frequency_hz": 1000}}`,
		`{"shift": {"frequency_hz": 0}}`,
		`{"select": {"channels": [0]}}`,
		`{"select": {"channels": [1.5]}}`,
		`{"select": {"channels": []}}`,
		`{"shift": {}}`,
		`{"shift": {"frequency_hz": -24001}}`,
		`{"resample": {"up": 3, "down": 2, "taps": [1, 1]}}`,
		`{"resample": {"up": 3, "down": 2, "design": {"type": "lowpass", "cutoff_hz": 20000, "num_taps": 63}}}`,
		`{"resample": {"up": 0, "down": 2, "taps": [1]}}`,
		`{"resample": {"up": 2, "taps": [1]}}`,
		`{"resample": {"up": 2, "down": 1, "taps": [1], "method": "fft"}}`,
		`{"fir": {"taps": [1]}, "shift": {"frequency_hz": 1}}`,
		`{}`,
	} {
		api, aerr := parseStage([]byte(body), "body", 48000)
		file, ferr := Parse([]byte("source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 1000}\nstages:\n  - "+body+"\nsink: {type: null}\n"), "f.yaml")
		if (aerr == nil) != (ferr == nil) {
			t.Errorf("%s: API %v, file %v", body, aerr, ferr)
			continue
		}
		if aerr != nil {
			// The same message, less the file's position and the stage's index.
			am := aerr.Error()[len("body: "):]
			if fm := ferr.Error(); !strings.Contains(fm, am) {
				t.Errorf("%s: API says %q, file %q", body, am, fm)
			}
			continue
		}
		ch, err := file.Chain(48000, false)
		if err != nil {
			t.Fatal(err)
		}
		want := ch.Stages[0]
		if api.Kind == stage.KindFIR && api.Decimate == 0 {
			api.Decimate = 1
		}
		if api.Kind == stage.KindFIR && api.Method == "" {
			api.Method = DefaultMethod
		}
		if fmt.Sprint(api) != fmt.Sprint(want) {
			t.Errorf("%s: API %+v, file %+v", body, api, want)
		}
	}
}
