package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/probe"
)

func TestProbeSoakFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "1s", "--blocks", "10"}, "--blocks and --duration are exclusive"},
		{[]string{"--interval", "1s"}, "--interval needs --duration"},
		{[]string{"--duration", "1s", "--interval", "2s"}, "--interval 2s is longer than --duration 1s"},
		{[]string{"--duration", "1s", "--sweep"}, "--sweep and --duration are exclusive"},
		{[]string{"--duration", "1s", "--png", "x.png"}, "--png needs the block-count mode"},
		{[]string{"--duration", "-1s"}, "--duration: must be > 0"},
		{[]string{"--duration", "1s", "--interval", "-1s"}, "--interval: must be > 0"},
		{[]string{"--verify-every", "0"}, "--verify-every: must be >= 1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"probe", "--paths", "cpu", "--log-level", "warn"}, tt.args...)
			_, _, err := execute(t, nil, nil, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// TestProbeSoakCommand runs a short CPU soak: a line per interval, the
// verdict, and the intervals in the JSON report. A loaded machine may drop
// blocks, which fails the soak, but only as a loss.
func TestProbeSoakCommand(t *testing.T) {
	js := filepath.Join(t.TempDir(), "soak.json")
	stdout, stderr, err := execute(t, nil, nil, "probe", "--paths", "cpu", "--log-level", "warn",
		"--block-size", "64", "--taps", "16", "--period", "50us", "--warmup", "50",
		"--duration", "200ms", "--interval", "100ms", "--verify-every", "3", "--json", js)
	if err != nil && (!errors.Is(err, probe.ErrLoss) || errors.Is(err, probe.ErrMismatch)) {
		t.Fatalf("soak: %v\n%s", err, stderr)
	}
	lines := strings.Split(stdout, "\n")
	var intervals int
	for _, l := range lines {
		if strings.HasPrefix(l, "cpu ") && (strings.Contains(l, " 0-0.1 ") || strings.Contains(l, " 0.1-0.2 ")) {
			intervals++
		}
	}
	if intervals != 2 || !strings.Contains(stdout, "verify 1 block in 3") || !strings.Contains(stdout, "soak cpu: ") ||
		!strings.Contains(stdout, "per-interval p50 ") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	verdict := "soak cpu: PASS: 2 intervals"
	if err != nil {
		verdict = "soak cpu: FAIL: 2 intervals"
	}
	if !strings.Contains(stdout, verdict) {
		t.Errorf("stdout lacks %q:\n%s", verdict, stdout)
	}
	data, rerr := os.ReadFile(js)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var rep probe.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Results[0].Soak
	if s == nil || s.DurationS != 0.2 || s.IntervalS != 0.1 || s.VerifyEvery != 3 || len(s.Intervals) != 2 ||
		s.Scheduled != 4000 || s.Passed != (err == nil) {
		t.Fatalf("report soak %+v", s)
	}
}

// TestProbeBlockModeReportUnchanged: without --duration the JSON report
// has no soak section.
func TestProbeBlockModeReportUnchanged(t *testing.T) {
	js := filepath.Join(t.TempDir(), "p.json")
	png := filepath.Join(t.TempDir(), "p.png")
	_, stderr, err := execute(t, nil, nil, "probe", "--paths", "cpu", "--log-level", "warn",
		"--block-size", "64", "--taps", "16", "--period", "0", "--blocks", "300", "--warmup", "10", "--json", js, "--png", png)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	r := raw.Results[0]
	if _, ok := r["soak"]; ok {
		t.Errorf("block-count report has a soak section: %s", data)
	}
	for _, k := range []string{"p50_us", "p999_us", "verified_blocks", "dropped_blocks", "mismatches"} {
		if _, ok := r[k]; !ok {
			t.Errorf("report lacks %s", k)
		}
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("histogram PNG: %v", err)
	}
}

// TestProbeVerdict: a measurement that dropped blocks fails, as a soak
// cut short does; a soak's own losses are probe.Run's errors.
func TestProbeVerdict(t *testing.T) {
	tests := []struct {
		name string
		rs   []probe.Result
		want string
	}{
		{"clean", []probe.Result{{Path: "cpu", Blocks: 10}}, ""},
		{"drops", []probe.Result{{Path: "cpu"}, {Path: "explicit", Dropped: 3, BlockSize: 256, PeriodUs: 2}},
			"probe explicit: 3 blocks of 256 samples dropped (ring full): the path did not keep up with one block every 2 µs"},
		{"unpaced drops", []probe.Result{{Path: "cpu", Dropped: 100, BlockSize: 64}}, ""},
		{"soak cut short", []probe.Result{{Path: "zero-copy", Soak: &probe.Soak{IntervalS: 60, Intervals: make([]probe.Interval, 2)}}},
			"probe zero-copy: soak interrupted after 2 intervals of 60s"},
		{"soak passed, drops left to probe.Run", []probe.Result{{Path: "cpu", Dropped: 1, Soak: &probe.Soak{Passed: true}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := probeVerdict(tt.rs)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
