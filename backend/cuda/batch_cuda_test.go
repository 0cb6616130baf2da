//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
)

// batchPTX is the PTX file the batch tests load instead of the embedded
// one, when SIGPROC_BATCH_PTX names one.
func batchPTX() string { return os.Getenv("SIGPROC_BATCH_PTX") }

// withBatchContext runs fn with a fresh context on device 0 current on a
// locked OS thread, and skips the test when there is no usable GPU. A
// subtest runs on a goroutine of its own, so on another OS thread: use
// withBatchContextRun and runOnContext for those.
func withBatchContext(t *testing.T, fn func()) {
	t.Helper()
	withBatchContextRun(t, func(*cudrv.Context) { fn() })
}

// runOnContext runs fn as subtest name with ctx bound to the subtest's
// goroutine (cudrv.Context.Bind): without it every driver call of the
// subtest fails with InvalidContext, as TestChainFilterMatchesCPU's did.
func runOnContext(t *testing.T, ctx *cudrv.Context, name string, fn func(t *testing.T)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		release, err := ctx.Bind()
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		fn(t)
	})
}

// withBatchContextRun is withBatchContext handing fn the context.
func withBatchContextRun(t *testing.T, fn func(ctx *cudrv.Context)) {
	t.Helper()
	if n, err := cudrv.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device (%d devices, %v)", n, err)
	}
	ctx, err := cudrv.NewContext(0, cudrv.SchedBlockingSync)
	if err != nil {
		t.Skipf("no usable CUDA context: %v", err)
	}
	// Destroying the context frees every allocation devBuf made in it.
	defer func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close context: %v", err)
		}
	}()
	fn(ctx)
}

// devBuf allocates values float32s in the current context; they live
// until withBatchContext destroys it.
func devBuf(t *testing.T, values int) cudrv.DevicePtr {
	t.Helper()
	p, err := cudrv.MemAlloc(int64(values) * 4)
	if err != nil {
		t.Fatalf("allocate %d floats: %v", values, err)
	}
	return p
}

func toDev(t *testing.T, dst cudrv.DevicePtr, src []float32) {
	t.Helper()
	if len(src) == 0 {
		return
	}
	if err := cudrv.MemcpyHtoD(dst, unsafe.Pointer(&src[0]), int64(len(src))*4); err != nil {
		t.Fatalf("copy to device: %v", err)
	}
}

func fromDev(t *testing.T, dst []float32, src cudrv.DevicePtr) {
	t.Helper()
	if err := cudrv.MemcpyDtoH(unsafe.Pointer(&dst[0]), src, int64(len(dst))*4); err != nil {
		t.Fatalf("copy to host: %v", err)
	}
}

// batchFilter runs f once over x behind a zero history, with in and out
// offset by inOff and outOff floats from 16-byte-aligned allocations
// (non-zero offsets take the kernel's scalar paths), and returns the output.
func batchFilter(t *testing.T, f *BatchFIR, x []float32, inOff, outOff int) []float32 {
	t.Helper()
	hist := f.HistoryValues()
	nout := len(x) / f.Channels()
	host := make([]float32, inOff+hist+len(x))
	copy(host[inOff+hist:], x)
	din := devBuf(t, len(host))
	toDev(t, din, host)
	dout := devBuf(t, outOff+len(x)+4)
	if err := cudrv.MemsetD32(dout, 0xffffffff, int64(outOff+len(x)+4)); err != nil { // NaN
		t.Fatal(err)
	}
	in := din + cudrv.DevicePtr(4*inOff)
	out := dout + cudrv.DevicePtr(4*outOff)
	if err := f.Launch(cudrv.Stream{}, in, out, nout); err != nil {
		t.Fatal(err)
	}
	if err := cudrv.Synchronize(); err != nil {
		t.Fatalf("kernel: %v", err)
	}
	got := make([]float32, outOff+len(x)+4)
	fromDev(t, got, dout)
	// Nothing outside [out, out+len(x)) may be written.
	for i, v := range append(got[:outOff:outOff], got[outOff+len(x):]...) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("value %d outside the output was overwritten with %v", i, v)
		}
	}
	return got[outOff : outOff+len(x)]
}

func checkClose(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", name, len(got), len(want))
	}
	for i, v := range got {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s: output %d is %v (not written?)", name, i, v)
		}
	}
	if e := filter.MaxErrRMS(got, want); !(e <= tol) {
		t.Fatalf("%s: max error %g of the output RMS > %g", name, e, tol)
	}
}

func TestBatchFIRMatchesConvolve(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			for _, ntaps := range []int{1, 2, 16, 63, 64, 129, 256, 1024} {
				taps := randSignal(r, ntaps)
				f, err := NewBatchFIRFromPTX(taps, complex, batchPTX())
				if err != nil {
					t.Fatal(err)
				}
				for _, nout := range []int{1, 7, 1000, 1<<16 + 3} {
					name := fmt.Sprintf("complex=%v/taps=%d/nout=%d", complex, ntaps, nout)
					x := randSignal(r, nout*ch)
					checkClose(t, name, batchFilter(t, f, x, 0, 0), filter.Convolve(taps, x, complex), 1e-5)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// Misaligned pointers take the scalar load and store paths; long filters
// need more than 48 KiB of shared memory.
func TestBatchFIRMisalignedAndLong(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	withBatchContext(t, func() {
		for _, tc := range []struct {
			taps, nout, inOff, outOff int
			complex                   bool
		}{
			{129, 5000, 1, 0, false},
			{129, 5000, 0, 1, false},
			{64, 4097, 3, 2, true},
			{1024, 3001, 1, 3, true},
			{4096, 3001, 0, 0, false},
			{BatchMaxTaps, 2000, 0, 0, true},
		} {
			name := fmt.Sprintf("%+v", tc)
			ch := 1
			if tc.complex {
				ch = 2
			}
			taps := randSignal(r, tc.taps)
			for i := range taps {
				taps[i] /= float32(math.Sqrt(float64(tc.taps)))
			}
			f, err := NewBatchFIRFromPTX(taps, tc.complex, batchPTX())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			x := randSignal(r, tc.nout*ch)
			checkClose(t, name, batchFilter(t, f, x, tc.inOff, tc.outOff), filter.Convolve(taps, x, tc.complex), 1e-5)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Consecutive Launches over [history | chunk] buffers, the history carried
// on the device from one chunk to the next, must equal one long filter:
// the streaming pipeline's use.
func TestBatchFIRChunkedCarriesHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	chunks := []int{1000, 1, 7, 4096, 333, 2, 1 << 14, 5}
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			for _, ntaps := range []int{1, 16, 129, 1024} {
				name := fmt.Sprintf("complex=%v/taps=%d", complex, ntaps)
				ch := 1
				if complex {
					ch = 2
				}
				taps := randSignal(r, ntaps)
				f, err := NewBatchFIRFromPTX(taps, complex, batchPTX())
				if err != nil {
					t.Fatal(err)
				}
				total, maxChunk := 0, 0
				for _, c := range chunks {
					total += c
					maxChunk = max(maxChunk, c)
				}
				x := randSignal(r, total*ch)
				hist := f.HistoryValues()
				var buf [2]cudrv.DevicePtr
				for i := range buf {
					buf[i] = devBuf(t, hist+maxChunk*ch)
				}
				if hist > 0 {
					if err := cudrv.MemsetD32(buf[0], 0, int64(hist)); err != nil {
						t.Fatal(err)
					}
				}
				dout := devBuf(t, maxChunk*ch)
				var got []float32
				pos := 0
				for i, c := range chunks {
					cur, nxt := buf[i%2], buf[(i+1)%2]
					toDev(t, cur+cudrv.DevicePtr(4*hist), x[pos*ch:(pos+c)*ch])
					if err := f.Launch(cudrv.Stream{}, cur, dout, c); err != nil {
						t.Fatal(err)
					}
					// The next history is the last hist values of [history | chunk].
					if hist > 0 {
						if err := cudrv.MemcpyDtoD(nxt, cur+cudrv.DevicePtr(4*c*ch), int64(hist)*4); err != nil {
							t.Fatal(err)
						}
					}
					if err := cudrv.Synchronize(); err != nil {
						t.Fatalf("%s: chunk %d: %v", name, i, err)
					}
					y := make([]float32, c*ch)
					fromDev(t, y, dout)
					got = append(got, y...)
					pos += c
				}
				checkClose(t, name, got, filter.Convolve(taps, x, complex), 1e-5)
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestBatchFIRRejectsBadInput(t *testing.T) {
	withBatchContext(t, func() {
		for _, tc := range []struct {
			name string
			taps []float32
			want string
		}{
			{"no taps", nil, "no taps"},
			{"too many", make([]float32, BatchMaxTaps+1), "exceeds the limit"},
			{"nan", []float32{1, float32(math.NaN())}, "tap 1"},
			{"inf", []float32{float32(math.Inf(1))}, "tap 0"},
		} {
			if _, err := NewBatchFIR(tc.taps, false); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
			}
		}
		f, err := NewBatchFIRFromPTX([]float32{1, 2, 3}, false, batchPTX())
		if err != nil {
			t.Fatal(err)
		}
		buf := devBuf(t, 64)
		if err := f.Launch(cudrv.Stream{}, buf, buf+128, -1); err == nil {
			t.Error("nout -1 accepted")
		}
		if err := f.Launch(cudrv.Stream{}, 0, buf, 4); err == nil {
			t.Error("nil input accepted")
		}
		if err := f.Launch(cudrv.Stream{}, buf, buf+128, 0); err != nil {
			t.Errorf("nout 0: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := f.Launch(cudrv.Stream{}, buf, buf+128, 4); err == nil {
			t.Error("launch after Close accepted")
		}
		if _, err := NewBatchFIRFromPTX([]float32{1}, false, "/nonexistent.ptx"); err == nil {
			t.Error("missing PTX file accepted")
		}
	})
}

func TestBatchFIRThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			for _, ntaps := range []int{129, 1024} {
				taps := randSignal(r, ntaps)
				f, err := NewBatchFIRFromPTX(taps, complex, batchPTX())
				if err != nil {
					t.Fatal(err)
				}
				if f.Threads() != 128 {
					t.Errorf("default threads %d, want 128", f.Threads())
				}
				for _, bad := range []int{0, 31, 100, 512} {
					if err := f.SetThreads(bad); err == nil {
						t.Errorf("SetThreads(%d) accepted", bad)
					}
				}
				x := randSignal(r, 10007*ch)
				want := filter.Convolve(taps, x, complex)
				for _, n := range []int{32, 64, 256} {
					if err := f.SetThreads(n); err != nil {
						t.Fatal(err)
					}
					if got, want := f.Blocks(10007), (10007*ch+n*12-1)/(n*12); got != want {
						t.Errorf("threads %d: %d blocks, want %d", n, got, want)
					}
					name := fmt.Sprintf("complex=%v/taps=%d/threads=%d", complex, ntaps, n)
					checkClose(t, name, batchFilter(t, f, x, 0, 0), want, 1e-5)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
