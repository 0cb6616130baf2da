package main

import (
	"encoding/json"
	"github.com/spf13/cobra"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

func parseLines(t *testing.T, s string) []float64 {
	t.Helper()
	var v []float64
	for _, f := range strings.Fields(s) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("bad tap %q: %v", f, err)
		}
		v = append(v, x)
	}
	return v
}

func TestDesignPrintsTaps(t *testing.T) {
	stdout, stderr, err := execute(t, nil, nil, "design", "--type", "lowpass", "--rate", "1e6", "--cutoff", "1e5", "--taps", "129")
	if err != nil {
		t.Fatalf("design: %v", err)
	}
	taps := parseLines(t, stdout)
	if len(taps) != 129 {
		t.Fatalf("%d taps, want 129", len(taps))
	}
	sum := 0.0
	for i, v := range taps {
		sum += v
		if v != taps[len(taps)-1-i] {
			t.Fatalf("taps not symmetric at %d", i)
		}
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Errorf("DC gain = %v, want 1", sum)
	}
	// The printed values are exactly what filter.Design returns.
	want, _ := filter.Design(filter.Spec{Type: "lowpass", SampleRate: 1e6, CutoffHz: 1e5, NumTaps: 129, Window: "hamming"})
	for i := range want {
		if float32(taps[i]) != want[i] {
			t.Fatalf("tap %d printed as %v, design gives %v", i, taps[i], want[i])
		}
	}
	if !strings.Contains(stderr, "passband ripple") || !strings.Contains(stderr, "stopband attenuation") {
		t.Errorf("stderr lacks measurements: %q", stderr)
	}
}

func TestDesignFormats(t *testing.T) {
	args := []string{"design", "--rate", "48000", "--type", "bandpass", "--low", "300", "--high", "3400", "--taps", "63", "--window", "kaiser", "--beta", "6"}
	lines, _, err := execute(t, nil, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	ref := parseLines(t, lines)

	csv, _, err := execute(t, nil, nil, append(args, "--format", "csv")...)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseLines(t, strings.ReplaceAll(csv, ",", " ")); len(got) != len(ref) || got[5] != ref[5] {
		t.Errorf("csv differs from lines")
	}
	if strings.Count(strings.TrimSpace(csv), "\n") != 0 {
		t.Errorf("csv is not one line")
	}

	js, _, err := execute(t, nil, nil, append(args, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var arr []float64
	if err := json.Unmarshal([]byte(js), &arr); err != nil || len(arr) != len(ref) || arr[7] != ref[7] {
		t.Errorf("json = %q (%v)", js, err)
	}

	goSrc, _, err := execute(t, nil, nil, append(args, "--format", "go")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(goSrc, "var taps = []float32{\n") || !strings.HasSuffix(goSrc, "}\n") || !strings.Contains(goSrc, "kaiser beta 6") {
		t.Errorf("go output = %q", goSrc)
	}

	// The lines output reads back as a taps file.
	p := filepath.Join(t.TempDir(), "taps.txt")
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := filter.LoadTaps(p)
	if err != nil || len(back) != len(ref) || back[3] != float32(ref[3]) {
		t.Errorf("LoadTaps round trip: %v, %v", len(back), err)
	}
}

func TestDesignResponse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.csv")
	_, _, err := execute(t, nil, nil, "design", "--rate", "1e6", "--cutoff", "1e5", "--taps", "101", "--response", p, "--points", "11")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(rows) != 12 || rows[0] != "freq_hz,magnitude_db" {
		t.Fatalf("response rows = %q", rows)
	}
	if _, _, err := execute(t, nil, nil, "design", "--rate", "1e6", "--cutoff", "1e5", "--taps", "101", "--response", p); err == nil || !strings.Contains(err.Error(), "exists; give --overwrite to replace it") {
		t.Errorf("an existing --response file: %v", err)
	}
	if _, _, err := execute(t, nil, nil, "design", "--rate", "1e6", "--cutoff", "1e5", "--taps", "101", "--response", p, "--points", "5", "--overwrite"); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	first := strings.Split(rows[1], ",")
	last := strings.Split(rows[11], ",")
	if b, _ := os.ReadFile(p); strings.Count(string(b), "\n") != 6 {
		t.Errorf("--overwrite left %q", b)
	}
	if first[0] != "0.000" || last[0] != "500000.000" {
		t.Errorf("frequencies %s..%s, want 0..500000", first[0], last[0])
	}
	dc, _ := strconv.ParseFloat(first[1], 64)
	ny, _ := strconv.ParseFloat(last[1], 64)
	if math.Abs(dc) > 0.01 || ny > -40 {
		t.Errorf("lowpass |H| at DC %v dB, at Nyquist %v dB", dc, ny)
	}
}

func TestDesignFromConfig(t *testing.T) {
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 2e6, signal: tone, frequency_hz: 10}
filter: {design: {type: highpass, cutoff_hz: 1e5, num_taps: 51, window: blackman}}
sink: {type: null}
`)
	stdout, stderr, err := execute(t, nil, nil, "design", "-c", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(parseLines(t, stdout)); n != 51 {
		t.Errorf("%d taps, want 51", n)
	}
	if !strings.Contains(stderr, "highpass 100000 Hz, 51 taps, blackman window, 2000000 S/s") {
		t.Errorf("stderr = %q", stderr)
	}
	// Flags override the config's design.
	stdout, _, err = execute(t, nil, nil, "design", "-c", cfg, "--taps", "31")
	if err != nil || len(parseLines(t, stdout)) != 31 {
		t.Errorf("--taps override: %v", err)
	}
}

func TestDesignErrors(t *testing.T) {
	inline := writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000}\nfilter: {taps: [1]}\nsink: {type: null}\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"design", "--cutoff", "10"}, "--rate and --taps required"},
		{[]string{"design", "--rate", "1e6", "--taps", "10", "--type", "highpass", "--cutoff", "1e5"}, "odd number of taps"},
		{[]string{"design", "--rate", "1e6", "--taps", "11", "--cutoff", "6e5"}, "Nyquist"},
		{[]string{"design", "--rate", "1e6", "--taps", "11", "--cutoff", "1e5", "--window", "tukey"}, "unknown window"},
		{[]string{"design", "--rate", "1e6", "--taps", "11", "--cutoff", "1e5", "--format", "xml"}, `--format: unknown value "xml"`},
		{[]string{"design", "--rate", "1e6", "--taps", "11", "--cutoff", "1e5", "--transition", "1e6"}, "try a smaller --transition"},
		{[]string{"design", "-c", inline}, "filter has no design"},
		{[]string{"design", "--rate", "2e6", "--cutoff", "1e5", "--transition", "5e4", "--attenuation", "70", "--taps", "31"}, "--taps and --attenuation are exclusive"},
	}
	for _, tt := range tests {
		_, _, err := execute(t, nil, nil, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestVersion(t *testing.T) {
	stdout, _, err := execute(t, nil, nil, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sigproc dev\n", "go       go1.", "platform ", "cuda     "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output %q lacks %q", stdout, want)
		}
	}
}

func TestHelpHasExamples(t *testing.T) {
	// Every command, bench and its subcommands included, has examples.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" && c.Name() != "help" && c.Name() != "completion" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for _, cmd := range []string{"run", "design", "version", "bench", "bench cpu"} {
		stdout, _, err := execute(t, nil, nil, append(strings.Fields(cmd), "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "Examples:") {
			t.Errorf("%s --help has no examples", cmd)
		}
	}
	stdout, _, _ := execute(t, nil, nil, "--help")
	for _, want := range []string{"go run ./cmd/sigproc run configs/synthetic-cpu.yaml", "sigproc bench cpu", "--sink-path -", "cu8", "WAV"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("root help lacks %q", want)
		}
	}
	if strings.Contains(stdout, "CUDA later") {
		t.Error("root help still says CUDA later")
	}
}

// TestDesignPrintsBankPrototype: design -c of a config whose channelize
// stage takes the default prototype prints that prototype's taps
// (filter.BankPrototype), designed at the stage's rate.
func TestDesignPrintsBankPrototype(t *testing.T) {
	stdout, stderr, err := execute(t, nil, nil, "design", "-c", filepath.Join("..", "..", "configs", "filterbank.yaml"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want, err := filter.BankPrototype(64, 16)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(stdout)
	if len(got) != len(want) || !strings.Contains(stderr, "lowpass 16000 Hz, 1024 taps, kaiser") {
		t.Fatalf("%d taps, want %d; stderr %q", len(got), len(want), stderr)
	}
	for i, s := range got {
		v, err := strconv.ParseFloat(s, 32)
		if err != nil || math.Abs(v-float64(want[i])) > 1e-7 {
			t.Fatalf("tap %d: %s, want %v", i, s, want[i])
		}
	}
}
