package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/grtest"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
)

// Interop with GNU Radio 3.10's gr-zeromq (Debian's gnuradio): every
// direction and pattern, real and complex. Each test checks that every
// sample arrives, in order, filtered as filter.Convolve (float64) says.

const grItems = 60000 // samples per interop run

func grTaps(t *testing.T) []float32 {
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1e6, CutoffHz: 1e5, NumTaps: 129})
	if err != nil {
		t.Fatal(err)
	}
	return taps
}

func formatFor(cplx bool) string {
	if cplx {
		return "cf32_le"
	}
	return "rf32_le"
}

func channels(cplx bool) int {
	if cplx {
		return 2
	}
	return 1
}

// noise returns n samples of seeded uniform noise (2n values if complex).
func noise(n int, cplx bool, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n*channels(cplx))
	for i := range x {
		x[i] = float32(r.Float64()*2 - 1)
	}
	return x
}

func writeF32(t *testing.T, path string, x []float32) {
	t.Helper()
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkFiltered compares got with the float64 reference of x filtered.
func checkFiltered(t *testing.T, got, x, taps []float32, cplx bool) {
	t.Helper()
	want := filter.Convolve(taps, x, cplx)
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("value %d: got %g, want %g (filtered reference)", i, got[i], want[i])
		}
	}
}

// slice is a source of a fixed buffer, for the pipeline.
type slice struct {
	x   []float32
	pos int
}

func (s *slice) Read(_ context.Context, dst []float32) (int, error) {
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if s.pos == len(s.x) {
		return n, io.EOF
	}
	return n, nil
}

// recorder keeps every value a source returned.
type recorder struct {
	capture.Source
	mu  sync.Mutex
	got []float32
}

func (r *recorder) Read(ctx context.Context, dst []float32) (int, error) {
	n, err := r.Source.Read(ctx, dst)
	r.mu.Lock()
	r.got = append(r.got, dst[:n]...)
	r.mu.Unlock()
	return n, err
}

// collect is a sink that keeps everything.
type collect struct{ got []float32 }

func (c *collect) Write(s []float32) error { c.got = append(c.got, s...); return nil }

func runPipe(t *testing.T, ctx context.Context, src pipeline.Source, snk pipeline.Sink, taps []float32, cplx bool, n int64) pipeline.Stats {
	t.Helper()
	fir, err := filter.NewFIR(taps, cplx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.Run(ctx, src, cpu.NewBackend(fir), snk,
		pipeline.Config{BlockSize: 1000, Complex: cplx, Slots: 16, MaxSamples: n}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func readF32File(t *testing.T, path string) []float32 { return readF32(t, path) }

func ipcEndpoint(t *testing.T, name string) string {
	return "ipc://" + filepath.Join(t.TempDir(), name)
}

// sigproc push|pub (bound) -> GNU Radio pull_source|sub_source.
func TestZMQToGNURadio(t *testing.T) {
	grtest.Python(t)
	taps := grTaps(t)
	for _, pattern := range []string{"push", "pub"} {
		for _, cplx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s", pattern, formatFor(cplx)), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				ep := "tcp://127.0.0.1:*"
				if cplx {
					ep = ipcEndpoint(t, "s")
				}
				snk, err := sink.ListenZMQ(ctx, sink.ZMQConfig{Endpoint: ep, Pattern: pattern, Format: formatFor(cplx)})
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(t.TempDir(), "gr.f32")
				recvPattern := map[string]string{"push": "pull", "pub": "sub"}[pattern]
				args := []string{"recv", "--pattern", recvPattern, "--endpoint", snk.Endpoint(), "--items", fmt.Sprint(grItems), "--out", out, "--seconds", "60"}
				if cplx {
					args = append(args, "--complex")
				}
				gr := grtest.Start(t, args...)
				// pub drops what is sent before the subscription arrives,
				// as libzmq does: start the stream once GNU Radio is in.
				if err := snk.WaitPeers(ctx, 1); err != nil {
					t.Fatal(err)
				}
				x := noise(grItems, cplx, 3)
				st := runPipe(t, ctx, &slice{x: x}, snk, taps, cplx, 0)
				if err := snk.Close(); err != nil {
					t.Fatal(err)
				}
				gr.Wait(time.Minute)
				if zs := snk.Stats(); zs.DroppedMessages != 0 || zs.QueueFull != 0 {
					t.Errorf("sink dropped: %+v", zs)
				}
				if st.SamplesOut != grItems {
					t.Errorf("pipeline wrote %d samples, want %d", st.SamplesOut, grItems)
				}
				checkFiltered(t, readF32File(t, out), x, taps, cplx)
			})
		}
	}
}

// sigproc push of 4 channels (a source's), or 1024 (a channelizer's) ->
// GNU Radio pull_source with vlen 4 or 1024: each frame is one GNU Radio
// vector item, and the bytes arrive as written.
func TestZMQChannelsToGNURadio(t *testing.T) {
	grtest.Python(t)
	for _, tt := range []struct {
		cplx bool
		ch   int
	}{{false, 4}, {true, 4}, {true, 1024}} {
		t.Run(fmt.Sprintf("%s/%d", formatFor(tt.cplx), tt.ch), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cplx, ch := tt.cplx, tt.ch
			frames := grItems / ch
			snk, err := sink.ListenZMQ(ctx, sink.ZMQConfig{Endpoint: "tcp://127.0.0.1:*", Pattern: "push", Format: formatFor(cplx), Channels: ch})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "gr.f32")
			args := []string{"recv", "--pattern", "pull", "--endpoint", snk.Endpoint(), "--items", fmt.Sprint(frames), "--vlen", fmt.Sprint(ch), "--out", out, "--seconds", "60"}
			if cplx {
				args = append(args, "--complex")
			}
			gr := grtest.Start(t, args...)
			if err := snk.WaitPeers(ctx, 1); err != nil {
				t.Fatal(err)
			}
			x := noise(frames*ch, cplx, 5)
			for len(x) > 0 { // messages of 1000 frames
				n := min(len(x), 1000*ch*channels(cplx))
				if err := snk.Write(x[:n]); err != nil {
					t.Fatal(err)
				}
				x = x[n:]
			}
			if err := snk.Close(); err != nil {
				t.Fatal(err)
			}
			gr.Wait(time.Minute)
			got, want := readF32File(t, out), noise(frames*ch, cplx, 5)
			if !slices.Equal(got, want) {
				t.Fatalf("GNU Radio got %d values, want the %d sent, unchanged", len(got), len(want))
			}
		})
	}
}

// GNU Radio push_sink|pub_sink (bound) -> sigproc pull|sub.
func TestGNURadioToZMQ(t *testing.T) {
	grtest.Python(t)
	taps := grTaps(t)
	for _, pattern := range []string{"pull", "sub"} {
		for _, cplx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s", pattern, formatFor(cplx)), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				ep := "tcp://127.0.0.1:" + freePort(t)
				if cplx {
					ep = ipcEndpoint(t, "g")
				}
				x := noise(grItems, cplx, 5)
				in := filepath.Join(t.TempDir(), "in.f32")
				writeF32(t, in, x)
				sendPattern := map[string]string{"pull": "push", "sub": "pub"}[pattern]
				args := []string{"send", "--pattern", sendPattern, "--endpoint", ep, "--in", in, "--seconds", "60"}
				if pattern == "sub" {
					// pub: repeat the input until we have joined and taken
					// grItems; the recorder tells where we joined.
					args = append(args, "--repeat")
				}
				if cplx {
					args = append(args, "--complex")
				}
				gr := grtest.Start(t, args...)
				src, err := capture.OpenZMQ(capture.ZMQConfig{Endpoint: ep, Pattern: pattern, Format: formatFor(cplx), SampleRate: 1e6})
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				rec := &recorder{Source: src}
				var got collect
				runPipe(t, ctx, rec, &got, taps, cplx, grItems)
				if pattern == "pull" {
					gr.Wait(time.Minute)
				}
				if zs := src.Stats(); zs.Malformed != 0 || zs.Reconnects != 0 {
					t.Errorf("source: %+v", zs)
				}
				// Every sample, in order: what we read is one contiguous
				// stretch of the (repeated) input, from its start for pull.
				ch := channels(cplx)
				first := indexOf(rec.got[:ch], x, ch)
				if first < 0 || (pattern == "pull" && first != 0) {
					t.Fatalf("first sample %v is not input sample 0 (found at %d)", rec.got[:ch], first)
				}
				for i, v := range rec.got {
					if w := x[(first*ch+i)%len(x)]; v != w {
						t.Fatalf("value %d: got %g, want input value %d = %g: a sample was lost or reordered", i, v, (first*ch+i)%len(x), w)
					}
				}
				if len(rec.got) != grItems*ch {
					t.Fatalf("read %d values, want %d", len(rec.got), grItems*ch)
				}
				checkFiltered(t, got.got, rec.got, taps, cplx)
			})
		}
	}
}

// indexOf finds the sample s (ch values) in x.
func indexOf(s, x []float32, ch int) int {
	for i := 0; i+ch <= len(x); i += ch {
		if x[i] == s[0] && (ch == 1 || x[i+1] == s[1]) {
			return i / ch
		}
	}
	return -1
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	snk, err := sink.ListenZMQ(context.Background(), sink.ZMQConfig{Endpoint: "tcp://127.0.0.1:*", Pattern: "push", Format: "rf32_le"})
	if err != nil {
		t.Fatal(err)
	}
	ep := snk.Endpoint()
	snk.Close()
	return ep[strings.LastIndexByte(ep, ':')+1:]
}

// GNU Radio push_sink(pass_tags) -> sigproc run (zmq pull -> FIR -> zmq
// push, pass_tags) -> GNU Radio pull_source(pass_tags): the samples come
// back filtered, and rx_time / rx_freq tags at their sample offsets, through
// the CLI and its config.
func TestGNURadioThroughSigprocRunWithTags(t *testing.T) {
	grtest.Python(t)
	for _, cplx := range []bool{false, true} {
		t.Run(formatFor(cplx), func(t *testing.T) {
			dir := t.TempDir()
			in, out, tagsOut := filepath.Join(dir, "in.f32"), filepath.Join(dir, "out.f32"), filepath.Join(dir, "tags.json")
			x := noise(grItems, cplx, 11)
			writeF32(t, in, x)
			ep1, ep2 := "ipc://"+filepath.Join(dir, "a"), "tcp://127.0.0.1:"+freePort(t)
			cfg := writeConfig(t, fmt.Sprintf(`source:
  type: zmq
  endpoint: %s
  pattern: pull
  format: %s
  sample_rate: 1e6
  pass_tags: true
  num_samples: %d
block_size: 1000
filter:
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: 129}
sink:
  type: zmq
  endpoint: %s
  pattern: push
  pass_tags: true
`, ep1, formatFor(cplx), grItems, ep2))
			args := []string{"tags", "--endpoint", ep1, "--endpoint2", ep2, "--in", in, "--out", out, "--tags-out", tagsOut,
				"--items", fmt.Sprint(grItems), "--tag-at", "12345", "--seconds", "60"}
			if cplx {
				args = append(args, "--complex")
			}
			gr := grtest.Start(t, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			stdout, stderr, err := execute(t, ctx, nil, "run", "-c", cfg)
			if err != nil {
				t.Fatalf("sigproc run: %v\n%s", err, stderr)
			}
			gr.Wait(time.Minute)
			if !strings.Contains(stdout, fmt.Sprintf("samples in %d  out %d", grItems, grItems)) {
				t.Errorf("summary: %s", stdout)
			}
			checkFiltered(t, readF32(t, out), x, grTaps(t), cplx)
			b, err := os.ReadFile(tagsOut)
			if err != nil {
				t.Fatal(err)
			}
			var tags []struct {
				Offset uint64
				Key    string
				Value  any
			}
			if err := json.Unmarshal(b, &tags); err != nil {
				t.Fatal(err)
			}
			want := []string{"0 rx_time [1.7e+09 0.25]", "0 rx_freq 4.3392e+08", "12345 rx_freq 8.68e+08"}
			var got []string
			for _, tg := range tags {
				got = append(got, fmt.Sprintf("%d %s %v", tg.Offset, tg.Key, tg.Value))
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("tags at GNU Radio's end:\n got %q\nwant %q", got, want)
			}
		})
	}
}
