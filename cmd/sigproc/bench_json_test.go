package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchJSONForms: every bench command's --json takes the same forms.
// Bare (or "-"), the JSON goes to stdout instead of the text; with a file,
// given as the next argument or after "=", the text still prints and the
// JSON goes to the file. Other arguments are refused.
func TestBenchJSONForms(t *testing.T) {
	dir := t.TempDir()
	base := []string{"bench", "cpu", "--samples", "4096", "--reps", "1"}
	for i, tc := range []struct {
		args     []string
		file     bool   // the JSON lands in the file named last
		stdout   string // "json", "text" or "" (an error)
		errorHas string
	}{
		{[]string{"--json"}, false, "json", ""},
		{[]string{"--json", "-"}, false, "json", ""},
		{[]string{"--json", "FILE"}, true, "text", ""},
		{[]string{"--json=FILE"}, true, "text", ""},
		{[]string{"--json", "FILE", "--taps", "33"}, true, "text", ""},
		{[]string{}, false, "text", ""},
		{[]string{"extra"}, false, "", "unknown command"},
		{[]string{"--json", "a", "b"}, false, "", "unknown command"},
	} {
		args := append([]string(nil), base...)
		path := filepath.Join(dir, "r"+string(rune('0'+i))+".json")
		for _, a := range tc.args {
			args = append(args, strings.ReplaceAll(a, "FILE", path))
		}
		out, _, err := execute(t, nil, nil, args...)
		if tc.stdout == "" {
			if err == nil || !strings.Contains(err.Error(), tc.errorHas) {
				t.Errorf("%v: err %v, want one containing %q", tc.args, err, tc.errorHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		var res benchCPUResult
		isJSON := json.Unmarshal([]byte(out), &res) == nil
		if isJSON != (tc.stdout == "json") {
			t.Errorf("%v: stdout JSON = %v, want %s: %q", tc.args, isJSON, tc.stdout, out)
		}
		b, ferr := os.ReadFile(path)
		if tc.file != (ferr == nil) {
			t.Errorf("%v: JSON file written = %v", tc.args, ferr == nil)
		} else if tc.file {
			if err := json.Unmarshal(b, &res); err != nil || res.Taps != 129 && res.Taps != 33 {
				t.Errorf("%v: file %q: %v %+v", tc.args, b, err, res)
			}
		}
	}
}
