package filter

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// tolerance is the largest |FIR - Convolve| accepted: float32 sums in a
// different order than the float64 reference, so allow 1e-5 of the
// output RMS times sqrt(ntaps) (the growth of random rounding error),
// plus a floor for all-zero outputs.
func tolerance(ref []float32, ntaps int) float64 {
	var ss float64
	for _, v := range ref {
		ss += float64(v) * float64(v)
	}
	rms := math.Sqrt(ss / float64(max(1, len(ref))))
	return 1e-5*rms*math.Sqrt(float64(ntaps)) + 1e-30
}

func assertClose(t *testing.T, got, want []float32, ntaps int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("len = %d, want %d", len(got), len(want))
	}
	tol := tolerance(want, ntaps)
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol) {
			t.Fatalf("y[%d] = %g, want %g (|diff| %g > tol %g)", i, got[i], want[i], d, tol)
		}
	}
}

// splits cuts n samples into blocks of the sizes named by style.
func splits(rng *rand.Rand, n, ntaps, maxBlock int, style string) []int {
	var out []int
	for n > 0 {
		var b int
		switch style {
		case "one":
			b = n
		case "single":
			b = 1
		case "short": // shorter than the tap count
			b = 1 + rng.IntN(max(1, ntaps-1))
		case "random":
			b = 1 + rng.IntN(maxBlock)
		case "max":
			b = maxBlock
		}
		b = min(b, n, maxBlock)
		out = append(out, b)
		n -= b
	}
	return out
}

func TestFIRMatchesConvolve(t *testing.T) {
	tapLens := []int{1, 2, 3, 7, 16, 64, 129, 512, 2100}
	styles := []string{"one", "single", "short", "random", "max"}
	for _, kern := range availableKernels() {
		for _, complex := range []bool{false, true} {
			for _, nt := range tapLens {
				for _, style := range styles {
					name := fmt.Sprintf("%v/complex=%v/taps=%d/%s", kern, complex, nt, style)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(nt), uint64(len(style))))
						ch := 1
						if complex {
							ch = 2
						}
						nSamples := 1500 + rng.IntN(300)
						if style == "single" {
							nSamples = 700
						}
						maxBlock := nSamples
						if style == "random" || style == "max" {
							maxBlock = 333 // odd, not a multiple of any vector width
						}
						taps := randSlice(rng, nt)
						x := randSlice(rng, nSamples*ch)
						want := Convolve(taps, x, complex)
						f, err := NewFIR(taps, complex, maxBlock)
						if err != nil {
							t.Fatal(err)
						}
						f.kern = kern
						got := make([]float32, len(x))
						pos := 0
						for _, b := range splits(rng, nSamples, nt, maxBlock, style) {
							if err := f.Process(got[pos:pos+b*ch], x[pos:pos+b*ch]); err != nil {
								t.Fatal(err)
							}
							pos += b * ch
						}
						assertClose(t, got, want, nt)
					})
				}
			}
		}
	}
}

// TestFIRBlockLengths covers every block length around the vector and
// wide-pass widths, where the kernels switch between code paths.
func TestFIRBlockLengths(t *testing.T) {
	for _, kern := range availableKernels() {
		for _, complex := range []bool{false, true} {
			for _, nt := range []int{1, 5, 17, 33, 64, 97, 129} {
				t.Run(fmt.Sprintf("%v/complex=%v/taps=%d", kern, complex, nt), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(7, uint64(nt)))
					taps := randSlice(rng, nt)
					ch := 1
					if complex {
						ch = 2
					}
					for n := 1; n <= 300; n++ {
						x := randSlice(rng, 3*n*ch)
						want := Convolve(taps, x, complex)
						f, err := NewFIR(taps, complex, n)
						if err != nil {
							t.Fatal(err)
						}
						f.kern = kern
						got := make([]float32, len(x))
						for b := 0; b < 3; b++ {
							blk := x[b*n*ch : (b+1)*n*ch]
							if err := f.Process(got[b*n*ch:(b+1)*n*ch], blk); err != nil {
								t.Fatal(err)
							}
						}
						assertClose(t, got, want, nt)
					}
				})
			}
		}
	}
}

func TestFIRInPlace(t *testing.T) {
	for _, kern := range availableKernels() {
		for _, complex := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/complex=%v", kern, complex), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				taps := randSlice(rng, 129)
				x := randSlice(rng, 4000)
				want := Convolve(taps, x, complex)
				maxBlock := 1000 // values per block below; IQ pairs when complex
				if complex {
					maxBlock = 500
				}
				f, err := NewFIR(taps, complex, maxBlock)
				if err != nil {
					t.Fatal(err)
				}
				f.kern = kern
				buf := append([]float32(nil), x...)
				for pos := 0; pos < len(buf); pos += 1000 {
					blk := buf[pos : pos+1000]
					if err := f.Process(blk, blk); err != nil {
						t.Fatal(err)
					}
				}
				assertClose(t, buf, want, len(taps))
			})
		}
	}
}

// TestFIRReadsTheBlockWhereItLies: both methods read a block that dst
// does not overlap where it lies (the fft method behind the history, the
// direct method past a head copied behind it), and an overlapping one
// from a copy. Both give the same bits, block after block, on blocks
// longer and shorter than the history, with every direct kernel.
func TestFIRReadsTheBlockWhereItLies(t *testing.T) {
	type run struct {
		method Method
		kern   kernelKind
	}
	runs := []run{{MethodFFT, bestKernel}}
	for _, k := range availableKernels() {
		runs = append(runs, run{MethodDirect, k})
	}
	for _, r := range runs {
		for _, complex := range []bool{false, true} {
			for _, ntaps := range []int{1, 2, 129, 257, 300, 513, 1025, 2100} {
				// Longer and shorter than the history (ntaps-1), as long, one
				// more, odd, and either side of the direct method's least
				// block read in place (a head of whole groups covering the
				// history, then one more group).
				least := (ntaps-1+directAlign-1)/directAlign*directAlign + directAlign
				for _, block := range []int{4096, 700, 100, max(ntaps-1, 1), ntaps, 1001, least, least - 1} {
					if r.method == MethodFFT && ntaps == 1 {
						continue
					}
					t.Run(fmt.Sprintf("%v/%v/complex=%v/taps=%d/block=%d", r.method, r.kern, complex, ntaps, block), func(t *testing.T) {
						rng := rand.New(rand.NewPCG(5, uint64(ntaps)))
						taps := randSlice(rng, ntaps)
						ch := channelsOf(complex)
						x := randSlice(rng, 6*block*ch)
						var fs [2]*FIR
						for i := range fs {
							f, err := NewFIRMethod(taps, complex, block, r.method)
							if err != nil {
								t.Fatal(err)
							}
							f.kern = r.kern
							fs[i] = f
						}
						apart, copied := fs[0], fs[1]
						got := make([]float32, len(x))
						want := append([]float32(nil), x...)
						for pos := 0; pos < len(x); pos += block * ch {
							if err := apart.Process(got[pos:pos+block*ch], x[pos:pos+block*ch]); err != nil {
								t.Fatal(err)
							}
							if err := copied.Process(want[pos:pos+block*ch], want[pos:pos+block*ch]); err != nil {
								t.Fatal(err)
							}
						}
						for i := range got {
							if got[i] != want[i] {
								t.Fatalf("value %d: %v read in place, %v from a copy", i, got[i], want[i])
							}
						}
						if block == 4096 { // the copy route's own accuracy: TestFIRMatchesConvolve
							assertClose(t, got, Convolve(taps, x, complex), ntaps)
						}
					})
				}
			}
		}
	}
}

// TestDirectAlignHoldsTheWidestPass: every kernel sums each output of a
// call alike when the call is cut at a multiple of directAlign outputs
// into parts of at least directAlign outputs, which the split and the
// direct method's in-place read rely on. A kernel whose widest pass
// needs more values than directAlign outputs hold fails here.
func TestDirectAlignHoldsTheWidestPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, k := range availableKernels() {
		for _, ch := range []int{1, 2} {
			for _, ntaps := range []int{1, 8, 33, 129} {
				rev := randSlice(rng, ntaps)
				for _, n := range []int{2 * directAlign, 3*directAlign - 1, 4*directAlign + 17} {
					buf := randSlice(rng, ch*(n+ntaps-1))
					whole := make([]float32, ch*n)
					runKernel(k, ch, whole, buf, rev)
					for cut := directAlign; n-cut >= directAlign; cut += directAlign {
						parts := make([]float32, ch*n)
						runKernel(k, ch, parts[:ch*cut], buf[:ch*(cut+ntaps-1)], rev)
						runKernel(k, ch, parts[ch*cut:], buf[ch*cut:], rev)
						for i := range whole {
							if whole[i] != parts[i] {
								t.Fatalf("%v, %d values a sample, %d taps, %d outputs cut at %d: value %d %v, one call %v",
									k, ch, ntaps, n, cut, i, parts[i], whole[i])
							}
						}
					}
				}
			}
		}
	}
}

func TestFIRImpulse(t *testing.T) {
	// An impulse must reproduce the taps exactly, then zeros: no delay
	// compensation and no gain.
	taps := []float32{0.5, -0.25, 0.125, 1, 2}
	for _, kern := range availableKernels() {
		f, err := NewFIR(taps, false, 64)
		if err != nil {
			t.Fatal(err)
		}
		f.kern = kern
		x := make([]float32, 64)
		x[0] = 1
		y := make([]float32, 64)
		if err := f.Process(y, x); err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			want := float32(0)
			if i < len(taps) {
				want = taps[i]
			}
			if v != want {
				t.Fatalf("%v: y[%d] = %g, want %g", kern, i, v, want)
			}
		}
	}
}

func TestFIRReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	taps := randSlice(rng, 33)
	for _, complex := range []bool{false, true} {
		f, err := NewFIR(taps, complex, 256)
		if err != nil {
			t.Fatal(err)
		}
		x := randSlice(rng, 256)
		first := make([]float32, 256)
		second := make([]float32, 256)
		if err := f.Process(first, x); err != nil {
			t.Fatal(err)
		}
		f.Reset()
		if err := f.Process(second, x); err != nil {
			t.Fatal(err)
		}
		for i := range first {
			if first[i] != second[i] {
				t.Fatalf("complex=%v: after Reset y[%d] = %g, want %g", complex, i, second[i], first[i])
			}
		}
	}
}

func TestFIRAccessors(t *testing.T) {
	taps := []float32{1, 2, 3}
	f, err := NewFIR(taps, true, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Taps()
	got[0] = 99
	if f.Taps()[0] != 1 {
		t.Error("Taps returned the internal slice")
	}
	taps[1] = 42
	if f.Taps()[1] != 2 {
		t.Error("NewFIR kept the caller's slice")
	}
	if !f.Complex() || f.MaxBlock() != 10 {
		t.Errorf("Complex() = %v, MaxBlock() = %d", f.Complex(), f.MaxBlock())
	}
}

func TestNewFIRErrors(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	tests := []struct {
		name     string
		taps     []float32
		maxBlock int
		want     error
		msg      string
	}{
		{"nil taps", nil, 16, ErrNoTaps, "no taps"},
		{"empty taps", []float32{}, 16, ErrNoTaps, "no taps"},
		{"NaN tap", []float32{1, nan, 2}, 16, ErrBadTap, "tap 1"},
		{"Inf tap", []float32{inf}, 16, ErrBadTap, "tap 0"},
		{"zero maxBlock", []float32{1}, 0, ErrMaxBlock, "got 0"},
		{"negative maxBlock", []float32{1}, -3, ErrMaxBlock, "got -3"},
		{"huge maxBlock", []float32{1}, 1 << 40, ErrMaxBlock, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFIR(tc.taps, false, tc.maxBlock)
			if f != nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("NewFIR = %v, %v; want nil, %v containing %q", f, err, tc.want, tc.msg)
			}
		})
	}
}

func TestProcessErrors(t *testing.T) {
	real, err := NewFIR([]float32{1, 2}, false, 8)
	if err != nil {
		t.Fatal(err)
	}
	cplx, err := NewFIR([]float32{1, 2}, true, 8)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		f        *FIR
		dst, src int
		msg      string
	}{
		{"dst shorter", real, 3, 4, "len(dst)=3 != len(src)=4"},
		{"dst longer", real, 5, 4, "len(dst)=5 != len(src)=4"},
		{"over maxBlock", real, 9, 9, "9 samples exceeds maxBlock 8"},
		{"complex odd", cplx, 5, 5, "odd length 5"},
		{"complex over maxBlock", cplx, 18, 18, "9 IQ samples exceeds maxBlock 8"},
		{"complex mismatch", cplx, 4, 6, "len(dst)=4 != len(src)=6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Process(make([]float32, tc.dst), make([]float32, tc.src))
			if !errors.Is(err, ErrBlockLength) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Process = %v; want ErrBlockLength containing %q", err, tc.msg)
			}
		})
	}
	// A rejected call must not disturb the state.
	x := []float32{1, 0, 0, 0}
	y := make([]float32, 4)
	if err := real.Process(y, x); err != nil {
		t.Fatal(err)
	}
	if y[0] != 1 || y[1] != 2 || y[2] != 0 {
		t.Fatalf("after errors, impulse response = %v, want [1 2 0 0]", y)
	}
	if err := real.Process(nil, nil); err != nil {
		t.Fatalf("empty block: %v", err)
	}
}

func TestConvolve(t *testing.T) {
	tests := []struct {
		name    string
		taps, x []float32
		complex bool
		want    []float32
	}{
		{"real", []float32{1, 2}, []float32{1, 1, 1}, false, []float32{1, 3, 3}},
		{"complex", []float32{1, 2}, []float32{1, 10, 0, 0, 0, 0}, true, []float32{1, 10, 2, 20, 0, 0}},
		{"empty taps", nil, []float32{1}, false, nil},
		{"odd complex", []float32{1}, []float32{1, 2, 3}, true, nil},
		{"empty input", []float32{1}, []float32{}, false, []float32{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Convolve(tc.taps, tc.x, tc.complex)
			if (got == nil) != (tc.want == nil) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Convolve = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProcessAllocs(t *testing.T) {
	for _, complex := range []bool{false, true} {
		f, err := NewFIR(make([]float32, 129), complex, 4096)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, 8192)
		if !complex {
			buf = buf[:4096]
		}
		if a := testing.AllocsPerRun(20, func() { _ = f.Process(buf, buf) }); a != 0 {
			t.Errorf("complex=%v: %v allocs per Process, want 0", complex, a)
		}
	}
}

func TestMaxErrRMS(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		got, want []float32
		e         float64
	}{
		{[]float32{1, -1}, []float32{1, -1}, 0},
		{[]float32{1.5, -1}, []float32{1, -1}, 0.5},
		{[]float32{0, 0.25}, []float32{0, 0}, 0.25},
		{[]float32{nan, 1}, []float32{1, 1}, math.Inf(1)},
		{[]float32{1}, []float32{1, 1}, math.Inf(1)},
	} {
		if e := MaxErrRMS(tc.got, tc.want); e != tc.e {
			t.Errorf("MaxErrRMS(%v, %v) = %g, want %g", tc.got, tc.want, e, tc.e)
		}
	}
}
