//go:build cuda

package gpubench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
)

func randSignal(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func checkClose(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if e := filter.MaxErrRMS(got, want); !(e <= tol) {
		t.Fatalf("%s: max error %g of the output RMS > %g", name, e, tol)
	}
}

func TestBenchFIRTimesAndReturnsOutput(t *testing.T) {
	if n, err := cudrv.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		complex bool
		method  filter.Method
	}{{false, filter.MethodDirect}, {true, filter.MethodDirect}, {false, filter.MethodFFT}, {true, filter.MethodFFT}, {false, filter.MethodAuto}} {
		complex := c.complex
		ch := 1
		if complex {
			ch = 2
		}
		x := randSignal(r, 100003*ch)
		sets := [][]float32{randSignal(r, 16), randSignal(r, 129), randSignal(r, 3)}
		seen := 0
		res, err := BenchFIR(context.Background(), BenchFIRConfig{
			Input: x, Complex: complex, Taps: sets, Warmup: 1, Reps: 3, PTXPath: os.Getenv("SIGPROC_BATCH_PTX"),
			Method: c.method,
			Output: func(ntaps int, y []float32) error {
				checkClose(t, fmt.Sprintf("complex=%v/method=%v/taps=%d", complex, c.method, ntaps), y, filter.Convolve(sets[seen], x, complex), 1e-5)
				seen++
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != len(sets) || len(res.Runs) != len(sets) {
			t.Fatalf("outputs %d, runs %d, want %d", seen, len(res.Runs), len(sets))
		}
		for i, run := range res.Runs {
			if run.Taps != len(sets[i]) || len(run.Seconds) != 3 || run.Method != cuda.ResolveMethod(c.method, run.Taps).String() {
				t.Fatalf("run %d: %+v", i, run)
			}
			for _, s := range run.Seconds {
				if !(s > 0) {
					t.Fatalf("run %d: time %v", i, s)
				}
			}
		}
		if res.PeakBytesPerSec <= 0 || res.SMs <= 0 {
			t.Fatalf("device figures %+v", res)
		}
		t.Logf("%s: peak %.0f GB/s (%d kHz × %d bit), runs %+v", res.Device.Name, res.PeakBytesPerSec/1e9,
			res.MemClockKHz, res.MemBusWidthBits, res.Runs)
	}
}

// TestBenchFIRColdPass runs one pass (no warmup) right
// after the setup of a large input, where the kernel races the input's
// copy and the output's NaN poisoning unless they are ordered on its
// stream: the H200 run got NaN from complex 129 taps that way. The tap
// sets of different lengths move the input within the buffer, so a pass
// that reads before the copy lands reads the previous set's layout.
func TestBenchFIRColdPass(t *testing.T) {
	if n, err := cudrv.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, complex := range []bool{true, false} {
		ch := 1
		if complex {
			ch = 2
		}
		x := randSignal(r, 1<<21*ch)
		sets := [][]float32{randSignal(r, 3), randSignal(r, 129), randSignal(r, 16)}
		seen := 0
		_, err := BenchFIR(context.Background(), BenchFIRConfig{
			Input: x, Complex: complex, Taps: sets, Warmup: 0, Reps: 1, PTXPath: os.Getenv("SIGPROC_BATCH_PTX"),
			Method: filter.MethodDirect,
			Output: func(ntaps int, y []float32) error {
				checkClose(t, fmt.Sprintf("complex=%v/taps=%d", complex, ntaps), y, filter.Convolve(sets[seen], x, complex), 1e-5)
				seen++
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != len(sets) {
			t.Fatalf("complex=%v: %d outputs, want %d", complex, seen, len(sets))
		}
	}
}

// Lanes: 8 interleaved channels in one launch, checked against
// ReferenceFIRLanes (each channel on its own through the CPU filter).
func TestBenchFIRLanes(t *testing.T) {
	if n, err := cudrv.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, lanes := range []int{3, 8, 16} {
		x := randSignal(r, 20011*lanes)
		sets := [][]float32{randSignal(r, 129), randSignal(r, 7)}
		seen := 0
		_, err := BenchFIR(context.Background(), BenchFIRConfig{
			Input: x, Lanes: lanes, Taps: sets, Warmup: 1, Reps: 2, PTXPath: os.Getenv("SIGPROC_BATCH_PTX"),
			Output: func(ntaps int, y []float32) error {
				ref, err := ReferenceFIRLanes(sets[seen], x, lanes, 4)
				if err != nil {
					return err
				}
				checkClose(t, fmt.Sprintf("lanes=%d/taps=%d", lanes, ntaps), y, ref, 1e-5)
				seen++
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != len(sets) {
			t.Fatalf("lanes %d: %d outputs", lanes, seen)
		}
	}
	if _, err := BenchFIR(context.Background(), BenchFIRConfig{Input: make([]float32, 10), Lanes: 3, Taps: [][]float32{{1}}, Reps: 1}); err == nil {
		t.Error("10 values accepted as frames of 3")
	}
}
