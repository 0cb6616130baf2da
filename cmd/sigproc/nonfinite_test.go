package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNaNInputFlagged (issue 27 item 8): a float input holding NaN and
// infinite values is flagged: a warning as soon as the first is read, and
// the count in all at the end (also sigproc_input_nonfinite_values_total).
func TestNaNInputFlagged(t *testing.T) {
	in := filepath.Join(t.TempDir(), "x.f32")
	b := make([]byte, 4*5000)
	for i := range 5000 {
		v := float32(math.Sin(float64(i)))
		switch i {
		case 10, 2000, 4999:
			v = float32(math.NaN())
		case 3000:
			v = float32(math.Inf(1))
		}
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	os.WriteFile(in, b, 0o644)
	cfg := writeConfig(t, "source: {type: file, path: "+in+", format: rf32_le, sample_rate: 1000}\nblock_size: 500\nfilter: {taps: [0.5, 0.5]}\nsink: {type: null}\n")
	code, _, errs := runCLI(t, "", "run", cfg, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "input holds NaN or infinite values"); n != 1 {
		t.Errorf("warned %d times at the first, want once:\n%s", n, errs)
	}
	if !strings.Contains(errs, "NaN or infinite values read from the input in all") || !strings.Contains(errs, "values=4") {
		t.Errorf("no total of 4 at the end:\n%s", errs)
	}
}
