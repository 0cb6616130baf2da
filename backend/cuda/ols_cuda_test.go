//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

// The overlap-save tests run small cases first, so a first run on a GPU
// says where it breaks: cuFFT loading, then one transform, then longer
// filters, chunked passes and the streaming transport.

func olsPTX() string {
	if d := os.Getenv("SIGPROC_PTX_DIR"); d != "" {
		return d + "/ols.ptx"
	}
	return ""
}

// launcher is what BatchFIR and OLSFIR share.
type launcher interface {
	HistoryValues() int
	Channels() int
	Launch(cudrv.Stream, cudrv.DevicePtr, cudrv.DevicePtr, int) error
}

// runFilter runs f once over x behind hist (zeros when nil), checks that
// nothing outside the output was written, and returns the output.
func runFilter(t *testing.T, f launcher, hist, x []float32) []float32 {
	t.Helper()
	return runFilterAt(t, f, hist, x, 0)
}

// runFilterAt is runFilter with the input skew float32 values past the
// start of its allocation (skew 1 puts a block at 4 mod 8 bytes).
func runFilterAt(t *testing.T, f launcher, hist, x []float32, skew int) []float32 {
	t.Helper()
	if hist == nil {
		hist = make([]float32, f.HistoryValues())
	}
	nout := len(x) / f.Channels()
	dbuf := devBuf(t, skew+len(hist)+len(x))
	din := dbuf + cudrv.DevicePtr(4*skew)
	toDev(t, din, append(append([]float32(nil), hist...), x...))
	dout := devBuf(t, len(x)+8)
	if err := cudrv.MemsetD32(dout, 0xffffffff, int64(len(x)+8)); err != nil { // NaN
		t.Fatal(err)
	}
	if err := f.Launch(cudrv.Stream{}, din, dout, nout); err != nil {
		t.Fatal(err)
	}
	if err := cudrv.Synchronize(); err != nil {
		t.Fatalf("kernels: %v", err)
	}
	got := make([]float32, len(x)+8)
	fromDev(t, got, dout)
	for i, v := range got[len(x):] {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("value %d past the output was overwritten with %v", i, v)
		}
	}
	if err := cudrv.MemFree(dbuf); err != nil {
		t.Fatal(err)
	}
	if err := cudrv.MemFree(dout); err != nil {
		t.Fatal(err)
	}
	return got[:len(x)]
}

// explain logs where got departs from want most, for a first GPU run.
func explain(t *testing.T, name string, got, want []float32) {
	t.Helper()
	worst, wi := 0.0, 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > worst || math.IsNaN(d) {
			worst, wi = d, i
			if math.IsNaN(d) {
				break
			}
		}
	}
	lo, hi := max(0, wi-3), min(len(got), wi+4)
	t.Logf("%s: worst at %d of %d: got %v want %v (around: got %v want %v); error/RMS %.3g",
		name, wi, len(got), got[wi], want[wi], got[lo:hi], want[lo:hi], filter.MaxErrRMS(got, want))
}

func checkOLSOut(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if e := filter.MaxErrRMS(got, want); !(e <= 1e-5) {
		explain(t, name, got, want)
		t.Fatalf("%s: max error %g of the output RMS > 1e-5", name, e)
	}
}

func TestOLSLoadCuFFT(t *testing.T) {
	lib, err := cudrv.LoadCuFFT()
	if err != nil {
		t.Fatalf("%v (set %s, scripts/find-cufft.py finds it)", err, cudrv.CuFFTEnv)
	}
	t.Logf("cuFFT %s, version %d", lib.Path, lib.Version)
}

// TestOLSFIRSmall is one segment, then a few, with every output printed
// on failure.
func TestOLSFIRSmall(t *testing.T) {
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			taps := []float32{0.5, 0.25, -0.125, 1}
			f, err := NewOLSFIR(taps, complex, OLSOptions{FFTSize: 8, PTXPath: olsPTX()})
			if err != nil {
				t.Fatal(err)
			}
			for _, nout := range []int{1, 5, 6, 13} {
				x := make([]float32, nout*ch)
				for i := range x {
					x[i] = float32(i + 1)
				}
				got := runFilter(t, f, nil, x)
				want := filter.Convolve(taps, x, complex)
				if e := filter.MaxErrRMS(got, want); !(e <= 1e-6) {
					t.Fatalf("complex=%v nout=%d: got %v\nwant %v", complex, nout, got, want)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestOLSFIRAcrossContexts makes, uses and destroys a context three times
// in a row, as the tests and successive runs do: cuFFT's runtime attaches
// to each driver-API context in turn and must not keep state of a
// destroyed one.
func TestOLSFIRAcrossContexts(t *testing.T) {
	taps := []float32{1, -2, 3, 0.5, 0.25}
	x := make([]float32, 3000)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	want := filter.Convolve(taps, x, false)
	for round := range 3 {
		withBatchContext(t, func() {
			f, err := NewOLSFIR(taps, false, OLSOptions{PTXPath: olsPTX()})
			if err != nil {
				t.Fatalf("context %d: %v", round, err)
			}
			defer f.Close()
			checkOLSOut(t, fmt.Sprintf("context %d", round), runFilter(t, f, nil, x), want)
		})
	}
}

// TestOLSFIRMatchesConvolve covers 1 to 16384 taps, the automatic and
// forced transform sizes, and passes split into chunks, against the
// float64 convolution and, where it takes the filter, the direct kernel.
func TestOLSFIRMatchesConvolve(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			for _, tc := range []struct {
				taps, fft, chunk, nout int
				strided                bool
			}{
				{1, 0, 0, 1000, false},
				{2, 0, 0, 4097, false},
				{16, 0, 0, 1<<16 + 3, false},
				{16, 32, 100, 5000, false}, // many small passes
				{16, 32, 100, 5000, true},
				{64, 0, 0, 100000, false},
				{129, 0, 0, 100000, false},
				{129, 0, 20000, 100000, true},
				{257, 0, 5000, 100000, false},
				{513, 1024, 0, 50000, false},
				{1025, 0, 0, 100000, false},
				{1025, 0, 30000, 100000, true},
				{2049, 0, 0, 50000, false},
				{4096, 0, 0, 50000, false},
				{4096, 4096, 0, 30000, false},
				{4096, 0, 40000, 100000, true},
				{8192, 0, 40000, 60000, false},
				{16384, 0, 0, 40000, false},
			} {
				name := fmt.Sprintf("complex=%v/taps=%d/fft=%d/chunk=%d/nout=%d/strided=%v", complex, tc.taps, tc.fft, tc.chunk, tc.nout, tc.strided)
				taps := randSignal(r, tc.taps)
				x := randSignal(r, tc.nout*ch)
				f, err := NewOLSFIR(taps, complex, OLSOptions{FFTSize: tc.fft, ChunkValues: tc.chunk, Strided: tc.strided, PTXPath: olsPTX()})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := runFilter(t, f, nil, x)
				want := filter.Convolve(taps, x, complex)
				checkOLSOut(t, name, got, want)
				if tc.taps <= BatchMaxTaps {
					d, err := NewBatchFIRFromPTX(taps, complex, batchPTX())
					if err != nil {
						t.Fatal(err)
					}
					direct := runFilter(t, d, nil, x)
					if e := filter.MaxErrRMS(got, direct); e > 2e-5 {
						explain(t, name+" fft vs direct", got, direct)
						t.Errorf("%s: fft and direct differ by %g of the output RMS", name, e)
					}
					if err := d.Close(); err != nil {
						t.Fatal(err)
					}
				}
				t.Logf("%s: fft %d, %d segments per pass, error/RMS %.2g", name, f.FFTSize(), f.SegmentsPerPass(),
					filter.MaxErrRMS(got, want))
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestOLSFIRStridedAlignment runs the strided forward transform where a
// pass starts at 4 mod 8 bytes, which cuFFT refuses (CUFFT_INVALID_VALUE,
// as TestOLSFIRMatchesConvolve's fft=32/chunk=100 case got on the H200):
// real segments of an odd length, one per pass, and blocks that start at
// 4 mod 8. Such passes must gather instead and still match.
func TestOLSFIRStridedAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	withBatchContext(t, func() {
		for _, tc := range []struct {
			complex          bool
			taps, fft, chunk int
			nout, skew       int
		}{
			{false, 16, 32, 100, 5000, 0}, // 4 segments of 17 a pass
			{false, 16, 32, 100, 5000, 1}, // ... from a block at 4 mod 8
			{false, 16, 32, 20, 1000, 0},  // 1 segment of 17 a pass
			{false, 16, 32, 20, 1000, 1},  // ... from a block at 4 mod 8
			{false, 4096, 0, 40000, 100000, 0},
			{false, 4096, 0, 40000, 100000, 1},
			{true, 16, 32, 100, 5000, 0},
			{false, 1, 2, 3, 100, 1}, // l 2: every pass is misaligned
		} {
			name := fmt.Sprintf("complex=%v/taps=%d/fft=%d/chunk=%d/nout=%d/skew=%d", tc.complex, tc.taps, tc.fft, tc.chunk, tc.nout, tc.skew)
			ch := 1
			if tc.complex {
				ch = 2
			}
			taps := randSignal(r, tc.taps)
			x := randSignal(r, tc.nout*ch)
			f, err := NewOLSFIR(taps, tc.complex, OLSOptions{FFTSize: tc.fft, ChunkValues: tc.chunk, Strided: true, PTXPath: olsPTX()})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := runFilterAt(t, f, nil, x, tc.skew)
			checkOLSOut(t, name, got, filter.Convolve(taps, x, tc.complex))
			t.Logf("%s: fft %d, %d segments per pass", name, f.FFTSize(), f.SegmentsPerPass())
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestOLSFusedMatchesConvolve checks the fused shared-memory kernel
// (OLSOptions.Fused), smallest transforms first.
func TestOLSFusedMatchesConvolve(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			for _, tc := range []struct{ taps, fft, nout int }{
				{4, 8, 13}, {4, 8, 1000}, {16, 0, 5000}, {64, 0, 70000}, {129, 0, 100000}, {257, 0, 100000},
				{513, 0, 100000}, {1025, 0, 100000}, {2048, 0, 50000}, {100, 4096, 30000},
			} {
				for _, r4 := range []bool{false, true} {
					if testing.Short() && tc.nout > 5000 {
						continue // the sanitizer run: small cases only
					}
					name := fmt.Sprintf("complex=%v/taps=%d/fft=%d/nout=%d/r4=%v", complex, tc.taps, tc.fft, tc.nout, r4)
					taps := randSignal(r, tc.taps)
					x := randSignal(r, tc.nout*ch)
					f, err := NewOLSFIR(taps, complex, OLSOptions{FFTSize: tc.fft, Fused: true, Radix4: r4, PTXPath: olsPTX()})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got := runFilter(t, f, nil, x)
					want := filter.Convolve(taps, x, complex)
					if tc.nout < 20 {
						t.Logf("%s: got %v want %v", name, got, want)
					}
					checkOLSOut(t, name, got, want)
					t.Logf("%s: %s %d points, error/RMS %.2g", name, f.LibraryPath(), f.FFTSize(), filter.MaxErrRMS(got, want))
					if err := f.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if _, err := NewOLSFIR(make([]float32, 4096), false, OLSOptions{Fused: true}); err == nil {
			t.Error("fused kernel accepted a 16384-point transform")
		}
	})
}

// TestOLSFIRRandomSplits streams x through one OLSFIR in random block
// sizes, carrying the history on the host, and compares with the whole
// convolution: the streaming contract holds for any split.
func TestOLSFIRRandomSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	withBatchContext(t, func() {
		for _, complex := range []bool{false, true} {
			ch := 1
			if complex {
				ch = 2
			}
			for i, ntaps := range []int{16, 100, 1000, 5000} {
				strided := i%2 == 1
				name := fmt.Sprintf("complex=%v/taps=%d/strided=%v", complex, ntaps, strided)
				taps := randSignal(r, ntaps)
				x := randSignal(r, 60000*ch)
				f, err := NewOLSFIR(taps, complex, OLSOptions{MaxSamples: 7000, Strided: strided, Fused: ntaps == 100, PTXPath: olsPTX()})
				if err != nil {
					t.Fatal(err)
				}
				hist := make([]float32, f.HistoryValues())
				var got []float32
				for pos := 0; pos < len(x); {
					n := min(len(x)-pos, ch*(1+r.IntN(7000)))
					blk := x[pos : pos+n]
					got = append(got, runFilter(t, f, hist, blk)...)
					all := append(append([]float32(nil), hist...), blk...)
					copy(hist, all[len(all)-len(hist):])
					pos += n
				}
				checkOLSOut(t, name, got, filter.Convolve(taps, x, complex))
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestOLSFIRRejectsBadInput(t *testing.T) {
	withBatchContext(t, func() {
		for _, tc := range []struct {
			name string
			taps []float32
			o    OLSOptions
		}{
			{"no taps", nil, OLSOptions{}},
			{"nan tap", []float32{1, float32(math.Inf(1))}, OLSOptions{}},
			{"fft shorter than taps", make([]float32, 100), OLSOptions{FFTSize: 64}},
			{"negative chunk", []float32{1}, OLSOptions{ChunkValues: -1}},
		} {
			if f, err := NewOLSFIR(tc.taps, false, tc.o); err == nil {
				f.Close()
				t.Errorf("%s: accepted", tc.name)
			}
		}
		f, err := NewOLSFIR([]float32{1, 2}, false, OLSOptions{PTXPath: olsPTX()})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Launch(cudrv.Stream{}, 0, 0, 10); err == nil {
			t.Error("nil pointers accepted")
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Launch(cudrv.Stream{}, 1, 1, 10); err == nil {
			t.Error("launch after close accepted")
		}
	})
}

// TestExplicitFFTMatchesCPU runs the explicit transport with method fft
// (and auto past the direct kernel's limit) through the pipeline.
func TestExplicitFFTMatchesCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct {
		method             filter.Method
		slots, taps, block int
		complex            bool
	}{
		{filter.MethodFFT, 4, 16, 1000, false},
		{filter.MethodFFT, 8, 257, 999, true},
		{filter.MethodFFT, 16, 4096, 1 << 14, false},
		{filter.MethodFFT, 64, 1025, 777, true}, // history longer than a block
		{filter.MethodAuto, 8, 4096, 1 << 13, true},
		{filter.MethodAuto, 8, 16384, 1 << 13, false}, // beyond the direct kernel
	} {
		t.Run(fmt.Sprintf("%v/slots=%d/taps=%d/block=%d/complex=%v", tc.method, tc.slots, tc.taps, tc.block, tc.complex), func(t *testing.T) {
			ch := 1
			if tc.complex {
				ch = 2
			}
			samples := tc.block*9 + tc.block/3
			taps := randSignal(r, tc.taps)
			x := randSignal(r, samples*ch)
			o := testOptions(TransportExplicit)
			o.Method = tc.method
			be, err := NewBackend(taps, tc.complex, o)
			if err != nil {
				t.Fatal(err)
			}
			snk := &collect{}
			st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
				pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Slots: tc.slots}, pipeline.Options{})
			if cerr := be.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.SamplesOut != uint64(samples) || st.DroppedBlocks != 0 || st.Gaps != 0 {
				t.Fatalf("stats %+v", st)
			}
			checkOLSOut(t, "explicit fft", snk.got, filter.Convolve(taps, x, tc.complex))
		})
	}
}
