package mixer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// reference is the float64 shift of x (real or interleaved I/Q) starting
// at sample n0: the phase is 2π·f·n/fs taken modulo 1 cycle exactly, using
// n·num mod den for a rational f/fs = num/den.
func reference(x []float32, complex bool, num, den, n0 int64) []float32 {
	ch := 1
	if complex {
		ch = 2
	}
	n := len(x) / ch
	y := make([]float32, 2*n)
	for i := range n {
		k := ((n0+int64(i))%den*num%den + den) % den
		sn, cs := math.Sincos(2 * math.Pi * float64(k) / float64(den))
		xr, xi := float64(x[ch*i]), 0.0
		if complex {
			xi = float64(x[ch*i+1])
		}
		y[2*i] = float32(xr*cs - xi*sn)
		y[2*i+1] = float32(xr*sn + xi*cs)
	}
	return y
}

func noise(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func maxErrRMS(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var ss, worst float64
	for i := range want {
		ss += float64(want[i]) * float64(want[i])
		worst = max(worst, math.Abs(float64(got[i])-float64(want[i])))
	}
	return worst / math.Sqrt(ss/float64(len(want)))
}

// TestShiftMatchesReference runs every kernel on real and complex input,
// split into odd blocks, against the float64 reference.
func TestShiftMatchesReference(t *testing.T) {
	tests := []struct {
		num, den int64 // f/fs
	}{{-1, 8}, {1, 3}, {7, 1000}, {1, 2}, {-1, 2}, {0, 1}, {12345, 1000003}}
	blocks := []int{1, 3, 7, 8, 13, 1000, 1023, 1024, 1025, 5000}
	for _, k := range availableKernels() {
		for _, cplx := range []bool{false, true} {
			for _, tt := range tests {
				name := fmt.Sprintf("kernel%d/complex=%v/%d_%d", k, cplx, tt.num, tt.den)
				t.Run(name, func(t *testing.T) {
					ch := 1
					if cplx {
						ch = 2
					}
					const n = 9000
					x := noise(n*ch, uint64(tt.den))
					s, err := New(float64(tt.num)*1000, float64(tt.den)*1000, cplx)
					if err != nil {
						t.Fatal(err)
					}
					s.kern = k
					got := make([]float32, 2*n)
					pos := 0
					for bi := 0; pos < n; bi++ {
						b := min(blocks[bi%len(blocks)], n-pos)
						w, err := s.Process(got[2*pos:], x[ch*pos:ch*(pos+b)])
						if err != nil || w != 2*b {
							t.Fatalf("Process: %d, %v", w, err)
						}
						pos += b
					}
					if e := maxErrRMS(got, reference(x, cplx, tt.num, tt.den, 0)); e > 1e-6 {
						t.Errorf("max error %.3g of RMS", e)
					}
				})
			}
		}
	}
}

// TestShiftNoDrift is the closed-form phase check over a long stream: at
// sample 10⁹ (and 2^40) the rotation must equal exp(j·2π·(n·num mod den)/den)
// to within 1e-5 of the signal RMS. A float32 phase accumulator misses by
// radians there; the shifter's error is the same as at sample 0.
func TestShiftNoDrift(t *testing.T) {
	for _, tt := range []struct{ num, den int64 }{{1, 3}, {-250000, 2000000}, {123457, 1000000}, {-7, 1 << 20}} {
		for _, start := range []int64{1e9, 1e9 + 12345, 1 << 40} {
			s, err := New(float64(tt.num), float64(tt.den), true)
			if err != nil {
				t.Fatal(err)
			}
			s.n = start // as if start samples had been shifted
			x := noise(2*3000, 3)
			got := make([]float32, len(x))
			if _, err := s.Process(got, x); err != nil {
				t.Fatal(err)
			}
			if e := maxErrRMS(got, reference(x, true, tt.num, tt.den, start)); e > 1e-5 {
				t.Errorf("f/fs=%d/%d at sample %d: error %.3g of RMS (drift)", tt.num, tt.den, start, e)
			}
		}
	}
}

// TestShiftStreamEqualsSeek: shifting 1e6 samples in blocks ends where a
// shifter started at that index begins (the phase depends on the index
// only).
func TestShiftStreamEqualsSeek(t *testing.T) {
	a, _ := New(-123.4, 1000, true)
	b, _ := New(-123.4, 1000, true)
	buf := make([]float32, 2*4099)
	x := noise(len(buf), 1)
	for a.Pos() < 1_000_000 {
		if _, err := a.Process(buf, x); err != nil {
			t.Fatal(err)
		}
	}
	b.n = a.Pos()
	ya, yb := make([]float32, len(x)), make([]float32, len(x))
	a.Process(ya, x)
	b.Process(yb, x)
	for i := range ya {
		if ya[i] != yb[i] {
			t.Fatalf("value %d: streamed %v, seeked %v", i, ya[i], yb[i])
		}
	}
}

func TestShiftInPlaceAndErrors(t *testing.T) {
	s, _ := New(100, 1000, true)
	x := noise(64, 2)
	want := reference(x, true, 1, 10, 0)
	if _, err := s.Process(x, x); err != nil {
		t.Fatal(err)
	}
	if e := maxErrRMS(x, want); e > 1e-6 {
		t.Errorf("in place: error %.3g", e)
	}
	tests := []struct {
		name     string
		f, fs    float64
		complex  bool
		dst, src int
	}{
		{"above nyquist", 501, 1000, true, 0, 0},
		{"nan", math.NaN(), 1000, true, 0, 0},
		{"zero rate", 1, 0, true, 0, 0},
		{"odd complex", 1, 1000, true, 10, 5},
		{"short dst", 1, 1000, false, 7, 4},
	}
	for _, tt := range tests {
		s, err := New(tt.f, tt.fs, tt.complex)
		if err == nil {
			_, err = s.Process(make([]float32, tt.dst), make([]float32, tt.src))
		}
		if err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	r, _ := New(1, 1000, false)
	buf := make([]float32, 8)
	if _, err := r.Process(buf, buf[:4]); err == nil {
		t.Error("real input in place: no error")
	}
}

func BenchmarkShift(b *testing.B) {
	for _, cplx := range []bool{false, true} {
		b.Run(fmt.Sprintf("complex=%v", cplx), func(b *testing.B) {
			ch := 1
			if cplx {
				ch = 2
			}
			const n = 4096
			s, _ := New(-250000, 2e6, cplx)
			x := noise(n*ch, 1)
			y := make([]float32, 2*n)
			b.SetBytes(int64(4 * len(x)))
			b.ReportAllocs()
			for b.Loop() {
				s.Process(y, x)
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds()/1e6, "MS/s")
		})
	}
}

// TestShiftFractionalRate covers the float64 path (f or fs not whole): at
// sample 10⁹ the phase error stays below 1e-5 of the RMS.
func TestShiftFractionalRate(t *testing.T) {
	s, err := New(-250000.5, 2000001, true) // f/fs = -500001/4000002
	if err != nil {
		t.Fatal(err)
	}
	if s.den != 0 {
		t.Fatal("expected the float64 path")
	}
	s.n = 1e9
	x := noise(2*3000, 3)
	got := make([]float32, len(x))
	s.Process(got, x)
	if e := maxErrRMS(got, reference(x, true, -500001, 4000002, 1e9)); e > 1e-5 {
		t.Errorf("error %.3g of RMS at sample 1e9", e)
	}
}

// TestResumeContinuesPhase: a shifter resumed at another's position and
// phase continues it with its own frequency, φ[n] = φ[K] + 2π·f'·(n−K)/fs,
// to float32 rounding, however far into the stream.
func TestResumeContinuesPhase(t *testing.T) {
	const rate, f0, f1 = 48000.0, 1000.0, -2345.5
	for _, k := range []int64{0, 777, 1e9 + 3} {
		a, _ := New(f0, rate, true)
		b, _ := New(f1, rate, true)
		b.Resume(k, a.Phase(k))
		src := make([]float32, 2*3000)
		for i := 0; i < len(src); i += 2 {
			src[i] = 1
		}
		dst := make([]float32, len(src))
		if _, err := b.Process(dst, src); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 3000; n++ {
			want := 2*math.Pi*f0*float64(k)/rate + 2*math.Pi*f1*float64(n)/rate
			s, c := math.Sincos(want)
			if math.Abs(float64(dst[2*n])-c) > 2e-6 || math.Abs(float64(dst[2*n+1])-s) > 2e-6 {
				t.Fatalf("K %d, n %d: (%g, %g), want (%g, %g)", k, n, dst[2*n], dst[2*n+1], c, s)
			}
		}
		if b.Pos() != k+3000 {
			t.Errorf("Pos %d", b.Pos())
		}
	}
}

// TestRatio: a shift's exact ratio where both are whole (negative shifts
// wrap into [0, den)), none otherwise, and the same refusals as New.
func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		hz, rate float64
		num, den uint64
	}{
		{1000, 2e6, 1, 2000},
		{-250000, 2e6, 7, 8},
		{0, 48000, 0, 1},
		{123456.5, 2e6, 0, 0},
		{1000, 44100.5, 0, 0},
	} {
		cps, num, den, err := Ratio(tc.hz, tc.rate)
		if err != nil || num != tc.num || den != tc.den || cps != tc.hz/tc.rate {
			t.Errorf("Ratio(%g, %g) = %g, %d/%d, %v; want %d/%d", tc.hz, tc.rate, cps, num, den, err, tc.num, tc.den)
		}
	}
	for _, bad := range [][2]float64{{1e6 + 1, 2e6}, {1, 0}, {math.NaN(), 1}} {
		if _, _, _, err := Ratio(bad[0], bad[1]); err == nil {
			t.Errorf("Ratio(%g, %g) accepted", bad[0], bad[1])
		}
	}
}

// The table built from 64 rotations stays within float32 rounding of a
// Sincos per sample, for exact and inexact ratios.
func TestTableMatchesSincos(t *testing.T) {
	for _, tc := range []struct{ f, rate float64 }{{-2e7, 2.048e8}, {1, 48000}, {12345.678, 1e6}, {0.5e6, 1e6}, {0, 1}, {-1e-3, 3.3}} {
		s, err := New(tc.f, tc.rate, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tableLen {
			sn, cs := math.Sincos(2 * math.Pi * s.frac(int64(i)))
			if d := math.Max(math.Abs(float64(s.tab[2*i])-cs), math.Abs(float64(s.tab[2*i+1])-sn)); d > 1.2e-7 {
				t.Fatalf("f %g rate %g: entry %d off by %g", tc.f, tc.rate, i, d)
			}
		}
	}
}

// BenchmarkNew is the table build a retune pays per shifter.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(-2e7, 2.048e8, true); err != nil {
			b.Fatal(err)
		}
	}
}
