package filter

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTaps(t *testing.T) {
	tests := []struct {
		name, in string
		want     []float32
	}{
		{"one per line", "1\n2\n3\n", []float32{1, 2, 3}},
		{"commas and spaces", "0.5, -0.25,1e-3\t2", []float32{0.5, -0.25, 1e-3, 2}},
		{"comments and blanks", "# designed by hand\n\n1 # first\n  \n2,#3\n", []float32{1, 2}},
		{"CRLF", "1,\r\n2\r\n", []float32{1, 2}},
		{"no trailing newline", "7", []float32{7}},
		{"trailing comma", "1,2,", []float32{1, 2}},
		{"trailing commas, C style", "0.1, 0.2,\n 0.3,\n", []float32{0.1, 0.2, 0.3}},
		{"byte order mark", "\uFEFF0.5,0.25\r\n", []float32{0.5, 0.25}},
		{"spaces and commas", "1 2, 3\t4", []float32{1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTaps(strings.NewReader(tc.in), "t.txt")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("ParseTaps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseTapsErrors(t *testing.T) {
	tests := []struct {
		name, in, msg string
	}{
		{"garbage line 3", "1\n2\nabc\n4", `taps.txt:3: "abc" is not a finite number`},
		{"garbage after comment lines", "# a\n# b\n1 2 x3", `taps.txt:3: "x3"`},
		{"NaN", "1\nNaN", "taps.txt:2:"},
		{"Inf", "inf", "taps.txt:1:"},
		{"float32 overflow", "1\n1e39", `taps.txt:2: "1e39" overflows float32`},
		{"empty", "", "taps.txt: no taps found"},
		{"only comments", "# nothing\n\n", "taps.txt: no taps found"},
		{"long line", strings.Repeat("1 ", maxTapLine), "taps.txt:1: line longer than"},
		{"empty field", "1\n2,,3\n", "taps.txt:2: an empty field before comma 2"},
		{"leading comma", ",1", "taps.txt:1: an empty field before comma 1"},
		{"byte order mark past line 1", "1\n\uFEFF2", `taps.txt:2: "\ufeff2" is not a finite number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTaps(strings.NewReader(tc.in), "taps.txt")
			if got != nil || !errors.Is(err, ErrTapsSyntax) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ParseTaps = %v, %v; want ErrTapsSyntax containing %q", got, err, tc.msg)
			}
		})
	}
}

func TestLoadTaps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lp.taps")
	if err := os.WriteFile(p, []byte("0.25\n0.5\n0.25\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadTaps(p)
	if err != nil || fmt.Sprint(got) != "[0.25 0.5 0.25]" {
		t.Fatalf("LoadTaps = %v, %v", got, err)
	}
	missing := filepath.Join(dir, "missing.taps")
	if _, err := LoadTaps(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("LoadTaps(missing) = %v; want ErrNotExist naming the path", err)
	}
	bad := filepath.Join(dir, "bad.taps")
	if err := os.WriteFile(bad, []byte("1\n2\n,oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTaps(bad); err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Fatalf("LoadTaps(bad) = %v; want error containing %q", err, bad+":3:")
	}
}

func FuzzParseTaps(f *testing.F) {
	for _, s := range []string{"1\n2\n3", "0.5, -0.25 # c\n", "", "#", "1e39", "nan", "1,,2\r\n", "0x1p-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		taps, err := ParseTaps(strings.NewReader(in), "fuzz")
		if err != nil {
			if taps != nil {
				t.Fatalf("taps %v returned with error %v", taps, err)
			}
			if !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error %q does not name the input", err)
			}
			return
		}
		if len(taps) == 0 || len(taps) > MaxTaps {
			t.Fatalf("%d taps without error", len(taps))
		}
		for i, v := range taps {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("tap %d is %v", i, v)
			}
		}
		// Whatever parsed must make a working filter.
		if _, err := NewFIR(taps, false, 1); err != nil {
			t.Fatalf("NewFIR on parsed taps: %v", err)
		}
	})
}
