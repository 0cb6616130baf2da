package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// execute runs the sigproc command tree in-process.
func execute(t *testing.T, ctx context.Context, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(&errb)
	if ctx == nil {
		ctx = context.Background()
	}
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// writeConfig writes a config into a temp dir and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%4 != 0 {
		t.Fatalf("%s: %d bytes is not a whole number of float32", path, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

var summaryRE = regexp.MustCompile(`^samples in (\d+)  out (\d+)  blocks (\d+)  drops (\d+) \((\d+) samples\)  gaps (\d+)  startup [0-9.]+ s  wall [0-9.]+ s  [0-9.]+ MS/s`)

// lossRE matches the loss-at-filter part of the summary, after the rate.
var lossRE = regexp.MustCompile(` MS/s in  filtered (\d+)  filter drops (\d+) \((\d+) samples\)(  clipped \d+)?(  \(interrupted\))?$`)

func TestRunSyntheticToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "dir", "y.f32") // parents are created
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 48000, signal: tone, frequency_hz: 1000, amplitude: 0.5, num_samples: 10000}
block_size: 256
filter: {design: {type: lowpass, cutoff_hz: 4000, num_taps: 31}}
sink: {type: sigmf, path: ignored}
`)
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--sink-type", "file", "--sink-path", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	m := summaryRE.FindStringSubmatch(strings.TrimSpace(stdout))
	if m == nil {
		t.Fatalf("summary %q does not match %v", stdout, summaryRE)
	}
	if m[1] != "10000" || m[2] != "10000" || m[3] != "40" || m[4] != "0" || m[6] != "0" {
		t.Errorf("summary counts wrong: %q", stdout)
	}
	if l := lossRE.FindStringSubmatch(strings.TrimSpace(stdout)); l == nil || l[1] != "10000" || l[2] != "0" || l[3] != "0" {
		t.Errorf("summary %q: want filtered 10000, no filter drops", stdout)
	}
	y := readF32(t, out)
	if len(y) != 10000 {
		t.Fatalf("output has %d samples, want 10000", len(y))
	}
	// A 1 kHz tone passes a 4 kHz lowpass at unit gain: the steady-state
	// peak is the input amplitude.
	peak := 0.0
	for _, v := range y[1000:] {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	if math.Abs(peak-0.5) > 0.01 {
		t.Errorf("filtered tone peak = %.4f, want 0.5", peak)
	}
	if strings.Contains(stderr, "INF") {
		t.Errorf("--log-level warn still logged info: %q", stderr)
	}
}

// TestRunImpulseResponse checks the whole path numerically: one impulse
// through inline taps gives the taps back.
func TestRunImpulseResponse(t *testing.T) {
	out := filepath.Join(t.TempDir(), "h.f32")
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1000, signal: impulse, impulse_every: 0, num_samples: 64}
block_size: 16
filter: {taps: [0.5, 0.25, -0.125]}
sink: {type: file, path: `+out+`}
`)
	if _, stderr, err := execute(t, nil, nil, "run", "-c", cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	y := readF32(t, out)
	want := make([]float32, 64)
	copy(want, []float32{0.5, 0.25, -0.125})
	if len(y) != len(want) {
		t.Fatalf("got %d samples, want %d", len(y), len(want))
	}
	for i := range want {
		if y[i] != want[i] {
			t.Fatalf("y[%d] = %v, want %v (y[:4] = %v)", i, y[i], want[i], y[:4])
		}
	}
}

func TestRunComplexSigMF(t *testing.T) {
	base := filepath.Join(t.TempDir(), "rec")
	cfg := writeConfig(t, `
source:
  type: synthetic
  sample_rate: 1e6
  complex: true
  duration_s: 0.001
  signal: sum
  components:
    - {signal: tone, frequency_hz: -1e5}
    - {signal: noise, noise_std: 0.01, seed: 3}
filter: {taps: [1]}
sink: {type: sigmf, path: `+base+`}
`)
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 1000  out 1000 ") {
		t.Errorf("summary = %q", stdout)
	}
	if y := readF32(t, base+".sigmf-data"); len(y) != 2000 {
		t.Errorf("data has %d values, want 2000 (1000 I/Q pairs)", len(y))
	}
	meta, err := os.ReadFile(base + ".sigmf-meta")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Global map[string]any `json:"global"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	if m.Global["core:datatype"] != "cf32_le" || m.Global["core:sample_rate"] != 1e6 {
		t.Errorf("meta global = %v", m.Global)
	}
}

func TestRunStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.s16")
	cfg := writeConfig(t, `
source: {type: stdin, format: ri16_le, sample_rate: 8000}
block_size: 100
filter: {taps: [1]}
sink: {type: file, path: `+out+`, format: ri16_le}
`)
	in := make([]byte, 2*1234)
	for i := 0; i < 1234; i++ {
		binary.LittleEndian.PutUint16(in[2*i:], uint16(int16(i-600)))
	}
	stdout, stderr, err := execute(t, nil, bytes.NewReader(in), "run", "-c", cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 1234  out 1234 ") {
		t.Errorf("summary = %q", stdout)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, in) {
		t.Errorf("identity filter changed the int16 stream (%d bytes in, %d out)", len(in), len(got))
	}
}

// TestRunInterrupted simulates Ctrl-C during start-up, before the outputs
// are created: the run creates none (an existing file it could overwrite
// stays as it was) and says why; the real binary exits with the signal's
// status (TestStartupSignals). Ctrl-C once they exist still closes the
// sink and prints the summary (TestSafetySignals).
func TestRunInterrupted(t *testing.T) {
	base := filepath.Join(t.TempDir(), "rec")
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 1, paced: true}
filter: {taps: [1]}
sink: {type: sigmf, path: `+base+`}
`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stdout, stderr, err := execute(t, ctx, nil, "run", "-c", cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q: nothing ran, want no summary", stdout)
	}
	if _, err := os.Stat(base + ".sigmf-meta"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output created by a run stopped during start-up: %v", err)
	}
}

// TestSinkTypeFlagDropsUnsuitedFormat: --sink-type over a config whose
// sink.format the new type cannot write (rf32_le for wav, pcm16 for file)
// runs with the new type's default format and says so; null takes none.
func TestSinkTypeFlagDropsUnsuitedFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		sink, flag, out, want string
	}{
		{"{type: file, path: y.f32, format: rf32_le}", "wav", "y.wav", "RIFF"},
		{"{type: wav, path: y.wav, format: pcm16}", "file", "y.f32", ""},
		{"{type: wav, path: y.wav, format: pcm16}", "null", "", ""},
	} {
		cfg := writeConfig(t, "source: {type: synthetic, sample_rate: 1000, signal: tone, frequency_hz: 10, num_samples: 100}\nfilter: {taps: [1]}\nsink: "+tc.sink+"\n")
		args := []string{"run", "-c", cfg, "--sink-type", tc.flag}
		out := ""
		if tc.out != "" {
			out = filepath.Join(dir, tc.flag+"-"+tc.out)
			args = append(args, "--sink-path", out)
		}
		_, stderr, err := execute(t, nil, nil, args...)
		if err != nil {
			t.Errorf("--sink-type %s over %s: %v", tc.flag, tc.sink, err)
			continue
		}
		if tc.flag != "null" && !strings.Contains(stderr, "does not suit --sink-type "+tc.flag) {
			t.Errorf("--sink-type %s: no note of the dropped format in %q", tc.flag, stderr)
		}
		if out != "" {
			b, err := os.ReadFile(out)
			if err != nil || len(b) < 400 || !strings.HasPrefix(string(b), tc.want) {
				t.Errorf("--sink-type %s: output %d bytes %v", tc.flag, len(b), err)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	good := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 10, num_samples: 100}
filter: {taps: [1]}
sink: {type: null}
`)
	bad := writeConfig(t, "source:\n  type: synthetic\n  sample_rate: -5\n  signal: tone\n  frequency_hz: 1000\nfilter: {taps: [1]}\nsink: {type: null}\n")
	missing := writeConfig(t, "source: {type: file, path: nope.cf32, format: cf32_le, sample_rate: 1}\nfilter: {taps: [1]}\nsink: {type: null}\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad config line", []string{"run", "-c", bad}, bad + ":3: source.sample_rate: must be > 0, got -5"},
		{"no config", []string{"run"}, "no config: sigproc run CONFIG (or -c CONFIG)"},
		{"missing config", []string{"run", "-c", bad + ".nope"}, "no such file"},
		{"bad block override", []string{"run", "-c", good, "--block-size", "-1"}, "--block-size: block_size: must be in 1..16777216, got -1"},
		{"bad backend override", []string{"run", "-c", good, "--backend", "tpu"}, `--backend: backend: unknown value "tpu" (allowed: cpu, cuda, auto)`},
		{"bad overrun override", []string{"run", "-c", good, "--overrun", "skip"}, `--overrun: overrun: unknown value "skip"`},
		{"sink file needs path", []string{"run", "-c", good, "--sink-type", "file"}, "sink.path: required for sink type file"},
		{"null sink with a path", []string{"run", "-c", good, "--sink-path", "out.f32"}, `--sink-path "out.f32": a null sink writes nothing`},
		{"null sink type with a path", []string{"run", "-c", good, "--sink-type", "null", "--sink-path", "x"}, "a null sink writes nothing"},
		{"negative drain limit", []string{"run", "-c", good, "--drain-limit", "-1s"}, "--drain-limit: must be >= 0"},
		{"paced and no-paced", []string{"run", "-c", good, "--paced", "--no-paced"}, "none of the others can be"},
		{"duration and num-samples", []string{"run", "-c", good, "--duration", "1s", "--num-samples", "5"}, "none of the others can be"},
		{"bad num-samples", []string{"run", "-c", good, "--num-samples", "2.5"}, "want a positive whole number"},
		{"input file missing", []string{"run", "-c", missing}, missing + ":1: source.path: "},
		{"config twice", []string{"run", "-c", good, "extra"}, "give the config once"},
		{"two arguments", []string{"run", good, "extra"}, "accepts at most 1 arg(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := execute(t, nil, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRunOverrides(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.f32")
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 10, num_samples: 100}
filter: {taps: [1]}
sink: {type: null}
`)
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--num-samples", "1e3", "--block-size", "100",
		"--sink-type", "file", "--sink-path", out, "--no-paced", "--overrun", "drop", "--log-json")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 1000  out 1000  blocks 10 ") {
		t.Errorf("summary = %q", stdout)
	}
	if n := len(readF32(t, out)); n != 1000 {
		t.Errorf("output has %d samples, want 1000", n)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(stderr, "\n", 2)[0]), &line); err != nil || line["overrun"] != "drop" {
		t.Errorf("--log-json: first log line %q (%v)", stderr, err)
	}
}

func TestCountFlag(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4194304", 4194304, true},
		{"1e6", 1000000, true},
		{"1_000", 1000, true},
		{"2.5e3", 2500, true},
		{"1.5", 0, false},
		{"0", 0, false},
		{"-3", 0, false},
		{"1e30", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		var c countFlag
		err := c.Set(tt.in)
		if (err == nil) != tt.ok || (tt.ok && int64(c) != tt.want) {
			t.Errorf("Set(%q) = %d, %v; want %d ok=%v", tt.in, c, err, tt.want, tt.ok)
		}
	}
}

func TestMainExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("version exit = %d", code)
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"run", "-c", "does-not-exist.yaml"}, strings.NewReader(""), &out, &errb)
	if code != 1 {
		t.Errorf("exit = %d, want 1", code)
	}
	if n := strings.Count(errb.String(), "no such file"); n != 1 {
		t.Errorf("error printed %d times: %q", n, errb.String())
	}
}

func TestShippedConfigsBuild(t *testing.T) {
	// Every shipped config must get as far as building its source, taps and
	// sink settings; each runs 2048 samples on the CPU into a null sink.
	paths, err := filepath.Glob(filepath.Join("..", "..", "configs", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			ctx := context.Background()
			if strings.Contains(p, "zmq") {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			stdout, stderr, err := execute(t, ctx, strings.NewReader(strings.Repeat("\x00", 4096)),
				"run", "-c", p, "--num-samples", "2048", "--sink-type", "null", "--no-paced", "--backend", "cpu", "--log-level", "error")
			if strings.Contains(p, "file-sigmf") {
				// Its input is the quick start's output, absent in a clean tree.
				if err != nil && !strings.Contains(err.Error(), "source.path") {
					t.Errorf("run: %v", err)
				}
				return
			}
			if strings.Contains(p, "alsa") {
				// Needs a sound card; capture's tests run ALSA on a fake device.
				if err != nil && !strings.Contains(err.Error(), "source.device: capture: alsa:") {
					t.Errorf("run: %v", err)
				}
				return
			}
			if strings.Contains(p, "iio") {
				// Needs the IIO hardware; iio_test.go runs it on a fake device.
				if err != nil && !strings.Contains(err.Error(), "source.device: capture: iio:") {
					t.Errorf("run: %v", err)
				}
				return
			}
			if strings.Contains(p, "zmq") {
				// A zmq source waits for its sender: there is none here, so
				// the run is stopped as Ctrl-C stops it, cleanly. Its blocks
				// run against GNU Radio in zmq_gr_test.go.
				if err != nil || !strings.HasPrefix(stdout, "samples in 0  out 0 ") || !strings.Contains(stdout, "(interrupted)") {
					t.Errorf("run: %v, summary %q\n%s", err, stdout, stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			// Every input sample is filtered; the output count follows the
			// chain's rate (2048 for a plain filter, 256 for channelize ÷8
			// and probe-chain's fir ÷8, 64 frames of 64 channels for
			// filterbank ÷32, 32 of one kept channel for probe-bank ÷64).
			want := "samples in 2048  out 2048 "
			switch {
			case strings.Contains(p, "channelize") || strings.Contains(p, "live-control") || strings.Contains(p, "probe-chain"):
				want = "samples in 2048  out 256 "
			case strings.Contains(p, "filterbank"):
				want = "samples in 2048  out 64 "
			case strings.Contains(p, "probe-bank"):
				want = "samples in 2048  out 32 "
			}
			if !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "  filtered 2048  filter drops 0 ") {
				t.Errorf("summary = %q", stdout)
			}
		})
	}
}

// TestRunSummaryAccountsLossAtFilter fails the sink mid-run: the blocks
// left in the ring are reported as dropped at the filter, and every sample
// read is accounted for.
func TestRunSummaryAccountsLossAtFilter(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	cfg := writeConfig(t, `
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.5, num_samples: 4000000}
block_size: 1024
filter: {taps: [0.5, 0.5]}
sink: {type: file, path: /dev/full}
`)
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--log-level", "warn")
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err %v, want the sink's write error", err)
	}
	line := strings.TrimSpace(stdout)
	m, l := summaryRE.FindStringSubmatch(line), lossRE.FindStringSubmatch(line)
	if m == nil || l == nil {
		t.Fatalf("summary %q does not match", line)
	}
	n := func(s string) uint64 { v, _ := strconv.ParseUint(s, 10, 64); return v }
	in, drops, filtered, filterDrops := n(m[1]), n(m[5]), n(l[1]), n(l[3])
	if in != drops+filterDrops+filtered {
		t.Errorf("summary %q: in %d != capture drops %d + filter drops %d + filtered %d", line, in, drops, filterDrops, filtered)
	}
	if n(l[2]) > 0 && !strings.Contains(stderr, "dropped at the filter") {
		t.Errorf("stderr %q: want a warning about the blocks dropped at the filter", stderr)
	}
}

// TestRunEmptyInputWarns: an empty recording runs (its output is empty
// too) but says so, rather than passing unnoticed.
func TestRunEmptyInputWarns(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "empty.f32")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "source: {type: file, path: "+in+", format: rf32_le, sample_rate: 1e6}\nfilter: {taps: [1]}\nsink: {type: null}\n")
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "samples in 0 ") {
		t.Errorf("summary %q: want 0 samples in", stdout)
	}
	if !strings.Contains(stderr, "the source ended before its first sample: the output is empty") {
		t.Errorf("stderr does not warn of the empty input:\n%s", stderr)
	}
}

// TestDrainAbort: the limit cuts a drain short only while the run has not
// returned; stopped first (the drain ended in time, the sink is closing),
// it never fires.
func TestDrainAbort(t *testing.T) {
	for _, tt := range []struct {
		name      string
		drain     time.Duration // from the signal to the run's return
		wantLimit bool
	}{
		{"drain outlasts the limit", 100 * time.Millisecond, true},
		{"drain ends in time", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancelParent := context.WithCancel(context.Background())
			defer cancelParent()
			ctx, signal := context.WithCancel(context.WithValue(context.Background(), abortKey{}, context.Context(parent)))
			abort, stop := drainAbort(ctx, 20*time.Millisecond)
			signal()
			time.Sleep(tt.drain)
			stop()
			time.Sleep(50 * time.Millisecond) // past the limit: a timer left armed would fire now
			if got := errors.Is(context.Cause(abort), errDrainLimit); got != tt.wantLimit {
				t.Fatalf("cut by the limit: %v, want %v (cause %v)", got, tt.wantLimit, context.Cause(abort))
			}
		})
	}
}
