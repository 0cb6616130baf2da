//go:build cuda

package gpubench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/filter"
	"gorgonia.org/cu"
)

// skipWithoutGPU skips the test when no CUDA device is present.
func skipWithoutGPU(t *testing.T) {
	t.Helper()
	if n, err := cu.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
}

// streamSrc yields x in reads as large as the buffer it is given. After
// cancelAfter reads (when > 0) it calls cancel; failAt > 0 makes the read
// that crosses value failAt return a non-EOF error with its valid values.
type streamSrc struct {
	x           []float32
	pos, reads  int
	cancelAfter int
	cancel      context.CancelFunc
	failAt      int
}

func (s *streamSrc) Read(ctx context.Context, dst []float32) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.reads++
	if s.cancelAfter > 0 && s.reads > s.cancelAfter {
		s.cancel()
		return 0, context.Canceled
	}
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if s.failAt > 0 && s.pos >= s.failAt {
		return n, errors.New("disk on fire")
	}
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

// streamSink collects what it is given; failAt > 0 fails that write.
type streamSink struct {
	got    []float32
	writes int
	failAt int
}

func (s *streamSink) Write(v []float32) error {
	s.writes++
	if s.failAt > 0 && s.writes == s.failAt {
		return errors.New("sink full")
	}
	s.got = append(s.got, v...)
	return nil
}

func streamTestSignal(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

type streamCase struct {
	taps, chunk, samples, streams, buffers int
	complex                                bool
}

var streamCases = []streamCase{
	{taps: 129, chunk: 4096, samples: 4096 * 5, streams: 3},                    // chunks divide the input
	{taps: 129, chunk: 5000, samples: 4096*5 + 17, streams: 1, buffers: 2},     // partial last chunk, 1 stream
	{taps: 64, chunk: 3000, samples: 20011, streams: 2, complex: true},         // complex, 2 streams
	{taps: 33, chunk: 1 << 14, samples: 1<<16 + 3, streams: 4, buffers: 4},     // 4 streams
	{taps: 200, chunk: 64, samples: 64*40 + 5, streams: 3},                     // history longer than a chunk
	{taps: 1, chunk: 1000, samples: 999, streams: 2},                           // one short chunk, no history
	{taps: 257, chunk: 1 << 12, samples: 1<<15 + 1, streams: 4, complex: true}, // complex, 4 streams, odd end
}

func (c streamCase) config() StreamConfig {
	return StreamConfig{
		Taps: streamTestSignal(uint64(c.taps), c.taps), Complex: c.complex, ChunkSamples: c.chunk,
		Streams: c.streams, Buffers: c.buffers, PTXPath: os.Getenv("SIGPROC_BATCH_PTX"), Timeline: true,
	}
}

func (c streamCase) String() string {
	return fmt.Sprintf("taps=%d/chunk=%d/samples=%d/streams=%d/buffers=%d/complex=%v",
		c.taps, c.chunk, c.samples, c.streams, c.buffers, c.complex)
}

func checkStreamResult(t *testing.T, res StreamResult, samples int) {
	t.Helper()
	if res.SamplesIn != int64(samples) || res.SamplesOut != int64(samples) || res.Drops != 0 {
		t.Fatalf("samples in %d, out %d, drops %d; want %d, %d, 0", res.SamplesIn, res.SamplesOut, res.Drops, samples, samples)
	}
	if len(res.Timeline) != res.Chunks || res.Chunks == 0 {
		t.Fatalf("%d timeline entries for %d chunks", len(res.Timeline), res.Chunks)
	}
	for _, c := range res.Timeline {
		if !(c.H2D[0] <= c.H2D[1] && c.H2D[1] <= c.Kernel[1] && c.Kernel[1] <= c.D2H[1]) || c.H2D[0] < 0 {
			t.Fatalf("chunk %d stages out of order: %+v", c.Chunk, c)
		}
	}
	if res.WallSeconds <= 0 || res.GPUSeconds <= 0 || res.InGiBps <= 0 {
		t.Fatalf("rates %+v", res)
	}
}

func TestRunStreamMatchesConvolve(t *testing.T) {
	skipWithoutGPU(t)
	for i, tc := range streamCases {
		t.Run(tc.String(), func(t *testing.T) {
			ch := 1
			if tc.complex {
				ch = 2
			}
			cfg := tc.config()
			x := streamTestSignal(uint64(i), tc.samples*ch)
			snk := &streamSink{}
			res, err := RunStream(context.Background(), cfg, &streamSrc{x: x}, snk)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamResult(t, res, tc.samples)
			if want := (tc.samples + tc.chunk - 1) / tc.chunk; res.Chunks != want {
				t.Fatalf("%d chunks, want %d", res.Chunks, want)
			}
			if e := filter.MaxErrRMS(snk.got, filter.Convolve(cfg.Taps, x, tc.complex)); e > 1e-5 {
				t.Fatalf("max relative error %g > 1e-5", e)
			}
		})
	}
}

func TestRunStreamMemoryMatchesConvolve(t *testing.T) {
	skipWithoutGPU(t)
	for i, tc := range streamCases {
		t.Run(tc.String(), func(t *testing.T) {
			ch := 1
			if tc.complex {
				ch = 2
			}
			cfg := tc.config()
			cfg.RefBytes, cfg.RefReps = 16<<20, 2
			in, err := AllocHostFloats(tc.samples * ch)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Free()
			out, err := AllocHostFloats(tc.samples * ch)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Free()
			copy(in.Values, streamTestSignal(uint64(100+i), tc.samples*ch))
			for j := range out.Values {
				out.Values[j] = float32(math.NaN())
			}
			res, err := RunStreamMemory(context.Background(), cfg, in, out)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamResult(t, res, tc.samples)
			if res.PinnedH2D == nil || res.PinnedH2D.GiBps <= 0 || res.PinnedFraction <= 0 {
				t.Fatalf("pinned reference %+v, fraction %v", res.PinnedH2D, res.PinnedFraction)
			}
			if e := filter.MaxErrRMS(out.Values, filter.Convolve(cfg.Taps, in.Values, tc.complex)); e > 1e-5 {
				t.Fatalf("max relative error %g > 1e-5", e)
			}
		})
	}
}

// TestRunStreamCancel stops a stream part way through: the chunks read so
// far reach the sink, everything is freed without error and the next run
// works.
func TestRunStreamCancel(t *testing.T) {
	skipWithoutGPU(t)
	for _, streams := range []int{1, 3} {
		t.Run(fmt.Sprint(streams, " streams"), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := StreamConfig{Taps: streamTestSignal(1, 65), ChunkSamples: 1 << 12, Streams: streams}
			x := streamTestSignal(2, 1<<18)
			snk := &streamSink{}
			res, err := RunStream(ctx, cfg, &streamSrc{x: x, cancelAfter: 10, cancel: cancel}, snk)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want only context.Canceled (any cleanup error would be joined here)", err)
			}
			if strings.Contains(err.Error(), "free") || strings.Contains(err.Error(), "destroy") {
				t.Fatalf("cleanup error: %v", err)
			}
			if !res.Interrupted || res.SamplesIn != res.SamplesOut || res.SamplesOut != 10<<12 {
				t.Fatalf("interrupted %v, in %d, out %d; want 10 whole chunks", res.Interrupted, res.SamplesIn, res.SamplesOut)
			}
			want := filter.Convolve(cfg.Taps, x[:res.SamplesOut], false)
			if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
				t.Fatalf("flushed output: max relative error %g", e)
			}
			// A fresh run in a fresh context works after the cancel.
			snk2 := &streamSink{}
			if _, err := RunStream(context.Background(), cfg, &streamSrc{x: x[:1<<14]}, snk2); err != nil {
				t.Fatalf("run after cancel: %v", err)
			}
			if len(snk2.got) != 1<<14 {
				t.Fatalf("run after cancel wrote %d values", len(snk2.got))
			}
		})
	}
}

func TestRunStreamMemoryCancel(t *testing.T) {
	skipWithoutGPU(t)
	ctx, cancel := context.WithCancel(context.Background())
	in, err := AllocHostFloats(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	out, err := AllocHostFloats(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	cfg := StreamConfig{Taps: []float32{1, 0.5}, ChunkSamples: 1 << 12, Streams: 2,
		Progress: func(n int64) {
			if n >= 8<<12 {
				cancel()
			}
		}}
	res, err := RunStreamMemory(ctx, cfg, in, out)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("got %v (interrupted %v), want context.Canceled", err, res.Interrupted)
	}
	if res.SamplesIn != res.SamplesOut || res.SamplesOut < 8<<12 || res.SamplesOut >= 1<<20 {
		t.Fatalf("in %d, out %d", res.SamplesIn, res.SamplesOut)
	}
}

func TestRunStreamErrors(t *testing.T) {
	skipWithoutGPU(t)
	cfg := StreamConfig{Taps: []float32{1, 2, 1}, ChunkSamples: 1000, Streams: 2}
	x := streamTestSignal(3, 20000)
	t.Run("sink", func(t *testing.T) {
		_, err := RunStream(context.Background(), cfg, &streamSrc{x: x}, &streamSink{failAt: 3})
		if err == nil || !strings.Contains(err.Error(), "sink full") || !strings.Contains(err.Error(), "chunk 2") {
			t.Fatalf("got %v, want the sink's error for chunk 2", err)
		}
	})
	t.Run("source", func(t *testing.T) {
		snk := &streamSink{}
		res, err := RunStream(context.Background(), cfg, &streamSrc{x: x, failAt: 5500}, snk)
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("got %v, want the source's error", err)
		}
		// The values that came with the error were filtered too.
		if res.SamplesIn != 6000 || res.SamplesOut != 6000 {
			t.Fatalf("in %d, out %d; want 6000", res.SamplesIn, res.SamplesOut)
		}
	})
	t.Run("odd complex", func(t *testing.T) {
		c := cfg
		c.Complex = true
		in, _ := AllocHostFloats(5)
		defer in.Free()
		out, _ := AllocHostFloats(5)
		defer out.Free()
		if _, err := RunStreamMemory(context.Background(), c, in, out); err == nil || !strings.Contains(err.Error(), "odd length") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("mismatched memory", func(t *testing.T) {
		in, _ := AllocHostFloats(8)
		defer in.Free()
		out, _ := AllocHostFloats(16)
		defer out.Free()
		if _, err := RunStreamMemory(context.Background(), cfg, in, out); err == nil || !strings.Contains(err.Error(), "want equal") {
			t.Fatalf("got %v", err)
		}
	})
}
