package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecondYAMLDocumentRefused (issue 27 item 8): a config holding a
// second YAML document — a full one, an empty one, a comment, a bare
// "---" at the end, one after "..." — is refused with the file and the
// line of its "---" by every command that reads a config (run, design -c,
// probe -c), before anything runs.
func TestSecondYAMLDocumentRefused(t *testing.T) {
	const base = "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}\n" +
		"filter: {design: {type: lowpass, cutoff_hz: 100, num_taps: 15}}\nsink: {type: null}\n"
	tests := []struct {
		name, tail string
		line       int
	}{
		{"a second config", "---\n" + base, 4},
		{"an empty document", "---\n", 4},
		{"a comment only", "---\n# nothing\n", 4},
		{"a null", "---\n~\n", 4},
		{"after an end marker", "...\n---\nsink: {type: file, path: x}\n", 5},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			os.WriteFile(cfg, []byte(base+tt.tail), 0o644)
			want := fmt.Sprintf("%s:%d: multiple YAML documents", cfg, tt.line)
			for _, args := range [][]string{{"run", cfg}, {"design", "-c", cfg}, {"probe", "-c", cfg, "--blocks", "10"}} {
				code, out, errs := runCLI(t, "", args...)
				if code != 1 || !strings.Contains(errs, want) || out != "" {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", args[0], code, out, errs, want)
				}
			}
		})
	}
}
