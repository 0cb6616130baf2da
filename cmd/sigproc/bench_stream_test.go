package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/gpubench"
)

func TestBenchStreamFlagErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(in, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	tapsFile := filepath.Join(dir, "taps.txt")
	if err := os.WriteFile(tapsFile, []byte("0.5\n0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", "tape"}, `--source "tape"`},
		{[]string{"--source", "file"}, "needs --input"},
		{[]string{"--source", "memory", "--input", in}, "--input is for --source file"},
		{[]string{"--output", filepath.Join(dir, "y.f32")}, "--output is for the synthetic and file sources"},
		{[]string{"--size", "2B"}, "less than one sample"},
		{[]string{"--size", "0"}, "invalid size"},
		{[]string{"--chunk", "2GiB"}, "--chunk"},
		{[]string{"--streams", "0"}, "--streams must be"},
		{[]string{"--streams", "65"}, "--streams must be"},
		{[]string{"--buffers", "1"}, "--buffers must be"},
		{[]string{"--buffers", "2", "--streams", "3"}, "at least --streams buffers"},
		{[]string{"--taps", "0"}, "--taps 0 out of range"},
		{[]string{"--taps", "9000"}, "--taps 9000 out of range"},
		{[]string{"--taps", "16", "--taps-file", tapsFile}, "not both"},
		{[]string{"--verify", "maybe"}, `--verify "maybe"`},
		{[]string{"--verify", "all", "--source", "synthetic"}, "--verify all needs --source memory"},
		{[]string{"--ref-reps", "-1"}, "--ref-reps"},
		{[]string{"--ref-size", "1000"}, "--ref-size"},
		{[]string{"--device", "-1"}, "--device must be"},
		{[]string{"extra"}, "unknown command"},
	} {
		_, _, err := execute(t, nil, nil, append([]string{"bench", "stream"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchStreamInputImpliesFile(t *testing.T) {
	o := benchStreamOptions{source: streamSourceMemory, input: "x.f32", chunk: 1024, streams: 3, taps: 129, verify: verifySample}
	if _, err := o.resolve(); err != nil || o.source != streamSourceFile {
		t.Fatalf("source %q, err %v; want file", o.source, err)
	}
}

func TestBenchStreamPureBuildSaysBuiltWithoutCUDA(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, _, err := execute(t, nil, nil, "bench", "stream", "--size", "1MiB")
	if err == nil || !strings.Contains(err.Error(), "built without CUDA") {
		t.Fatalf("got %v, want the built-without-CUDA error", err)
	}
}

func TestBenchStreamHelpTeaches(t *testing.T) {
	out, _, err := execute(t, nil, nil, "bench", "stream", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pinned", "cuMemHostRegister", "--source", "memory", "synthetic", "--input",
		"--timeline", "--verify", "80 %", "Ctrl-C", "Examples:", "bounded"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestSampleRanges(t *testing.T) {
	for _, tc := range []struct {
		samples, chunk int
		want           [][2]int
	}{
		{100, 10, [][2]int{{0, 20}, {50, 60}, {80, 100}}},
		{95, 10, [][2]int{{0, 20}, {50, 60}, {80, 95}}},
		{30, 10, [][2]int{{0, 30}}},
		{5, 10, [][2]int{{0, 5}}},
	} {
		if got := sampleRanges(tc.samples, tc.chunk); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("sampleRanges(%d, %d) = %v, want %v", tc.samples, tc.chunk, got, tc.want)
		}
	}
}

func TestVerifyMemory(t *testing.T) {
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: 33})
	if err != nil {
		t.Fatal(err)
	}
	for _, complex := range []bool{false, true} {
		x := make([]float32, 2*5000)
		fillNoise(x, 3)
		y := filter.Convolve(taps, x, complex)
		for _, all := range []bool{false, true} {
			e, err := verifyMemory(taps, x, y, complex, 700, all)
			if err != nil || e > 1e-6 {
				t.Fatalf("complex=%v all=%v: error %g, %v", complex, all, e, err)
			}
		}
		// A wrong sample in the last chunk (checked by "sample") fails.
		bad := append([]float32(nil), y...)
		bad[len(bad)-3] += 1
		if e, _ := verifyMemory(taps, x, bad, complex, 700, false); e < 1e-3 {
			t.Fatalf("complex=%v: corruption not caught (%g)", complex, e)
		}
	}
}

func TestFillNoiseDeterministic(t *testing.T) {
	a := make([]float32, 3<<20+5)
	b := make([]float32, len(a))
	fillNoise(a, 9)
	fillNoise(b, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different noise")
	}
	for _, v := range a {
		if v < -1 || v >= 1 {
			t.Fatalf("value %v out of [-1, 1)", v)
		}
	}
	fillNoise(b, 10)
	if reflect.DeepEqual(a, b) {
		t.Fatal("different seeds, same noise")
	}
}

func sampleStreamReport() benchStreamReport {
	ok := true
	var tl []gpubench.ChunkTiming
	for k := range 20 {
		s := float64(k)
		tl = append(tl, gpubench.ChunkTiming{Chunk: k, Stream: k % 3, H2D: [2]float64{s, s + 1}, Kernel: [2]float64{s + 1, s + 1.1}, D2H: [2]float64{s + 1.1, s + 2}})
	}
	return benchStreamReport{
		StreamResult: gpubench.StreamResult{
			Device: "NVIDIA H200 (device 0)", Mode: gpubench.StreamModeMemory, Taps: 129, ChunkSamples: 1 << 24,
			Streams: 3, Buffers: 6, Chunks: 20, SamplesIn: 20 << 24, SamplesOut: 20 << 24,
			WallSeconds: 0.1, GPUSeconds: 0.099, InGiBps: 46.2, InOutGiBps: 92.4, GSps: 12.4,
			PinnedH2D: &gpubench.CopyResult{Bytes: 256 << 20, Reps: 10, GiBps: 51.5}, PinnedFraction: 0.897,
			Stages:  gpubench.StageSummary{H2D: gpubench.StageStats{BusyMs: 95, BusyFraction: 0.96}},
			Overlap: 1.9, Timeline: tl,
		},
		Source: "memory: 4.00 GiB", Sink: "memory", Verify: verifySample, VerifyErr: 2e-7, Verified: &ok, Target: streamTarget,
	}
}

func TestWriteStreamText(t *testing.T) {
	var b bytes.Buffer
	if err := writeStreamText(&b, sampleStreamReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"0 dropped: ok", "46.20 GiB/s in", "stream = 89.7% of pinned H2D", "target 80%: pass",
		"H2D    busy", "96.0%", "overlap: 1.90", "verify (sample)", "pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestReportStreamFiles(t *testing.T) {
	dir := t.TempDir()
	o := benchStreamOptions{json: filepath.Join(dir, "s.json"), timeline: filepath.Join(dir, "tl.json"), timelinePNG: filepath.Join(dir, "tl.png")}
	var b bytes.Buffer
	if err := reportStream(o, sampleStreamReport(), &b); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(o.json)
	if err != nil || !bytes.Contains(js, []byte(`"pinned_fraction": 0.897`)) || bytes.Contains(js, []byte(`"timeline"`)) {
		t.Fatalf("json: %v\n%s", err, js)
	}
	tl, err := os.ReadFile(o.timeline)
	if err != nil || !bytes.Contains(tl, []byte(`"h2d_ms"`)) || bytes.Count(tl, []byte(`"chunk":`)) != 20 {
		t.Fatalf("timeline: %v\n%s", err, tl)
	}
	if st, err := os.Stat(o.timelinePNG); err != nil || st.Size() == 0 {
		t.Fatalf("png: %v", err)
	}
	if !strings.Contains(b.String(), "stream = ") {
		t.Fatalf("text not printed with --json FILE:\n%s", b.String())
	}
	// --json - prints JSON instead of the text.
	b.Reset()
	if err := reportStream(benchStreamOptions{json: "-"}, sampleStreamReport(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "{") {
		t.Fatalf("--json - printed:\n%s", b.String())
	}
}
