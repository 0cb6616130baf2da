//go:build cuda

package gpubench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

func skipWithoutGPU(t *testing.T) {
	t.Helper()
	if n, err := cudrv.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
}

func streamTaps(t *testing.T, n int) []float32 {
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: n})
	if err != nil {
		t.Fatal(err)
	}
	return taps
}

// A stream from memory through run's engine: every sample out, none
// dropped, all of it equal to the CPU filter, beside a pinned reference.
func TestStreamMemoryVerifiesAll(t *testing.T) {
	skipWithoutGPU(t)
	for _, complex := range []bool{false, true} {
		res, err := Stream(context.Background(), StreamConfig{
			Taps: streamTaps(t, 129), Complex: complex, Block: 100003, Slots: 16, MaxPinnedMB: 256,
			Source: StreamMemory, Bytes: 64 << 20, Seed: 2, Verify: VerifyAll, RefBytes: 16 << 20, RefReps: 3,
		})
		if err != nil {
			t.Fatal(err)
		}
		ch := uint64(1)
		if complex {
			ch = 2
		}
		if res.SamplesIn != (64<<20)/4/ch || res.SamplesOut != res.SamplesIn || res.Drops != 0 {
			t.Fatalf("complex=%v: %+v", complex, res)
		}
		if res.Verified == nil || !*res.Verified || res.PinnedH2D == nil || res.InGiBps <= 0 {
			t.Fatalf("complex=%v: %+v", complex, res)
		}
		t.Logf("complex=%v: %.2f GiB/s in, %.0f%% of pinned, startup %.0f ms", complex, res.InGiBps, 100*res.PinnedFraction, 1e3*res.StartupSeconds)
	}
}

// A file in, a file out: the output file holds the CPU filter of the input.
func TestStreamFileToFile(t *testing.T) {
	skipWithoutGPU(t)
	dir := t.TempDir()
	x := make([]float32, 3<<20)
	FillNoise(x, 4)
	in, out := filepath.Join(dir, "in.f32"), filepath.Join(dir, "out.f32")
	if err := os.WriteFile(in, floatBytes(x), 0o644); err != nil {
		t.Fatal(err)
	}
	taps := streamTaps(t, 64)
	res, err := Stream(context.Background(), StreamConfig{Taps: taps, Block: 1 << 18, Slots: 8, MaxPinnedMB: 64,
		Source: StreamFile, Input: in, Output: out, Verify: VerifySample})
	if err != nil || res.Verified == nil || !*res.Verified {
		t.Fatalf("%v %+v", err, res)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if e := filter.MaxErrRMS(bytesFloat(got), filter.Convolve(taps, x, false)); e > Tolerance {
		t.Fatalf("output file: error %g", e)
	}
}

// Cancelling a stream ends it as Ctrl-C ends a run: what was read is
// filtered and counted, the result is marked interrupted, no error.
func TestStreamCancel(t *testing.T) {
	skipWithoutGPU(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	res, err := Stream(ctx, StreamConfig{Taps: streamTaps(t, 16), Block: 4096, Slots: 8, MaxPinnedMB: 64,
		Source: StreamSynthetic, Bytes: 1 << 40, Verify: VerifyNone,
		Progress: func(pipeline.Stats) {}})
	if err != nil || !res.Interrupted || res.SamplesOut != res.SamplesIn || res.Drops != 0 {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestStreamPinnedBudget: 1 Mi-sample complex blocks (a 585 MiB ring)
// run under the default pinned budget, sized from the host; at f8de38b
// they failed under the fixed 256 MiB default. A limit set too small is
// refused before the run, with no output file created and the setting
// named.
func TestStreamPinnedBudget(t *testing.T) {
	skipWithoutGPU(t)
	res, err := Stream(context.Background(), StreamConfig{
		Taps: streamTaps(t, 129), Complex: true, Block: 1 << 20, Slots: 64,
		Source: StreamMemory, Bytes: 256 << 20, Seed: 3, Verify: VerifySample,
	})
	if err != nil {
		t.Fatalf("1 Mi blocks under the default budget: %v", err)
	}
	if res.Verified == nil || !*res.Verified || res.SamplesOut != res.SamplesIn {
		t.Fatalf("1 Mi blocks: %+v", res)
	}
	out := filepath.Join(t.TempDir(), "out.cf32")
	_, err = Stream(context.Background(), StreamConfig{
		Taps: streamTaps(t, 129), Complex: true, Block: 1 << 20, Slots: 64, MaxPinnedMB: 256,
		Source: StreamMemory, Bytes: 64 << 20, Output: out, Verify: VerifyNone,
	})
	if !errors.Is(err, cuda.ErrPinnedLimit) || !strings.Contains(err.Error(), "cuda.max_pinned_mb") {
		t.Fatalf("max_pinned_mb 256 for a 585 MiB ring: got %v, want ErrPinnedLimit naming cuda.max_pinned_mb", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("the refused run created its output (%v)", serr)
	}
}
