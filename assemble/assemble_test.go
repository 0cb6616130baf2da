package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// writeConfig writes a config into dir and loads it.
func writeConfig(t *testing.T, dir, body string) (*config.Config, string) {
	t.Helper()
	path := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

const tone = `source: {type: synthetic, signal: tone, frequency_hz: 1000, sample_rate: 48000, num_samples: 4096}
filter: {taps: [0.25, 0.5, 0.25]}
block_size: 256
`

// TestOpenOrder checks the safety order: an output that is an input is
// refused before any backend starts, and an existing output is never
// touched before Started, nor created by Open.
func TestOpenOrder(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "in.f32")
	if err := os.WriteFile(raw, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "old.f32")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body, wantErr string
	}{
		{"output is the input", "source: {type: file, path: in.f32, format: rf32_le, sample_rate: 1000}\nfilter: {taps: [1]}\nsink: {type: file, path: " + raw + ", overwrite: true}\n", "input"},
		{"output is the config", tone + "sink: {type: file, path: " + filepath.Join(dir, "run.yaml") + ", overwrite: true}\n", "input"},
		{"existing output", tone + "sink: {type: file, path: " + existing + "}\n", "exists"},
		{"unknown backend closes the source", tone + "sink: {type: null}\n", "unknown backend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, path := writeConfig(t, dir, c.body)
			if strings.HasPrefix(c.wantErr, "unknown backend") {
				cfg.Backend = "tpu"
			}
			r, err := Open(context.Background(), cfg, Params{ConfigPath: path, Log: zerolog.Nop()})
			if err == nil {
				r.Close()
				t.Fatalf("Open succeeded, want an error containing %q", c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %q, want it to contain %q", err, c.wantErr)
			}
			if b, _ := os.ReadFile(existing); string(b) != "keep" {
				t.Fatalf("existing output changed to %q", b)
			}
		})
	}
}

// TestOpenCreatesOutputAtStarted checks that Open plans the output and
// Started creates it, and that the run's pipeline config follows the
// config and the source.
func TestOpenCreatesOutputAtStarted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "y.f32")
	cfg, path := writeConfig(t, dir, tone+"overrun: drop\nring_slots: 8\nsink: {type: file, path: "+out+"}\n")
	r, err := Open(context.Background(), cfg, Params{ConfigPath: path, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("output exists before Started: %v", err)
	}
	want := pipeline.Config{BlockSize: 256, Channels: 1, Slots: 8, Policy: pipeline.PolicyDrop, MaxSamples: 4096}
	if got := r.Pipeline; got.BlockSize != want.BlockSize || got.Channels != want.Channels || got.Slots != want.Slots ||
		got.Policy != want.Policy || got.MaxSamples != want.MaxSamples || got.Complex || got.OutComplex {
		t.Fatalf("pipeline config %+v, want %+v", got, want)
	}
	if err := r.Started(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := pipeline.Stats{}
	if err := r.Finish(&st); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("output not created by Started: %v", err)
	}
}

func TestInputs(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"synthetic", tone, []string{"run.yaml"}},
		{"file and taps", "source: {type: file, path: in.f32, format: rf32_le, sample_rate: 1000}\nfilter: {taps_file: taps.txt}\n", []string{"run.yaml", "in.f32", "taps.txt"}},
		{"stdin", "source: {type: stdin, format: rf32_le, sample_rate: 1000}\nfilter: {taps: [1]}\n", []string{"run.yaml", "/dev/stdin"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(c.body+"sink: {type: null}\n"), "run.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := Inputs(cfg, "run.yaml", nil)
			for i := range got {
				got[i] = filepath.Base(got[i])
				if got[i] == "stdin" {
					got[i] = "/dev/stdin"
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("inputs %v, want %v", got, c.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	cfg, err := config.Parse([]byte(tone+"sink: {type: file, path: out/y.f32}\n"), "run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chain, err := cfg.Chain(48000, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{DescribeSource(cfg), "synthetic tone"},
		{DescribeSink(cfg, "rf32_le"), "file out/y.f32 (rf32_le)"},
		{DescribeFilter(cfg, chain), "3 inline taps"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestProbeTaps checks the probe's filter: the config's, a designed
// lowpass of n taps, or 64 taps by default.
func TestProbeTaps(t *testing.T) {
	cfg, err := config.Parse([]byte(tone+"sink: {type: null}\n"), "run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		have bool
		n    int
		want int
	}{{true, 0, 3}, {true, 17, 17}, {false, 0, 64}, {false, 2, 2}} {
		taps, err := ProbeTaps(cfg, c.have, c.n, 1)
		if err != nil || len(taps) != c.want {
			t.Errorf("config %v, n %d: %d taps (%v), want %d", c.have, c.n, len(taps), err, c.want)
		}
	}
	chain, err := cfg.Chain(48000, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PathBackend("auto", cfg, chain, 256, zerolog.Nop(), nil); err == nil {
		t.Error("path auto accepted")
	}
}

// TestStoredFrameBytes: a GPU's block is sized by what crosses PCIe, the
// stored bytes of an integer recording, not its float32 frames.
func TestStoredFrameBytes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		format string
		want   int
	}{{"cf32_le", 8}, {"rf32_le", 4}, {"cs8", 2}, {"cu8", 2}, {"ci16_le", 4}, {"ri16_le", 2}} {
		path := filepath.Join(dir, c.format)
		if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := capture.OpenFile(path, c.format, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		if got := storedFrameBytes(src, src.Info()); got != c.want {
			t.Errorf("%s: %d bytes a frame, want %d", c.format, got, c.want)
		}
		src.Close()
	}
}

// TestSourceBlock checks that the block follows the source when
// block_size is not given: large blocks for a GPU on an unpaced source,
// the default everywhere else, and block_size (from the file or the flag)
// always.
func TestSourceBlock(t *testing.T) {
	const file = "source: {type: file, path: in.f32, format: cf32_le, sample_rate: 1000}\nfilter: {taps: [1]}\nsink: {type: null}\n"
	const synth = "source: {type: synthetic, signal: tone, frequency_hz: 10, sample_rate: 1000%s}\nfilter: {taps: [1]}\nsink: {type: null}\n"
	cplx := capture.Info{SampleRate: 1000, Complex: true}
	cases := []struct {
		name, body, backend string
		info                capture.Info
		flag                int // --block-size, 0 = none
		procs               int // GOMAXPROCS, 0 = 2
		want                int
		bytes               int // a value as stored, 0 = 4 (float32)
	}{
		{"file on cuda: 16 MiB of cf32", file, "cuda", cplx, 0, 0, 2 << 20, 0},
		{"real file on cuda: 16 MiB of rf32", file, "cuda", capture.Info{SampleRate: 1000}, 0, 0, 4 << 20, 0},
		{"cs8 on cuda: 16 MiB of float32, 4 MiB as stored", file, "cuda", cplx, 0, 0, 2 << 20, 1},
		{"ci16 on cuda: 16 MiB of float32, 8 MiB as stored", file, "cuda", cplx, 0, 0, 2 << 20, 2},
		{"ri16 on cuda: 16 MiB of float32", file, "cuda", capture.Info{SampleRate: 1000}, 0, 0, 4 << 20, 2},
		{"4 complex channels on cuda", file, "cuda", capture.Info{SampleRate: 1000, Complex: true, NumChannels: 4}, 0, 0, 512 << 10, 0},
		{"64 complex channels on cuda: no fewer frames than on the cpu", file, "cuda", capture.Info{SampleRate: 1000, Complex: true, NumChannels: 64}, 0, 0, CPUThroughputBlock, 0},
		{"file on one cpu: 64 Ki frames", file, "cpu", cplx, 0, 1, CPUThroughputBlock, 0},
		{"file on 2 cpus: 8 segments of 32 Ki frames", file, "cpu", cplx, 0, 0, 256 << 10, 0},
		{"file on 3 cpus: 12 segments, the nearest power of two", file, "cpu", cplx, 0, 3, 512 << 10, 0},
		{"file on 4 cpus: 8 segments a core", file, "cpu", cplx, 0, 4, 1 << 20, 0},
		{"file on 8 cpus", file, "cpu", cplx, 0, 8, 2 << 20, 0},
		{"file on 9 cpus: the nearest power of two", file, "cpu", cplx, 0, 9, 2 << 20, 0},
		{"file on 12 cpus: the nearest power of two", file, "cpu", cplx, 0, 12, 4 << 20, 0},
		{"file on 16 cpus", file, "cpu", cplx, 0, 16, 4 << 20, 0},
		{"4 complex channels on 16 cpus: 64 MiB of float32", file, "cpu", capture.Info{SampleRate: 1000, Complex: true, NumChannels: 4}, 0, 16, 2 << 20, 0},
		{"file on 24 cpus: cut for 16 goroutines at most", file, "cpu", cplx, 0, 24, 4 << 20, 0},
		{"64 complex channels on 16 cpus", file, "cuda", capture.Info{SampleRate: 1000, Complex: true, NumChannels: 64}, 0, 16, CPUThroughputBlock, 0},
		{"1024 complex channels on 2 cpus: 64 MiB of float32", file, "cpu", capture.Info{SampleRate: 1000, Complex: true, NumChannels: 1024}, 0, 0, 8192, 0},
		{"block_size in the file wins", "block_size: 4096\n" + file, "cuda", cplx, 0, 0, 4096, 0},
		{"--block-size wins", file, "cuda", cplx, 1024, 0, 1024, 0},
		{"unpaced synthetic on cuda", fmt.Sprintf(synth, ""), "cuda", cplx, 0, 0, 2 << 20, 0},
		{"paced synthetic keeps small blocks", fmt.Sprintf(synth, ", paced: true"), "cuda", cplx, 0, 0, config.DefaultBlockSize, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(c.body), "run.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if c.flag > 0 {
				cfg.BlockSize = c.flag
				cfg.MarkOverride("block_size", "--block-size")
			}
			procs := c.procs
			if procs == 0 {
				procs = 2
			}
			stored := 4 * c.info.Channels()
			if c.bytes > 0 {
				stored = c.bytes * c.info.Channels()
			}
			got, why := sourceBlock(cfg, c.backend, c.info, stored, procs, stage.Chain{})
			if got != c.want {
				t.Fatalf("block %d (%q), want %d", got, why, c.want)
			}
			if (got != cfg.BlockSize) != (why != "") {
				t.Fatalf("block %d from %d with reason %q", got, cfg.BlockSize, why)
			}
		})
	}
}

// TestSourceBlockFollowsOutput: a chain that outputs more than it reads (a
// channelizer of 4096 channels, no decimation: 32 KiB a frame) gets
// blocks whose output fits MaxBlockBytes; one that outputs less keeps
// the source's.
func TestSourceBlockFollowsOutput(t *testing.T) {
	cfg, err := config.Parse([]byte("source: {type: file, path: in.f32, format: cf32_le, sample_rate: 1000}\nfilter: {taps: [1]}\nsink: {type: null}\n"), "run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	info := capture.Info{SampleRate: 1000, Complex: true}
	for _, c := range []struct {
		bank, decimate, want int
	}{{4096, 1, 2048}, {4096, 4096, 256 << 10}, {64, 32, 256 << 10}} {
		ch := stage.Chain{SampleRate: 1000, Complex: true, Stages: []stage.Stage{stage.NewChannelize([]float32{1}, c.bank, c.decimate)}}
		if got, _ := sourceBlock(cfg, "cpu", info, 8, 2, ch); got != c.want {
			t.Errorf("channelize %d ÷%d: block %d, want %d", c.bank, c.decimate, got, c.want)
		}
	}
}

// TestOpenRingViews: a CPU run's default ring is sized for views only
// where its blocks may be views of a float32 file, and the ring is not
// to be locked (a locked ring is faulted in whole).
func TestOpenRingViews(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"in.cf32": 1 << 20, "in.cs8": 1 << 18} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const cf32 = "source: {type: file, path: in.cf32, format: cf32_le, sample_rate: 1e6}\nfilter: {taps: [1]}\nsink: {type: null}\n"
	for _, tt := range []struct {
		name, body string
		views      bool
	}{
		{"float32 file", cf32, true},
		{"cs8 file: decoded into the ring", "source: {type: file, path: in.cs8, format: cs8, sample_rate: 1e6}\nfilter: {taps: [1]}\nsink: {type: null}\n", false},
		{"locked ring", cf32 + "realtime: {mlock: true}\n", false},
		{"synthetic", tone + "sink: {type: null}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, path := writeConfig(t, dir, tt.body)
			r, err := Open(context.Background(), cfg, Params{ConfigPath: path, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Pipeline.Source.Views; got != tt.views {
				t.Errorf("Views = %v, want %v", got, tt.views)
			}
			if r.Pipeline.Slots != 0 {
				t.Errorf("Slots = %d, want 0: the default is left to pipeline.Run", r.Pipeline.Slots)
			}
		})
	}
}
