package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sigproc/sigproc/internal/sigmftest"
)

// pythonWith returns a python that runs imports, Debian's first; without
// one the test skips, or fails when CI=true.
func pythonWith(t *testing.T, imports string) string {
	t.Helper()
	pyMu.Lock()
	defer pyMu.Unlock()
	if p, ok := pyFound[imports]; ok {
		if p == "" {
			skipOrFail(t, "no python3 with "+imports+" (apt-get install python3-scipy python3-numpy)")
		}
		return p
	}
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", imports).Run() == nil {
			pyFound[imports] = p
			return p
		}
	}
	pyFound[imports] = ""
	skipOrFail(t, "no python3 with "+imports+" (apt-get install python3-scipy python3-numpy)")
	return ""
}

var (
	pyMu    sync.Mutex
	pyFound = map[string]string{}
)

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " [CI=true: this test must run]")
	}
	t.Skip(msg)
}

// TestRunStdoutPipe runs the sigproc binary in a shell pipe into python:
// stdout carries exactly the filtered samples (numpy's convolution of the
// input, same length, nothing else), the summary goes to stderr.
func TestRunStdoutPipe(t *testing.T) {
	py := pythonWith(t, "import numpy")
	bin := buildBinary(t)
	dir := t.TempDir()
	const n = 50000
	x := make([]float32, 2*n) // complex, 2 channels: frames of I0 Q0 I1 Q1
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.01)) * float32(1+i%4)
	}
	writeF32(t, filepath.Join(dir, "x.cf32"), x)
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(`source: {type: file, path: x.cf32, format: cf32_le, sample_rate: 1e6, channels: 2}
block_size: 1000
filter: {taps: [0.25, 0.5, 0.125]}
sink: {type: file, path: out.cf32}
`), 0o644)
	script := `
import sys, numpy as np
y = np.frombuffer(sys.stdin.buffer.read(), dtype='<f4')
x = np.fromfile(sys.argv[1], dtype='<f4').astype(np.float64).reshape(-1, 2, 2)
h = np.array([0.25, 0.5, 0.125])
want = np.empty_like(x)
for c in range(2):
    z = x[:, c, 0] + 1j * x[:, c, 1]
    w = np.convolve(z, h)[:len(z)]
    want[:, c, 0], want[:, c, 1] = w.real, w.imag
want = want.reshape(-1)
assert y.size == want.size, (y.size, want.size)
err = np.max(np.abs(y - want))
assert err < 1e-5, err
print("ok", y.size, err)
`
	cmd := exec.Command("/bin/sh", "-c", `"$0" run "$1" --sink-path - --log-level info | "$2" -c "$3" "$4"`,
		bin, cfg, py, script, filepath.Join(dir, "x.cf32"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pipe: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	if !strings.HasPrefix(string(out), fmt.Sprintf("ok %d ", 2*n)) {
		t.Errorf("python: %s", out)
	}
	if !strings.Contains(stderr.String(), "samples in 25000  out 25000") || !strings.Contains(stderr.String(), "starting") {
		t.Errorf("summary and logs not on stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out.cf32")); err == nil {
		t.Error("the config's sink path was written although --sink-path - was given")
	}
}

// TestRunWAVOutputReadByPython writes WAV files in every format and reads
// them back with readers sigproc did not write: Python's wave module
// (PCM, up to two channels) and scipy.io.wavfile (all of them).
func TestRunWAVOutputReadByPython(t *testing.T) {
	py := pythonWith(t, "import wave, numpy, scipy.io.wavfile")
	dir := t.TempDir()
	const n = 3000
	for _, tc := range []struct {
		format string
		ch     int
		cplx   bool
		src    string
	}{
		{"pcm16", 1, false, "rf32_le"},
		{"pcm24", 2, false, "rf32_le"},
		{"pcm16", 1, true, "cf32_le"}, // one complex channel: 2 WAV channels
		{"float32", 4, false, "rf32_le"},
		{"pcm24", 4, false, "rf32_le"},
	} {
		name := fmt.Sprintf("%s-%dch-%s", tc.format, tc.ch, tc.src)
		t.Run(name, func(t *testing.T) {
			vals := tc.ch
			if tc.cplx {
				vals *= 2
			}
			x := make([]float32, n*vals)
			for i := range x {
				x[i] = 1.2 * float32(math.Sin(float64(i)*0.37)) // beyond full scale at the peaks
			}
			in := filepath.Join(dir, name+".in")
			writeF32(t, in, x)
			out := filepath.Join(dir, name+".wav")
			cfg := writeConfig(t, fmt.Sprintf(`source: {type: file, path: %s, format: %s, sample_rate: 48000, channels: %d}
filter: {taps: [1]}
sink: {type: wav, path: %s, format: %s}
`, in, tc.src, tc.ch, out, tc.format))
			stdout, stderr, err := execute(t, nil, nil, "run", cfg, "--log-level", "warn")
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			clipped := 0
			for _, v := range x {
				if tc.format != "float32" && (v >= 1-0.5/(1<<15) || v < -1) {
					clipped++
				}
			}
			if tc.format != "float32" {
				if got := strings.TrimSpace(stdout[strings.LastIndex(stdout, "clipped ")+8:]); tc.format == "pcm16" && got != strconv.Itoa(clipped) {
					t.Errorf("summary %q, want clipped %d", stdout, clipped)
				}
				if !strings.Contains(stderr, "output clipping") {
					t.Errorf("no clipping warning: %s", stderr)
				}
			}
			script := `
import sys, json, wave, numpy as np, scipy.io.wavfile as wf
path, fmt = sys.argv[1], sys.argv[2]
rate, data = wf.read(path)
data = np.asarray(data).reshape(len(data), -1)
res = {"rate": int(rate), "channels": data.shape[1], "frames": data.shape[0], "dtype": str(data.dtype)}
if data.dtype.kind == 'i':
    bits = {"pcm16": 16, "pcm24": 24}[fmt]
    if data.dtype.itemsize == 4 and bits == 24:
        data = data >> 8  # scipy puts 24-bit samples in the top of int32
    res["values"] = (data.astype(np.float64) / 2**(bits-1)).reshape(-1).tolist()
else:
    res["values"] = data.astype(np.float64).reshape(-1).tolist()
if fmt != "float32" and data.shape[1] <= 2:
    with wave.open(path) as w:
        res["wave"] = [w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()]
print(json.dumps(res))
`
			b, err := exec.Command(py, "-c", script, out, tc.format).CombinedOutput()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, b)
			}
			var res struct {
				Rate, Channels, Frames int
				Values                 []float64
				Wave                   []int
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			if res.Rate != 48000 || res.Channels != vals || res.Frames != n {
				t.Fatalf("scipy read %+v", res)
			}
			if tc.format != "float32" && vals <= 2 {
				width := map[string]int{"pcm16": 2, "pcm24": 3}[tc.format]
				if len(res.Wave) != 4 || res.Wave[0] != vals || res.Wave[1] != width || res.Wave[2] != 48000 || res.Wave[3] != n {
					t.Errorf("wave read %v", res.Wave)
				}
			}
			step := map[string]float64{"pcm16": 1.0 / (1 << 15), "pcm24": 1.0 / (1 << 23), "float32": 0}[tc.format]
			for i, v := range x {
				want := float64(v)
				if step > 0 {
					want = math.Max(-1, math.Min(want, 1-step))
				}
				if math.Abs(res.Values[i]-want) > step/2+1e-7 {
					t.Fatalf("value %d = %v, want %v", i, res.Values[i], want)
				}
			}
		})
	}
}

// TestRunFourChannelsEachChecked filters a 4-channel file, a different
// signal on each channel, through a shift and a decimating FIR into a
// SigMF recording; each channel of the output is checked against a
// float64 reference computed from that channel alone, and the metadata
// against the SigMF schema.
func TestRunFourChannelsEachChecked(t *testing.T) {
	dir := t.TempDir()
	const n, rate, shift, m = 20011, 1e6, -125e3, 4
	taps := []float64{0.1, -0.2, 0.4, 0.8, 0.4, -0.2, 0.1}
	x := make([]float32, 4*n)
	for i := 0; i < n; i++ {
		x[4*i] = float32(math.Cos(2 * math.Pi * 1e3 * float64(i) / rate))
		x[4*i+1] = float32(i%17) / 17
		x[4*i+2] = float32(math.Sin(float64(i) * float64(i) * 1e-6))
		if i%100 == 0 {
			x[4*i+3] = 1
		}
	}
	writeF32(t, filepath.Join(dir, "x.f32"), x)
	base := filepath.Join(dir, "y")
	tapsYAML, _ := json.Marshal(taps)
	cfg := writeConfig(t, fmt.Sprintf(`source: {type: file, path: %s, format: rf32_le, sample_rate: 1e6, channels: 4}
block_size: 777
stages:
  - shift: {frequency_hz: %g}
  - fir: {taps: %s, decimate: %d}
sink: {type: sigmf, path: %s}
`, filepath.Join(dir, "x.f32"), shift, tapsYAML, m, base))
	stdout, stderr, err := execute(t, nil, nil, "run", cfg, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	nout := (n + m - 1) / m
	if !strings.HasPrefix(stdout, fmt.Sprintf("samples in %d  out %d ", n, nout)) {
		t.Errorf("summary %q", stdout)
	}
	y := readF32(t, base+".sigmf-data")
	if len(y) != nout*4*2 {
		t.Fatalf("%d values, want %d frames of 4 complex channels", len(y), nout)
	}
	for c := 0; c < 4; c++ {
		// Reference: shift, then y[k] = Σ h[j]·s[kM − j].
		s := make([]complex128, n)
		for i := range s {
			s[i] = complex(float64(x[4*i+c]), 0) * cmplx.Exp(complex(0, 2*math.Pi*shift*float64(i)/rate))
		}
		var worst float64
		for k := 0; k < nout; k++ {
			var acc complex128
			for j, h := range taps {
				if i := k*m - j; i >= 0 {
					acc += complex(h, 0) * s[i]
				}
			}
			got := complex(float64(y[(4*k+c)*2]), float64(y[(4*k+c)*2+1]))
			worst = math.Max(worst, cmplx.Abs(got-acc))
		}
		if worst > 2e-5 {
			t.Errorf("channel %d: max error %.3g", c, worst)
		}
	}
	sigmftest.ValidateFile(t, base+".sigmf-meta")
	meta, _ := os.ReadFile(base + ".sigmf-meta")
	if !strings.Contains(string(meta), `"core:num_channels": 4`) || !strings.Contains(string(meta), `"core:sample_rate": 250000`) {
		t.Errorf("meta:\n%s", meta)
	}
}

// TestRunCarriesSigMFMetadata: a SigMF recording in, a shift and a
// decimation by 8, a SigMF recording out: hw, author, description, centre
// frequency (f_c − f_shift), datetime and annotations (indices mapped
// through the decimation) carried; rate and datatype updated; valid
// against the SigMF schema.
func TestRunCarriesSigMFMetadata(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "rec")
	x := make([]float32, 2*8000)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	writeF32(t, in+".sigmf-data", x)
	os.WriteFile(in+".sigmf-meta", []byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":2000000,"core:version":"1.0.0",
  "core:hw":"HackRF One","core:author":"ops","core:description":"airband",
  "core:extensions":[{"name":"signal","version":"1.0.0","optional":true}]},
 "captures":[{"core:sample_start":0,"core:frequency":118000000,"core:datetime":"2026-05-01T12:00:00.125Z"}],
 "annotations":[{"core:sample_start":800,"core:sample_count":1600,"core:label":"call","signal:detail":{"type":"analog"}},
                {"core:sample_start":7992,"core:comment":"last"},
                {"core:sample_start":7999,"core:comment":"past the output's end: ceil(7999/8) = 1000"}]}`), 0o644)
	base := filepath.Join(dir, "out")
	cfg := writeConfig(t, fmt.Sprintf(`source: {type: file, path: %s.sigmf-meta}
stages:
  - shift: {frequency_hz: -250000}
  - fir: {taps: [0.5, 0.5], decimate: 8}
sink: {type: sigmf, path: %s, format: ci16_le}
`, in, base))
	if _, stderr, err := execute(t, nil, nil, "run", cfg, "--log-level", "warn"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sigmftest.ValidateFile(t, base+".sigmf-meta")
	raw, _ := os.ReadFile(base + ".sigmf-meta")
	var doc struct {
		Global      map[string]any   `json:"global"`
		Captures    []map[string]any `json:"captures"`
		Annotations []map[string]any `json:"annotations"`
	}
	json.Unmarshal(raw, &doc)
	g := doc.Global
	if g["core:hw"] != "HackRF One" || g["core:author"] != "ops" || !strings.HasPrefix(g["core:description"].(string), "airband (sigproc") ||
		g["core:sample_rate"] != 250000.0 || g["core:datatype"] != "ci16_le" {
		t.Errorf("global %v", g)
	}
	if c := doc.Captures[0]; c["core:frequency"] != 118.25e6 || c["core:datetime"] != "2026-05-01T12:00:00.125Z" {
		t.Errorf("captures[0] %v", c)
	}
	if len(doc.Annotations) != 2 {
		t.Fatalf("annotations %v", doc.Annotations)
	}
	a, b := doc.Annotations[0], doc.Annotations[1]
	if a["core:sample_start"] != 100.0 || a["core:sample_count"] != 200.0 || a["core:label"] != "call" || a["signal:detail"] == nil {
		t.Errorf("annotation %v (800/8 = 100, 1600/8 = 200)", a)
	}
	if b["core:sample_start"] != 999.0 || b["core:comment"] != "last" { // 7992/8
		t.Errorf("annotation %v", b)
	}
}

// TestRunSDRBytes: rtl_sdr's cu8 in, HackRF's cs8 out.
func TestRunSDRBytes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.cu8")
	os.WriteFile(in, []byte{0, 255, 128, 127, 64, 192}, 0o644)
	out := filepath.Join(dir, "y.cs8")
	cfg := writeConfig(t, fmt.Sprintf(`source: {type: file, path: %s, format: cu8, sample_rate: 2.4e6}
filter: {taps: [1]}
sink: {type: file, path: %s, format: cs8}
`, in, out))
	stdout, stderr, err := execute(t, nil, nil, "run", cfg, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	got, _ := os.ReadFile(out)
	// (v − 127.5)/127.5 × 128, rounded: −128, 128 → clipped to 127, 1, −1, −64, 65.
	want := []int8{-128, 127, 1, -1, -64, 65}
	for i, w := range want {
		if int8(got[i]) != w {
			t.Errorf("byte %d = %d, want %d (all: %v)", i, int8(got[i]), w, got)
		}
	}
	if !strings.Contains(stdout, "clipped 1") {
		t.Errorf("summary %q", stdout)
	}
}

// TestRunRefusesRawOnContainers: a raw format on a WAV file or SigMF
// metadata is refused with the reason.
func TestRunRefusesRawOnContainers(t *testing.T) {
	dir := t.TempDir()
	wav := filepath.Join(dir, "a.bin")
	os.WriteFile(wav, append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 40)...), 0o644)
	meta := filepath.Join(dir, "b.sigmf-data")
	os.WriteFile(meta, []byte(`{"global":{"core:datatype":"ri16_le"}}`), 0o644)
	for path, want := range map[string]string{wav: "is a WAV file", meta: "is SigMF metadata"} {
		cfg := writeConfig(t, fmt.Sprintf("source: {type: file, path: %s, format: ri16_le, sample_rate: 8000}\nfilter: {taps: [1]}\nsink: {type: null}\n", path))
		if _, _, err := execute(t, nil, nil, "run", cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestRunFlags: the config as the argument, --input, --metrics-listen,
// and --duration / --num-samples replacing the file's other bound.
func TestRunFlags(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.f32"), filepath.Join(dir, "b.f32")
	writeF32(t, a, make([]float32, 1000))
	writeF32(t, b, make([]float32, 3000))
	cfg := writeConfig(t, fmt.Sprintf("source: {type: file, path: %s, format: rf32_le, sample_rate: 1e6, num_samples: 900}\nfilter: {taps: [1]}\nsink: {type: null}\n", a))
	cfgDur := writeConfig(t, fmt.Sprintf("source: {type: file, path: %s, format: rf32_le, sample_rate: 1e6, duration_s: 0.0005}\nfilter: {taps: [1]}\nsink: {type: null}\n", a))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", cfg}, "samples in 900 "},
		{[]string{"run", cfg, "--input", b, "--num-samples", "2500"}, "samples in 2500 "},
		{[]string{"run", cfg, "--duration", "2ms", "--input", b}, "samples in 2000 "}, // replaces num_samples
		{[]string{"run", cfgDur, "--num-samples", "700"}, "samples in 700 "},          // replaces duration_s
		{[]string{"run", "-c", cfgDur, "--duration", "0.25ms"}, "samples in 250 "},
	} {
		stdout, stderr, err := execute(t, nil, nil, append(tc.args, "--log-level", "warn")...)
		if err != nil || !strings.HasPrefix(stdout, tc.want) {
			t.Errorf("%v: %q %v\n%s", tc.args, stdout, err, stderr)
		}
	}
	if _, _, err := execute(t, nil, nil, "run", cfg, "--duration", "0s"); err == nil || !strings.Contains(err.Error(), "--duration: must be > 0") {
		t.Errorf("--duration 0s (no bound, where a bound was asked for): %v", err)
	}
	ring := writeConfig(t, "source: {type: synthetic, sample_rate: 1e6, signal: tone, frequency_hz: 1000, num_samples: 1000}\nring_slots: 65536\nfilter: {taps: [1]}\nsink: {type: null}\n")
	if _, _, err := execute(t, nil, nil, "run", ring); err == nil || !strings.Contains(err.Error(), "ring_slots: 65536 slots of the") || !strings.Contains(err.Error(), "lower ring_slots or give a smaller block_size") {
		t.Errorf("ring_slots past the ring's limit with the block chosen: %v", err)
	}
	_, _, err := execute(t, nil, nil, "run", cfg, "--metrics-listen", "nohost")
	if err == nil || !strings.Contains(err.Error(), "--metrics-listen: metrics.listen: want host:port") {
		t.Errorf("bad --metrics-listen: %v", err)
	}
	addr := freeLoopbackAddr(t)
	_, stderr, err := execute(t, nil, nil, "run", cfg, "--metrics-listen", addr)
	if err != nil || !strings.Contains(stderr, "http://"+addr+"/metrics") {
		t.Errorf("--metrics-listen %s: %v\n%s", addr, err, stderr)
	}
	synth := writeConfig(t, "source: {type: synthetic, sample_rate: 1e3, signal: tone, frequency_hz: 1, num_samples: 10}\nfilter: {taps: [1]}\nsink: {type: null}\n")
	if _, _, err := execute(t, nil, nil, "run", synth, "--input", a); err == nil || !strings.Contains(err.Error(), "--input: the config's source is synthetic") {
		t.Errorf("--input on synthetic: %v", err)
	}
}

// TestRunStdinWAVPipe pipes a WAV stream that Python's wave module writes
// into `sigproc run` (source type stdin, format wav): the header gives the
// rate and the two channels, and every sample arrives scaled by 1/32768.
func TestRunStdinWAVPipe(t *testing.T) {
	py := pythonWith(t, "import wave")
	bin := buildBinary(t)
	dir := t.TempDir()
	const frames = 30000
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(`source: {type: stdin, format: wav}
block_size: 1000
filter: {taps: [1]}
sink: {type: file, path: out.f32, format: rf32_le}
`), 0o644)
	script := `
import sys, wave, struct
n = int(sys.argv[1])
w = wave.open(sys.stdout.buffer, "wb")
w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000); w.setnframes(n)
w.writeframes(b"".join(struct.pack("<hh", (i * 7) % 65536 - 32768, -((i * 3) % 32768)) for i in range(n)))
w.close()
`
	cmd := exec.Command("/bin/sh", "-c", `"$0" -c "$1" "$2" | "$3" run "$4"`, py, script, fmt.Sprint(frames), bin, cfg)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pipe: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("samples in %d  out %d", frames, frames)) {
		t.Errorf("summary: %s", out)
	}
	y := readF32(t, filepath.Join(dir, "out.f32"))
	if len(y) != 2*frames {
		t.Fatalf("%d values out, want %d", len(y), 2*frames)
	}
	for i := range frames {
		a, b := float32((i*7)%65536-32768)/32768, float32(-((i*3)%32768))/32768
		if y[2*i] != a || y[2*i+1] != b {
			t.Fatalf("frame %d = %g %g, want %g %g", i, y[2*i], y[2*i+1], a, b)
		}
	}
}
