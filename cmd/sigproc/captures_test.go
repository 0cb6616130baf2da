package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCarriesCaptures (issue 27 item 7): a recording with three
// capture segments, run through shift +250 kHz → fir ÷4, keeps all three
// in the output, hand-computed: input 1000 → output ceil(1000/4) = 250,
// input 2002 → ceil(2002/4) = 501, each frequency less the shift, each
// datetime kept. A recording whose annotation runs past its data is
// refused (item 8).
func TestRunCarriesCaptures(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	os.WriteFile(rec+".sigmf-data", make([]byte, 8*4000), 0o644) // 4000 complex samples
	os.WriteFile(rec+".sigmf-meta", []byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":1e6,"core:version":"1.0.0"},
	"captures":[{"core:sample_start":0,"core:frequency":100e6,"core:datetime":"2026-01-02T03:04:05Z"},
		{"core:sample_start":1000,"core:frequency":101e6,"core:datetime":"2026-01-02T03:05:00Z"},
		{"core:sample_start":2002,"core:frequency":102e6}],
	"annotations":[]}`), 0o644)
	cfg := writeConfig(t, "source: {type: file, path: "+rec+".sigmf-meta}\nblock_size: 256\nstages:\n  - shift: {frequency_hz: 250000}\n  - fir: {taps: [1], decimate: 4}\nsink: {type: sigmf, path: "+filepath.Join(dir, "out")+"}\n")
	if code, _, errs := runCLI(t, "", "run", cfg); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.sigmf-meta"))
	var m struct {
		Captures []map[string]any `json:"captures"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"core:sample_start": 0.0, "core:frequency": 99.75e6, "core:datetime": "2026-01-02T03:04:05Z"},
		{"core:sample_start": 250.0, "core:frequency": 100.75e6, "core:datetime": "2026-01-02T03:05:00Z"},
		{"core:sample_start": 501.0, "core:frequency": 101.75e6},
	}
	if len(m.Captures) != len(want) {
		t.Fatalf("captures %v, want %v", m.Captures, want)
	}
	for i, w := range want {
		for k, v := range w {
			if m.Captures[i][k] != v {
				t.Errorf("capture %d %s = %v, want %v", i, k, m.Captures[i][k], v)
			}
		}
		if len(m.Captures[i]) != len(w) {
			t.Errorf("capture %d = %v, want %v", i, m.Captures[i], w)
		}
	}

	os.WriteFile(rec+".sigmf-meta", []byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":1e6},
	"annotations":[{"core:sample_start":3990,"core:sample_count":20,"core:label":"burst"}]}`), 0o644)
	code, _, errs := runCLI(t, "", "run", cfg, "--overwrite")
	if code != 1 || !strings.Contains(errs, "annotations[0] core:sample_start + core:sample_count reaches sample 4010, past the end of the data") {
		t.Errorf("annotation past the data: exit %d: %s", code, errs)
	}
}
