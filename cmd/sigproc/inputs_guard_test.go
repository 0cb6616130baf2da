package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsNeverInputs (issue 27 item 2): every file a command reads —
// the config, the source, each stage's taps_file, design -c's config,
// bench's --input, --taps-file and PTX — is refused as any of its outputs
// (run's sink, design --response, probe --json/--png, bench --output,
// --png, --json), named by path, "./", "..", a symlink or a hard link,
// before anything is opened for writing: every input keeps its bytes, and
// no output is created.
func TestOutputsNeverInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("in.f32", strings.Repeat("\x00\x00\x80\x3f", 960)) // 960 × 1.0
	write("taps.txt", "0.25\n0.5\n0.25\n")
	write("rtaps.txt", "1\n1\n1\n")
	write("k.ptx", "// not a kernel\n")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	cfg := write("c.yaml", `source: {type: file, path: in.f32, format: rf32_le, sample_rate: 48000}
stages:
  - fir: {design: {type: lowpass, cutoff_hz: 4000, num_taps: 31}, decimate: 2}
  - fir: {taps_file: taps.txt}
  - resample: {up: 2, down: 3, taps_file: rtaps.txt}
sink: {type: file, path: out.f32, overwrite: true}
`)
	if err := os.Symlink("taps.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "rtaps.txt"), filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(cfg, filepath.Join(dir, "hard.yaml")); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{}
	for _, n := range []string{"in.f32", "taps.txt", "rtaps.txt", "k.ptx", "c.yaml"} {
		inputs[n], _ = os.ReadFile(filepath.Join(dir, n))
	}
	const isInput, same = "refusing to write over an input", "are the same file"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run: a fir stage's taps_file, ./", []string{"run", "c.yaml", "--sink-path", "./taps.txt"}, isInput},
		{"run: a fir stage's taps_file, sub/..", []string{"run", "c.yaml", "--sink-path", "sub/../taps.txt"}, isInput},
		{"run: a fir stage's taps_file, symlink", []string{"run", "c.yaml", "--sink-path", "link.txt"}, isInput},
		{"run: the resample stage's taps_file, hard link", []string{"run", "c.yaml", "--sink-path", "hard.txt"}, isInput},
		{"run: the resample stage's taps_file, absolute", []string{"run", "c.yaml", "--sink-path", filepath.Join(dir, "rtaps.txt")}, isInput},
		{"run: the config, hard link", []string{"run", "c.yaml", "--sink-path", "hard.yaml"}, isInput},
		{"run: the config, as a wav sink", []string{"run", "c.yaml", "--sink-type", "wav", "--sink-path", "./c.yaml"}, isInput},
		{"design -c: --response is the config", []string{"design", "-c", "c.yaml", "--response", "./c.yaml"}, isInput},
		{"design -c: --response is a stage's taps_file", []string{"design", "-c", "c.yaml", "--response", "link.txt"}, isInput},
		{"design -c: --response is the source", []string{"design", "-c", "c.yaml", "--response", "sub/../in.f32"}, isInput},
		{"probe -c: --json is the config", []string{"probe", "-c", "hard.yaml", "--json", "c.yaml"}, isInput},
		{"probe -c: --png is a taps_file", []string{"probe", "-c", "c.yaml", "--png", "hard.txt"}, isInput},
		{"probe: --json and --png the same", []string{"probe", "--json", "p.out", "--png", "./p.out"}, same},
		{"bench cpu: --output is --taps-file", []string{"bench", "cpu", "--taps-file", "taps.txt", "--output", "link.txt"}, isInput},
		{"bench cpu: --output is --input", []string{"bench", "cpu", "--input", "in.f32", "--output", "./in.f32"}, isInput},
		{"bench cpu: --json is --input", []string{"bench", "cpu", "--input", "in.f32", "--json", "./in.f32"}, isInput},
		{"bench cpu: --output and --json the same", []string{"bench", "cpu", "--output", "c.out", "--json=c.out"}, same},
		{"bench chain: --json is --taps-file", []string{"bench", "chain", "--taps-file", "rtaps.txt", "--json", "hard.txt"}, isInput},
		{"bench fir: --json is --ptx", []string{"bench", "fir", "--ptx", "k.ptx", "--json", "k.ptx"}, isInput},
		{"bench chain: --output is --taps-file", []string{"bench", "chain", "--taps-file", "rtaps.txt", "--output", "hard.txt"}, isInput},
		{"bench chain: --output is --input", []string{"bench", "chain", "--input", "in.f32", "--output", "sub/../in.f32"}, isInput},
		{"bench fir: --output is --input", []string{"bench", "fir", "--taps", "16", "--input", "in.f32", "--output", "in.f32"}, isInput},
		{"bench fir: --png is --taps-file", []string{"bench", "fir", "--taps-file", "taps.txt", "--png", "link.txt"}, isInput},
		{"bench fir: --png is --ptx", []string{"bench", "fir", "--ptx", "k.ptx", "--png", "./k.ptx"}, isInput},
		{"bench fir: --output and --png the same", []string{"bench", "fir", "--taps", "16", "--output", "f.out", "--png", "sub/../f.out"}, same},
		{"bench stream: --output is --input", []string{"bench", "stream", "--input", "in.f32", "--output", "./in.f32"}, isInput},
		{"bench stream: --json is --taps-file", []string{"bench", "stream", "--taps-file", "taps.txt", "--json", "link.txt"}, isInput},
		{"bench stream: --json is a PTX file", []string{"bench", "stream", "--ptx-dir", ".", "--json", "sub/../k.ptx"}, isInput},
		{"bench stream: --output and --json the same", []string{"bench", "stream", "--output", "s.out", "--json", "s.out"}, same},
		{"bench bandwidth: --json is --ptx", []string{"bench", "bandwidth", "--ptx", "k.ptx", "--json", "./k.ptx"}, isInput},
	}
	// k.ptx in --ptx-dir . is not one of the backend's kernel files: name
	// one that is.
	if err := os.Symlink("k.ptx", filepath.Join(dir, "fir.ptx")); err != nil {
		t.Fatal(err)
	}
	tests[23].args[len(tests[23].args)-1] = "sub/../fir.ptx"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tt.args...)
			if code != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errs, tt.want)
			}
			for n, b := range inputs {
				if got, _ := os.ReadFile(filepath.Join(dir, n)); !bytes.Equal(got, b) {
					t.Fatalf("input %s changed to %d bytes", n, len(got))
				}
			}
			for _, n := range []string{"out.f32", "p.out", "f.out", "s.out"} {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					t.Fatalf("output %s was created", n)
				}
			}
		})
	}
}
