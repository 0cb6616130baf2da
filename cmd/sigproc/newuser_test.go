package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/config"
)

// TestBusyBound (issues 27 and 29): the busy-share log line names what
// bounds the run, the source and sink before the GPU's copies and
// kernels; "none near 1" only when none is.
func TestBusyBound(t *testing.T) {
	tests := []struct {
		src, snk, in, kernel, out float64
		want                      string
	}{
		{0.9997, 0.01, 0, 0, 0, "the source bounds the run"},
		{0.95, 0.97, 0, 0, 0, "the sink bounds the run"},
		{0.2, 0.93, 0, 0, 0, "the sink bounds the run"},
		{0.9, 0.0, 0, 0, 0, "the source bounds the run"},
		{0.89, 0.5, 0, 0, 0, "none near 1"},
		{0, 0, 0, 0, 0, "none near 1"},
		{0.95, 0.1, 0.97, 0.2, 0.3, "the source bounds the run"},
		{0.5, 0.1, 0.96, 0.2, 0.3, "copies to the GPU bound"},
		{0.5, 0.1, 0.2, 0.2, 0.93, "copies back from the GPU bound"},
		{0.5, 0.1, 0.2, 1.4, 0.3, "kernels bound"},
		{0.5, 0.1, 0.5, 0.5, 0.5, "none near 1"},
	}
	for _, tt := range tests {
		if got := busyBound(tt.src, tt.snk, tt.in, tt.kernel, tt.out); !strings.Contains(got, tt.want) {
			t.Errorf("busyBound(%g, %g, %g, %g, %g) = %q, want %q", tt.src, tt.snk, tt.in, tt.kernel, tt.out, got, tt.want)
		}
	}
}

// TestSinkTypeHelp (issue 27 item 9): --sink-type's help names every sink
// type the config takes.
func TestSinkTypeHelp(t *testing.T) {
	usage := newRunCmd().Flags().Lookup("sink-type").Usage
	for _, typ := range []string{config.SinkFile, config.SinkSigMF, config.SinkWAV, config.SinkZMQ, config.SinkNull} {
		if !strings.Contains(usage, typ) {
			t.Errorf("--sink-type help %q does not name %s", usage, typ)
		}
	}
}

// TestDocsNameShippedConfigs (issue 27 item 9): every config the README
// and the commands' help run (run X.yaml, -c X.yaml) is a shipped file:
// the README named an rtl.yaml that did not exist.
func TestDocsNameShippedConfigs(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"README.md": string(readme)}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts[c.CommandPath()+" --help"] = c.Long + "\n" + c.Example
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	ref := regexp.MustCompile(`(?:\brun|\s-c)\s+([\w./-]+\.ya?ml)\b`)
	n := 0
	for where, text := range texts {
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			n++
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("%s runs %s, which is not a shipped config", where, m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d config references; the pattern is broken", n)
	}
}

// TestSummaryNamesBothRates (issue 27 item 9): the summary gives the
// output and the input rate, labelled, whether or not the chain changes
// the rate: through a ÷8 the input rate is 8 times the output's.
func TestSummaryNamesBothRates(t *testing.T) {
	rates := regexp.MustCompile(`  ([0-9.]+) MS/s out, ([0-9.]+) MS/s in  `)
	for _, tt := range []struct {
		name, filter string
		ratio        float64
	}{
		{"plain fir", "filter: {taps: [1]}\n", 1},
		{"fir ÷8", "stages:\n  - fir: {taps: [0.5, 0.5], decimate: 8}\n", 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, num_samples: 4000000}\nblock_size: 65536\n"+tt.filter+"sink: {type: null}\n")
			code, out, errs := runCLI(t, "", "run", cfg, "--log-level", "error")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			m := rates.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("summary %q: want \"N MS/s out, M MS/s in\"", out)
			}
			o, _ := strconv.ParseFloat(m[1], 64)
			i, _ := strconv.ParseFloat(m[2], 64)
			if o <= 0 || math.Abs(i/o-tt.ratio) > 0.01*tt.ratio+0.01/o {
				t.Errorf("summary %q: in/out = %g, want %g", out, i/o, tt.ratio)
			}
		})
	}
}
