package cuda

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

func TestOLSFFTSize(t *testing.T) {
	for _, tc := range []struct{ taps, want int }{
		{1, OLSMinFFT}, {16, OLSMinFFT}, {64, 256}, {65, 512}, {129, 1024}, {1024, 4096}, {1025, 8192},
		{4096, 16384}, {16384, 65536}, {OLSMaxTaps, OLSMaxFFT},
	} {
		if got := OLSFFTSize(tc.taps); got != tc.want {
			t.Errorf("OLSFFTSize(%d) = %d, want %d", tc.taps, got, tc.want)
		}
		if n := OLSFFTSize(tc.taps); n-tc.taps+1 < 3*n/4-1 && tc.taps > 64 {
			t.Errorf("%d taps: segments of %d outputs in %d points", tc.taps, n-tc.taps+1, n)
		}
	}
}

func TestResolveMethod(t *testing.T) {
	for _, tc := range []struct {
		m     filter.Method
		taps  int
		wantM filter.Method
	}{
		{filter.MethodAuto, 16, filter.MethodDirect},
		{filter.MethodAuto, FFTCrossoverTaps - 1, filter.MethodDirect},
		{filter.MethodAuto, FFTCrossoverTaps, filter.MethodFFT},
		{filter.MethodAuto, BatchMaxTaps + 1, filter.MethodFFT},
		{filter.MethodDirect, 4096, filter.MethodDirect},
		{filter.MethodFFT, 2, filter.MethodFFT},
	} {
		if got := ResolveMethod(tc.m, tc.taps); got != tc.wantM {
			t.Errorf("ResolveMethod(%v, %d) = %v, want %v", tc.m, tc.taps, got, tc.wantM)
		}
	}
}

func TestCheckOLS(t *testing.T) {
	for _, tc := range []struct {
		name string
		taps []float32
		fft  int
		ok   bool
	}{
		{"auto", make([]float32, 100), 0, true},
		{"forced", make([]float32, 100), 128, true},
		{"no taps", nil, 0, false},
		{"nan", []float32{1, float32(math.NaN())}, 0, false},
		{"not a power of two", make([]float32, 10), 100, false},
		{"shorter than taps", make([]float32, 100), 64, false},
		{"too large", make([]float32, 10), 2 * OLSMaxFFT, false},
	} {
		if _, err := checkOLS(tc.taps, tc.fft); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestOLSStridedPassesAligned replays Launch's passes over a block and
// checks that the strided transform only ever gets an address cuFFT
// accepts: the H200 run refused a real pass at 4 mod 8
// (CUFFT_INVALID_VALUE) after a first pass of 5 segments of 17 samples.
func TestOLSStridedPassesAligned(t *testing.T) {
	for _, tc := range []struct {
		name                             string
		chunkValues, ch, n, l, maxSample int
		strided                          bool
		base                             uintptr // device address of the block
		nout                             int
		wantSeg                          int
		wantStrided                      int // passes that take the strided transform
	}{
		// taps 16, fft 32, chunk 100: 5 segments of 17 made 4, so passes
		// of 68 samples stay aligned.
		{"odd l made even", 100, 1, 32, 17, 0, true, 0x1000, 5000, 4, 73},
		{"odd l not strided", 100, 1, 32, 17, 0, false, 0x1000, 5000, 5, 0},
		{"complex odd l", 100, 2, 32, 17, 0, true, 0x1000, 5000, 2, 147},
		{"even l", 20000, 1, 1024, 896, 0, true, 0x1000, 100000, 22, 5},
		// one segment of an odd length: every other pass is misaligned
		// and gathers instead.
		{"one odd segment", 20, 1, 32, 17, 0, true, 0x1000, 170, 1, 5},
		// a block at 4 mod 8: the passes that land at 4 mod 8 gather.
		{"misaligned block", 100, 1, 32, 17, 0, true, 0x1004, 680, 4, 0},
		{"misaligned block odd", 20, 1, 32, 17, 0, true, 0x1004, 170, 1, 5},
		{"capped by max samples", 1 << 20, 1, 32, 17, 40, true, 0x1000, 40, 3, 0},
		{"capped to a full pass", 1 << 20, 1, 32, 17, 51, true, 0x1000, 51, 3, 1},
		// a forced transform as long as the filter: one-sample segments,
		// the work buffer held to olsWorkFactor chunks (not 64 GiB).
		{"work bounded", 0, 1, 4096, 1, 0, false, 0x1000, 30000, olsWorkFactor * olsChunkValues / 4098, 0},
		{"work bounded complex", 0, 2, 4096, 1, 0, false, 0x1000, 30000, olsWorkFactor * olsChunkValues / 8192, 0},
	} {
		nseg := olsSegments(tc.chunkValues, tc.ch, tc.n, tc.l, tc.maxSample, tc.strided)
		if nseg != tc.wantSeg {
			t.Errorf("%s: %d segments per pass, want %d", tc.name, nseg, tc.wantSeg)
		}
		chunk, strided := nseg*tc.l, 0
		for c0 := 0; c0 < tc.nout; c0 += chunk {
			cn := min(chunk, tc.nout-c0)
			xin := tc.base + uintptr(c0*4*tc.ch)
			if !olsStridedPass(xin, cn, chunk) {
				continue
			}
			strided++
			if xin%cufftAlign != 0 || cn != chunk {
				t.Errorf("%s: strided pass at %#x of %d samples", tc.name, xin, cn)
			}
		}
		if tc.strided && strided != tc.wantStrided {
			t.Errorf("%s: %d strided passes, want %d", tc.name, strided, tc.wantStrided)
		}
	}
	if got := olsSegments(0, 1, 1024, 1000, 0, false); got != olsChunkValues/1000 {
		t.Errorf("default chunk: %d segments, want %d", got, olsChunkValues/1000)
	}
}

// TestOLSSpectrumIsDFT checks the float64 transform against the DFT's
// definition.
func TestOLSSpectrumIsDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{2, 8, 64, 256} {
		taps := make([]float32, n/2+1)
		for i := range taps {
			taps[i] = float32(r.NormFloat64())
		}
		for _, iq := range []bool{false, true} {
			h := olsSpectrum(taps, n, iq)
			if want := map[bool]int{false: n/2 + 1, true: n}[iq]; len(h) != want {
				t.Fatalf("n %d complex %v: %d bins, want %d", n, iq, len(h), want)
			}
			for k := range h {
				var s complex128
				for j, v := range taps {
					s += complex(float64(v), 0) * cmplx.Rect(1, -2*math.Pi*float64(j*k)/float64(n))
				}
				s /= complex(float64(n), 0)
				if d := cmplx.Abs(complex128(h[k]) - s); d > 1e-6*(1+cmplx.Abs(s)) {
					t.Fatalf("n %d bin %d: %v, want %v", n, k, h[k], s)
				}
			}
		}
	}
}

// TestOLSLayoutOnHost runs overlap-save as OLSFIR lays it out (segments
// of n starting l apart in the [history | block] input, the scaled
// spectrum, points m1 … n−1 kept) in float64 on the host, so the
// indexing the kernels implement is checked without a GPU.
func TestOLSLayoutOnHost(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct{ taps, n, nout int }{{1, 4, 10}, {5, 8, 37}, {16, 64, 300}, {100, 128, 1000}} {
		t.Run(fmt.Sprintf("taps=%d/n=%d", tc.taps, tc.n), func(t *testing.T) {
			taps := make([]float32, tc.taps)
			for i := range taps {
				taps[i] = float32(r.NormFloat64())
			}
			x := make([]float32, tc.nout)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			m1 := tc.taps - 1
			in := append(make([]float32, m1), x...)
			h := olsSpectrum(taps, tc.n, true)
			l := tc.n - m1
			got := make([]float32, tc.nout)
			seg := make([]complex128, tc.n)
			for s := 0; s*l < tc.nout; s++ {
				for k := range seg {
					seg[k] = 0
					if src := s*l + k; src < len(in) {
						seg[k] = complex(float64(in[src]), 0)
					}
				}
				fft128(seg)
				for k := range seg {
					seg[k] = cmplx.Conj(seg[k] * complex128(h[k])) // inverse = conj(fft(conj))
				}
				fft128(seg)
				for k := 0; k < l && s*l+k < tc.nout; k++ {
					got[s*l+k] = float32(real(seg[m1+k])) // conj leaves the real part
				}
			}
			if e := filter.MaxErrRMS(got, filter.Convolve(taps, x, false)); e > 1e-6 {
				t.Fatalf("max error %g of the output RMS", e)
			}
		})
	}
}

// TestOLSFusedOnHost runs the fused kernel's algorithm (kernels/ols.cu,
// ols_fused_*) step for step in float64 with its tables: two real
// segments packed in one transform (or one complex segment), forward
// decimation in frequency with the bit-reversed spectrum folded into the
// last stage, inverse decimation in time.
func TestOLSFusedOnHost(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, iq := range []bool{false, true} {
		for _, tc := range []struct{ taps, n, nout int }{{1, 2, 5}, {1, 4, 9}, {4, 8, 37}, {16, 64, 500}, {33, 64, 301}, {100, 512, 2000}, {100, 256, 999}} {
			t.Run(fmt.Sprintf("iq=%v/taps=%d/n=%d", iq, tc.taps, tc.n), func(t *testing.T) {
				ch := 1
				if iq {
					ch = 2
				}
				taps := make([]float32, tc.taps)
				for i := range taps {
					taps[i] = float32(r.NormFloat64())
				}
				x := make([]float32, tc.nout*ch)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				for _, r4 := range []bool{false, true} {
					got := fusedOnHost(taps, x, tc.n, iq, r4)
					if e := filter.MaxErrRMS(got, filter.Convolve(taps, x, iq)); e > 1e-6 {
						t.Fatalf("radix4 %v: max error %g of the output RMS", r4, e)
					}
				}
			})
		}
	}
}

func fusedOnHost(taps, x []float32, n int, iq, r4 bool) []float32 {
	hperm, tw := olsFusedTables(taps, n)
	m1, l := len(taps)-1, n-len(taps)+1
	ch := 1
	if iq {
		ch = 2
	}
	nout := len(x) / ch
	xin := append(make([]float32, m1*ch), x...)
	nx := m1 + nout
	at := func(s int) complex128 { // sample s of xin, as a complex value
		if s >= nx {
			return 0
		}
		if iq {
			return complex(float64(xin[2*s]), float64(xin[2*s+1]))
		}
		return complex(float64(xin[s]), 0)
	}
	nseg := (nout + l - 1) / l
	blocks := nseg
	if !iq {
		blocks = (nseg + 1) / 2
	}
	log2n := bitsLen(n) - 1
	y := make([]float32, len(x))
	buf := make([]complex128, n)
	for b := range blocks {
		for i := range buf {
			if iq {
				buf[i] = at(b*l + i)
			} else {
				buf[i] = complex(real(at(2*b*l+i)), real(at((2*b+1)*l+i)))
			}
		}
		dif := func(a, b *complex128, w complex64) { *a, *b = *a+*b, (*a-*b)*complex128(w) }
		dit := func(a, b *complex128, w complex64) {
			v := *b * cmplx.Conj(complex128(w))
			*a, *b = *a+v, *a-v
		}
		lh0 := log2n - 1
		for ; r4 && lh0 >= 1; lh0 -= 2 {
			h, lq := 1<<lh0, lh0-1
			q := h >> 1
			t1, t2 := log2n-1-lh0, log2n-lh0
			for j := range n / 4 {
				k := j & (q - 1)
				base := (j>>lq)<<(lh0+1) + k
				a := [4]complex128{buf[base], buf[base+q], buf[base+h], buf[base+h+q]}
				dif(&a[0], &a[2], tw[k<<t1])
				dif(&a[1], &a[3], tw[(k+q)<<t1])
				dif(&a[0], &a[1], tw[k<<t2])
				dif(&a[2], &a[3], tw[k<<t2])
				if lq == 0 {
					a[0] *= complex128(hperm[base])
					a[1] *= complex128(hperm[base+q])
					a[2] *= complex128(hperm[base+h])
					a[3] *= complex128(hperm[base+h+q])
				}
				buf[base], buf[base+q], buf[base+h], buf[base+h+q] = a[0], a[1], a[2], a[3]
			}
		}
		for lh := lh0; lh >= 0; lh-- {
			half, tstep := 1<<lh, log2n-1-lh
			for j := range n / 2 {
				k := j & (half - 1)
				i0 := (j>>lh)<<(lh+1) + k
				i1 := i0 + half
				u, v := buf[i0], buf[i1]
				s, d := u+v, (u-v)*complex128(tw[k<<tstep])
				if lh == 0 {
					s, d = s*complex128(hperm[i0]), d*complex128(hperm[i1])
				}
				buf[i0], buf[i1] = s, d
			}
		}
		lh1 := 0
		for ; r4 && lh1+1 < log2n; lh1 += 2 {
			q := 1 << lh1
			h := q << 1
			t1, t2 := log2n-1-lh1, log2n-2-lh1
			for j := range n / 4 {
				k := j & (q - 1)
				base := (j>>lh1)<<(lh1+2) + k
				a := [4]complex128{buf[base], buf[base+q], buf[base+h], buf[base+h+q]}
				dit(&a[0], &a[1], tw[k<<t1])
				dit(&a[2], &a[3], tw[k<<t1])
				dit(&a[0], &a[2], tw[k<<t2])
				dit(&a[1], &a[3], tw[(k+q)<<t2])
				buf[base], buf[base+q], buf[base+h], buf[base+h+q] = a[0], a[1], a[2], a[3]
			}
		}
		for lh := lh1; lh < log2n; lh++ {
			half, tstep := 1<<lh, log2n-1-lh
			for j := range n / 2 {
				k := j & (half - 1)
				i0 := (j>>lh)<<(lh+1) + k
				i1 := i0 + half
				u, v := buf[i0], buf[i1]*cmplx.Conj(complex128(tw[k<<tstep]))
				buf[i0], buf[i1] = u+v, u-v
			}
		}
		for k := m1; k < n; k++ {
			tt := k - m1
			if iq {
				if o := b*l + tt; o < nout {
					y[2*o], y[2*o+1] = float32(real(buf[k])), float32(imag(buf[k]))
				}
				continue
			}
			if o := 2*b*l + tt; o < nout {
				y[o] = float32(real(buf[k]))
			}
			if o := (2*b+1)*l + tt; o < nout {
				y[o] = float32(imag(buf[k]))
			}
		}
	}
	return y
}
