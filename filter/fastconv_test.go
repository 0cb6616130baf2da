package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// runSplit feeds x to f in the blocks named by style and returns the
// output.
func runSplit(t *testing.T, f *FIR, x []float32, rng *rand.Rand, style string) []float32 {
	t.Helper()
	ch := f.channels()
	got := make([]float32, len(x))
	pos := 0
	for _, b := range splits(rng, len(x)/ch, len(f.taps), f.max, style) {
		if err := f.Process(got[pos:pos+b*ch], x[pos:pos+b*ch]); err != nil {
			t.Fatal(err)
		}
		pos += b * ch
	}
	return got
}

// TestMethodSwitchInvisible runs the same stream through the direct and
// the fft method, each with its own random block split, and checks both
// against the float64 reference and each other.
func TestMethodSwitchInvisible(t *testing.T) {
	for _, complex := range []bool{false, true} {
		for _, nt := range []int{1, 2, 3, 16, 63, 129, 300, 1025} {
			for _, maxBlock := range []int{1, 7, 333, 4096} {
				t.Run(fmt.Sprintf("complex=%v/taps=%d/max=%d", complex, nt, maxBlock), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(nt), uint64(maxBlock)))
					ch := 1
					if complex {
						ch = 2
					}
					n := 3000 + rng.IntN(3000)
					if maxBlock == 1 {
						n = 600
					}
					taps := randSlice(rng, nt)
					x := randSlice(rng, n*ch)
					want := Convolve(taps, x, complex)
					var outs [2][]float32
					for i, m := range []Method{MethodDirect, MethodFFT} {
						f, err := NewFIRMethod(taps, complex, maxBlock, m)
						if err != nil {
							t.Fatal(err)
						}
						if f.Method() != m {
							t.Fatalf("Method() = %v, want %v", f.Method(), m)
						}
						outs[i] = runSplit(t, f, x, rng, "random")
						assertClose(t, outs[i], want, nt)
					}
					if e := MaxErrRMS(outs[1], outs[0]); e > 1e-5 {
						t.Fatalf("fft vs direct: max error %.3g of RMS", e)
					}
				})
			}
		}
	}
}

// TestFFTMethodSplits covers every split style on the fft method, with
// in-place blocks and a Reset in the middle.
func TestFFTMethodSplits(t *testing.T) {
	for _, complex := range []bool{false, true} {
		for _, nt := range []int{5, 64, 129, 513} {
			for _, style := range []string{"one", "single", "short", "random", "max"} {
				t.Run(fmt.Sprintf("complex=%v/taps=%d/%s", complex, nt, style), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(nt), 99))
					ch := 1
					if complex {
						ch = 2
					}
					n := 2000
					if style == "single" {
						n = 300
					}
					maxBlock := n
					if style == "random" || style == "max" {
						maxBlock = 333
					}
					taps := randSlice(rng, nt)
					x := randSlice(rng, n*ch)
					f, err := NewFIRMethod(taps, complex, maxBlock, MethodFFT)
					if err != nil {
						t.Fatal(err)
					}
					junk := randSlice(rng, min(maxBlock, 50)*ch)
					if err := f.Process(junk, junk); err != nil {
						t.Fatal(err)
					}
					f.Reset()
					buf := append([]float32(nil), x...)
					pos := 0
					for _, b := range splits(rng, n, nt, maxBlock, style) {
						blk := buf[pos : pos+b*ch]
						if err := f.Process(blk, blk); err != nil { // in place
							t.Fatal(err)
						}
						pos += b * ch
					}
					assertClose(t, buf, Convolve(taps, x, complex), nt)
				})
			}
		}
	}
}

// TestAccuracyAllTapCounts is the accuracy bar: at every tap
// count of the benchmarks, both methods stay within 1e-5 of the output
// RMS of the float64 reference, for a designed lowpass (the benchmark's
// taps) and for random taps.
func TestAccuracyAllTapCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow float64 reference")
	}
	for _, nt := range []int{16, 64, 129, 257, 513, 1025, 2049, 4097, 8193} {
		lp, err := Design(Spec{Type: Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: nt})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(nt), 5))
		for name, taps := range map[string][]float32{"lowpass": lp, "random": randSlice(rng, nt)} {
			for _, complex := range []bool{false, true} {
				ch := 1
				if complex {
					ch = 2
				}
				x := randSlice(rng, 12000*ch)
				want := Convolve(taps, x, complex)
				// The fft method on every FFT kernel, then the direct
				// one on every FIR kernel.
				type run struct {
					m Method
					k kernelKind
				}
				var runs []run
				for _, k := range fftKernels() {
					runs = append(runs, run{MethodFFT, k})
				}
				for _, k := range availableKernels() {
					runs = append(runs, run{MethodDirect, k})
				}
				for _, r := range runs {
					m, k := r.m, r.k
					f, err := NewFIRMethod(taps, complex, 4096, m)
					if err != nil {
						t.Fatal(err)
					}
					if m == MethodFFT {
						setFFTKernel(f, k)
					} else {
						f.kern = k
					}
					got := runSplit(t, f, x, rng, "random")
					e := MaxErrRMS(got, want)
					if !(e <= 1e-5) {
						t.Errorf("taps=%d %s complex=%v %v/%v: max error %.3g of RMS > 1e-5", nt, name, complex, m, k, e)
					}
					t.Logf("taps=%d %s complex=%v %v/%v: max error %.3g of RMS", nt, name, complex, m, k, e)
				}
			}
		}
	}
}

func TestParseMethod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Method
		ok   bool
	}{
		{"", MethodAuto, true}, {"auto", MethodAuto, true}, {"direct", MethodDirect, true},
		{"fft", MethodFFT, true}, {"FFT", MethodAuto, false}, {"overlap", MethodAuto, false},
	} {
		m, err := ParseMethod(tc.in)
		if (err == nil) != tc.ok || m != tc.want {
			t.Errorf("ParseMethod(%q) = %v, %v", tc.in, m, err)
		}
		if tc.ok && tc.in != "" && m.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", m, m.String(), tc.in)
		}
	}
	if _, err := NewFIRMethod([]float32{1}, false, 8, Method(7)); err == nil {
		t.Error("NewFIRMethod accepted Method(7)")
	}
}

// TestChooseMethod pins the auto choice at its ends: short filters and
// tiny blocks stay direct, long filters on long blocks go fft.
func TestChooseMethod(t *testing.T) {
	for _, tc := range []struct {
		ntaps, block int
		complex      bool
		want         Method
	}{
		{16, 4096, false, MethodDirect},
		{16, 65536, true, MethodDirect},
		{8193, 1, false, MethodDirect},
		{8193, 65536, false, MethodFFT},
		{8193, 65536, true, MethodFFT},
	} {
		for _, k := range availableKernels() {
			if k == kernelGeneric && tc.want == MethodDirect && tc.block > 1 {
				continue // the Go direct loop is no faster than any FFT even at 16 taps
			}
			if got := chooseMethod(MethodAuto, k, tc.ntaps, tc.block, tc.complex); got != tc.want {
				t.Errorf("%v: taps=%d block=%d complex=%v: auto chose %v, want %v", k, tc.ntaps, tc.block, tc.complex, got, tc.want)
			}
		}
		if got := chooseMethod(MethodFFT, kernelGeneric, tc.ntaps, tc.block, tc.complex); got != MethodFFT {
			t.Errorf("forced fft gave %v", got)
		}
	}
}

func TestFFTMethodAllocs(t *testing.T) {
	for _, complex := range []bool{false, true} {
		f, err := NewFIRMethod(make([]float32, 1025), complex, 4096, MethodFFT)
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

// TestPickSize pins the greedy cover: whole segments go to the size
// cheapest per output, and a short end to a smaller size when that is
// cheaper for what is left.
func TestPickSize(t *testing.T) {
	cost := []float64{100, 180, 400} // sizes with segments of 10, 30, 50 outputs
	seg := []int{10, 30, 50}
	for _, tc := range []struct{ r, per, want int }{
		{1000, 1, 1}, // 6.0 per output beats 10 and 8
		{30, 1, 1},
		{12, 1, 0},  // 180/12 = 15 > 100/10
		{5, 1, 0},   // the smallest covers it
		{25, 2, 0},  // two segments of 10 = 20 outputs for 100
		{60, 2, 1},  // 180 for 60
		{100, 2, 1}, // 180/60 = 3 per output beats 400/100 = 4
	} {
		if got := pickSize(cost, seg, tc.r, tc.per); got != tc.want {
			t.Errorf("pickSize(r=%d, per=%d) = %d, want %d", tc.r, tc.per, got, tc.want)
		}
	}
}

// setFFTKernel makes every transform of f's fft method run on kernel k.
func setFFTKernel(f *FIR, k kernelKind) {
	for i := range f.fc.sizes {
		f.fc.sizes[i].plan.kern = k
	}
}
