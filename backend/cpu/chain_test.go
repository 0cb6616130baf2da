package cpu

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ref is a float64 complex stream (real streams have zero imaginary parts).
type ref []complex128

// toRef widens a float32 stream (interleaved I,Q when complex) to float64.
func toRef(x []float32, cplx bool) ref {
	if !cplx {
		s := make(ref, len(x))
		for i, v := range x {
			s[i] = complex(float64(v), 0)
		}
		return s
	}
	s := make(ref, len(x)/2)
	for i := range s {
		s[i] = complex(float64(x[2*i]), float64(x[2*i+1]))
	}
	return s
}

// reference runs c in float64 straight from the definitions in package
// stage, on the whole stream at once.
func reference(c stage.Chain, x []float32) []float32 {
	s := toRef(x, c.Complex)
	rate, cplx := c.SampleRate, c.Complex
	for _, st := range c.Stages {
		switch st.Kind {
		case stage.KindShift:
			for n := range s {
				s[n] *= complexExp(2 * math.Pi * st.FrequencyHz * float64(n) / rate)
			}
		case stage.KindFIR:
			s = upfirdn(st.Taps, s, 1, st.Decimate)
		case stage.KindResample:
			s = upfirdn(st.Taps, s, st.Up, st.Down)
		}
		rate, cplx = st.Rate(rate), st.OutComplex(cplx)
	}
	var out []float32
	for _, v := range s {
		out = append(out, float32(real(v)))
		if cplx {
			out = append(out, float32(imag(v)))
		}
	}
	return out
}

func complexExp(p float64) complex128 {
	sn, cs := math.Sincos(p)
	return complex(cs, sn)
}

// upfirdn is Σ_k h[k]·u[m·M−k] for the first ceil(n·L/M) outputs.
func upfirdn(h []float32, x ref, l, m int) ref {
	nout := (len(x)*l + m - 1) / m
	y := make(ref, nout)
	for o := range y {
		var acc complex128
		for k, v := range h {
			j := o*m - k
			if j < 0 {
				break
			}
			if j%l == 0 && j/l < len(x) {
				acc += complex(float64(v), 0) * x[j/l]
			}
		}
		y[o] = acc
	}
	return y
}

func randTaps(r *rand.Rand, n int) []float32 {
	t := make([]float32, n)
	for i := range t {
		t[i] = float32(r.NormFloat64() / math.Sqrt(float64(n)))
	}
	return t
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
	if ss == 0 {
		return worst
	}
	return worst / math.Sqrt(ss/float64(len(want)))
}

// chains are the test chains: 1 to 3 stages, every kind.
func chains(r *rand.Rand, rate float64, complex bool) map[string]stage.Chain {
	mk := func(st ...stage.Stage) stage.Chain {
		return stage.Chain{SampleRate: rate, Complex: complex, Stages: st}
	}
	shift := func(f float64) stage.Stage { return stage.Stage{Kind: stage.KindShift, FrequencyHz: f} }
	fir := func(n, m int) stage.Stage { return stage.Stage{Kind: stage.KindFIR, Taps: randTaps(r, n), Decimate: m} }
	res := func(n, l, m int) stage.Stage {
		return stage.Stage{Kind: stage.KindResample, Taps: randTaps(r, n), Up: l, Down: m}
	}
	return map[string]stage.Chain{
		"fir":                    mk(fir(33, 1)),
		"fir÷8":                  mk(fir(129, 8)),
		"shift+fir÷8":            mk(shift(-rate/8), fir(129, 8)),
		"shift+fir÷3+resample":   mk(shift(rate*0.1234), fir(40, 3), res(48, 3, 2)),
		"resample+fir÷5+shift":   mk(res(31, 2, 3), fir(17, 5), shift(-rate/17)),
		"fir÷2+fir÷2+fir":        mk(fir(11, 2), fir(23, 2), fir(7, 1)),
		"resample 160/147+shift": mk(res(96, 160, 147), shift(rate/3)),
	}
}

// TestChainMatchesReference feeds each chain in odd block sizes (none a
// multiple of the decimation) and compares with the float64 reference.
func TestChainMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	const rate = 2e6
	for _, cplx := range []bool{false, true} {
		for name, c := range chains(r, rate, cplx) {
			for _, maxBlock := range []int{1, 7, 509, 2048} {
				t.Run(fmt.Sprintf("complex=%v/%s/block=%d", cplx, name, maxBlock), func(t *testing.T) {
					ch := 1
					if cplx {
						ch = 2
					}
					n := 4001
					x := randTaps(r, ch*n)
					p, err := NewChain(c, maxBlock)
					if err != nil {
						t.Fatal(err)
					}
					outCh := 1
					if c.OutComplex() {
						outCh = 2
					}
					var got []float32
					dst := make([]float32, outCh*p.MaxOut(maxBlock))
					for pos, i := 0, 0; pos < n; i++ {
						b := min(n-pos, 1+(i*7919)%maxBlock) // varying, odd sizes
						w, err := p.Process(dst, x[ch*pos:ch*(pos+b)])
						if err != nil {
							t.Fatal(err)
						}
						if w > outCh*p.MaxOut(b) {
							t.Fatalf("block of %d gave %d values, more than MaxOut %d", b, w, p.MaxOut(b))
						}
						got = append(got, dst[:w]...)
						pos += b
					}
					want := reference(c, x)
					if int64(len(got)) != int64(outCh)*c.Count(int64(n)) {
						t.Fatalf("got %d values, want %d (Count)", len(got), int64(outCh)*c.Count(int64(n)))
					}
					if e := maxErrRMS(got, want); e > 2e-5 {
						t.Errorf("max error %.3g of RMS", e)
					}
				})
			}
		}
	}
}

func TestChainProcessAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := chains(r, 1e6, true)["shift+fir÷3+resample"]
	p, err := NewChain(c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	x := randTaps(r, 2*999)
	dst := make([]float32, 2*p.MaxOut(1000))
	if a := testing.AllocsPerRun(50, func() { p.Process(dst, x) }); a != 0 {
		t.Errorf("Process allocates %v times", a)
	}
}

func TestNewChainErrors(t *testing.T) {
	good := stage.Chain{SampleRate: 1e6, Stages: []stage.Stage{{Kind: stage.KindFIR, Taps: []float32{1}, Decimate: 1}}}
	if _, err := NewChain(good, 0); err == nil {
		t.Error("max block 0 accepted")
	}
	bad := good
	bad.Stages = []stage.Stage{{Kind: stage.KindShift, FrequencyHz: 6e5}}
	if _, err := NewChain(bad, 10); err == nil {
		t.Error("shift above Nyquist accepted")
	}
}

type sliceSource struct {
	x   []float32
	pos int
}

func (s *sliceSource) Read(_ context.Context, dst []float32) (int, error) {
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

type sliceSink struct{ got []float32 }

func (s *sliceSink) Write(v []float32) error { s.got = append(s.got, v...); return nil }

// TestBackendRunsChain runs a shift + decimating FIR on a real stream
// through the pipeline: the sink gets the reference's complex output and
// the counters follow the rates.
func TestBackendRunsChain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c := chains(r, 48000, false)["shift+fir÷8"]
	const n, block = 10007, 256
	x := randTaps(r, n)
	be, err := New(c, block)
	if err != nil {
		t.Fatal(err)
	}
	snk := &sliceSink{}
	st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
		pipeline.Config{BlockSize: block, OutComplex: c.OutComplex(), Slots: 4, Policy: pipeline.PolicyBlock}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := reference(c, x)
	if e := maxErrRMS(snk.got, want); e > 2e-5 {
		t.Errorf("max error %.3g of RMS (got %d values, want %d)", e, len(snk.got), len(want))
	}
	if st.SamplesFiltered != n || st.SamplesProduced != (n+7)/8 || st.SamplesWritten != (n+7)/8 {
		t.Errorf("stats %+v", st)
	}
}
