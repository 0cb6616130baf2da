package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
)

// TestBenchChannelizeCPU: the CPU bank on a short input, text and JSON,
// with the frames a bank of M ÷D makes (one per D inputs, the first at
// input 0) and a select's channels.
func TestBenchChannelizeCPU(t *testing.T) {
	o := benchChannelizeOptions{backend: "cpu", channels: 64, decimate: 32, tapsPerChannel: 8, samples: 10000,
		block: 3000, reps: 2, complex: true, seed: 1, keep: []int{1, 63}, json: "-"}
	var out bytes.Buffer
	if err := runBenchChannelize(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	var res benchChannelizeResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if res.OutFrames != (10000+31)/32 || res.Samples != 10000 || res.InGSps <= 0 || res.Backend != "cpu" ||
		!strings.Contains(res.Chain, "select channels 1, 63") {
		t.Errorf("result %+v", res)
	}
	o.json, o.keep, o.complex = "", nil, false
	out.Reset()
	if err := runBenchChannelize(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "channelize on cpu (") || !strings.Contains(s, "real input: channelize 64 channels ÷32") ||
		!strings.Contains(s, "GS/s in") {
		t.Errorf("text output %q", s)
	}
}

// TestBenchChannelizeErrors: bad flags fail before any work, naming the
// flag.
func TestBenchChannelizeErrors(t *testing.T) {
	good := benchChannelizeOptions{backend: "cpu", channels: 64, tapsPerChannel: 16, samples: 1000, block: 100, reps: 1, complex: true}
	for _, tc := range []struct {
		name string
		edit func(*benchChannelizeOptions)
		want string
	}{
		{"backend", func(o *benchChannelizeOptions) { o.backend = "gpu" }, "--backend"},
		{"path value", func(o *benchChannelizeOptions) { o.backend, o.path = "cuda", "both" }, "--path"},
		{"path on cpu", func(o *benchChannelizeOptions) { o.path = "fused" }, "takes --backend cuda"},
		{"samples", func(o *benchChannelizeOptions) { o.samples = 0 }, "--samples"},
		{"reps", func(o *benchChannelizeOptions) { o.reps = 0 }, "--reps"},
		{"block", func(o *benchChannelizeOptions) { o.block = -1 }, "--block"},
		{"device", func(o *benchChannelizeOptions) { o.device = -1 }, "--device"},
		{"channels", func(o *benchChannelizeOptions) { o.channels = 1 }, "channels"},
		{"decimate", func(o *benchChannelizeOptions) { o.decimate = 3 }, "must divide"},
		{"taps", func(o *benchChannelizeOptions) { o.tapsPerChannel = 0 }, "taps per channel"},
		{"keep", func(o *benchChannelizeOptions) { o.keep = []int{64} }, "channel 64 is not one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			err := runBenchChannelize(context.Background(), o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestBenchChannelizeHelpTeaches: the help names the backends, the GPU's
// paths, the core count and an example.
func TestBenchChannelizeHelpTeaches(t *testing.T) {
	out, _, err := execute(t, nil, nil, "bench", "channelize", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--backend", "cuda", "GOMAXPROCS", "--path", "fused", "split", "--keep",
		"BankPrototype", "channelize_poly", "Examples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestBenchChannelizePureBuild: --backend cuda in a build without CUDA
// says so.
func TestBenchChannelizePureBuild(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, _, err := execute(t, nil, nil, "bench", "channelize", "--backend", "cuda", "--samples", "1024")
	if err == nil || !strings.Contains(err.Error(), "built without CUDA") {
		t.Fatalf("got %v, want the built-without-CUDA error", err)
	}
}

// TestBenchChannelizeDiscards: the CPU run discards its output block by
// block: 256 channels undecimated over 128 Ki samples make 256 MiB of
// output, and the run allocates a small part of that.
func TestBenchChannelizeDiscards(t *testing.T) {
	o := benchChannelizeOptions{backend: "cpu", channels: 256, decimate: 1, tapsPerChannel: 1, samples: 1 << 17,
		block: 1000, reps: 1, complex: true, json: "-"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	if err := runBenchChannelize(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("allocated %d MiB for 256 MiB of output", got>>20)
	}
	var res benchChannelizeResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OutFrames != 1<<17 || res.Cores < 1 || res.Block != 1000 || !res.Complex {
		t.Errorf("result %+v", res)
	}
}
