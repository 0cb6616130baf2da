package cpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// retunedReference runs c in float64 from the retune semantics in package
// stage: each stage's parameters change at its retunes' At (an index in
// that stage's input), fir outputs m use the taps in force at input m·M
// over the same history, and a shift's phase stays continuous.
func retunedReference(c stage.Chain, x []float32, retunes []stage.Retune) []float32 {
	s := toRef(x, c.Complex)
	rate, cplx := c.SampleRate, c.Complex
	for i, st := range c.Stages {
		// The parameters in force at input n: the last retune with At <= n.
		at := func(n int64) stage.Stage {
			cur := st
			for _, r := range retunes {
				if r.Index == i && r.At <= n {
					cur = r.Stage
				}
			}
			return cur
		}
		switch st.Kind {
		case stage.KindShift:
			var phase float64 // φ[n], radians, exact in float64 for these n
			for n := range s {
				s[n] *= complexExp(phase)
				phase += 2 * math.Pi * at(int64(n)).FrequencyHz / rate
			}
		case stage.KindFIR:
			m := st.Decimate
			y := make(ref, (len(s)+m-1)/m)
			for o := range y {
				var acc complex128
				for k, v := range at(int64(o * m)).Taps {
					if j := o*m - k; j >= 0 {
						acc += complex(float64(v), 0) * s[j]
					}
				}
				y[o] = acc
			}
			s = y
		default:
			panic("no reference for " + st.Kind)
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

func shiftStage(f float64) stage.Stage { return stage.Stage{Kind: stage.KindShift, FrequencyHz: f} }

func firStage(taps []float32, m int) stage.Stage {
	return stage.Stage{Kind: stage.KindFIR, Taps: taps, Decimate: m}
}

// TestRetuneMatchesReference retunes chains between blocks — tap-count
// changes up and down, frequency changes, a fir after a decimation, block
// sizes no decimation divides (so K falls inside a decimator's phase) —
// and compares every output with the float64 reference built from the
// semantics: nothing lost, repeated or delayed.
func TestRetuneMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 18))
	const rate = 48000
	type plan struct {
		after int // retune after this many blocks
		index int
		stage stage.Stage
	}
	tests := []struct {
		name    string
		complex bool
		c       stage.Chain
		block   int
		plans   []plan
	}{
		{"shift+fir÷4 complex", true,
			stage.Chain{Stages: []stage.Stage{shiftStage(1000), firStage(randTaps(r, 33), 4)}}, 101,
			[]plan{{3, 1, firStage(randTaps(r, 57), 4)}, {3, 0, shiftStage(-3000.5)}, {7, 1, firStage(randTaps(r, 17), 4)}, {9, 0, shiftStage(12000)}}},
		{"real shift+fir÷4", false,
			stage.Chain{Stages: []stage.Stage{shiftStage(1000), firStage(randTaps(r, 33), 4)}}, 250,
			[]plan{{2, 0, shiftStage(-2222)}, {2, 1, firStage(randTaps(r, 200), 0)}}},
		{"fir÷3 then fir÷2, retune the second", false,
			stage.Chain{Stages: []stage.Stage{firStage(randTaps(r, 31), 3), firStage(randTaps(r, 21), 2)}}, 50,
			[]plan{{1, 1, firStage(randTaps(r, 64), 2)}, {5, 1, firStage(randTaps(r, 5), 2)}, {6, 0, firStage(randTaps(r, 9), 3)}}},
		{"plain fir, fft method", true,
			stage.Chain{Stages: []stage.Stage{{Kind: stage.KindFIR, Taps: randTaps(r, 300), Decimate: 1, Method: "fft"}}}, 1024,
			[]plan{{2, 0, firStage(randTaps(r, 1000), 1)}, {4, 0, firStage(randTaps(r, 3), 1)}}},
		{"fir÷4, fft method (full rate, every 4th kept)", true,
			stage.Chain{Stages: []stage.Stage{{Kind: stage.KindFIR, Taps: randTaps(r, 700), Decimate: 4, Method: "fft"}}}, 301,
			[]plan{{2, 0, stage.Stage{Kind: stage.KindFIR, Taps: randTaps(r, 1500), Decimate: 4, Method: "fft"}}, {5, 0, stage.Stage{Kind: stage.KindFIR, Taps: randTaps(r, 31), Decimate: 4, Method: "fft"}}}},
		{"plain fir, direct, first block", false,
			stage.Chain{Stages: []stage.Stage{firStage(randTaps(r, 65), 1)}}, 64,
			[]plan{{0, 0, firStage(randTaps(r, 129), 1)}, {1, 0, firStage(randTaps(r, 2), 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.SampleRate, c.Complex = rate, tt.complex
			ch := channels(tt.complex)
			const blocks = 12
			x := randTaps(r, ch*tt.block*blocks)
			p, err := NewChain(c, tt.block)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, 2*p.MaxOut(tt.block))
			var got []float32
			var done []stage.Retune
			for b := range blocks {
				for _, pl := range tt.plans {
					if pl.after != b {
						continue
					}
					pr, err := p.Prepare(pl.index, pl.stage)
					if err != nil {
						t.Fatal(err)
					}
					rt := p.Apply(pr)
					if want := c.InputAt(pl.index, int64(b*tt.block)); rt.At != want || rt.ChainAt != int64(b*tt.block) {
						t.Fatalf("retune at %d (chain %d), want %d (%d)", rt.At, rt.ChainAt, want, b*tt.block)
					}
					done = append(done, rt)
				}
				w, err := p.Process(dst, x[ch*b*tt.block:ch*(b+1)*tt.block])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, dst[:w]...)
			}
			want := retunedReference(c, x, done)
			outCh := channels(c.OutComplex())
			if int64(len(got)) != int64(outCh)*c.Count(int64(tt.block*blocks)) {
				t.Fatalf("got %d values, want %d: samples lost or repeated", len(got), int64(outCh)*c.Count(int64(tt.block*blocks)))
			}
			if e := maxErrRMS(got, want); e > 2e-5 {
				t.Errorf("max error %.3g of RMS against the retuned reference", e)
			}
			// The reference without the retunes differs: the test sees them.
			if e := maxErrRMS(got, reference(c, x)); e < 1e-3 {
				t.Errorf("output equals the un-retuned chain (error %.3g)", e)
			}
		})
	}
}

// TestRetuneErrors: structural changes and bad parameters are refused
// with the sentinel errors the control API maps to 409 and 4xx, and the
// chain keeps running unchanged.
func TestRetuneErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 8))
	c := stage.Chain{SampleRate: 48000, Complex: true, Stages: []stage.Stage{
		shiftStage(100), firStage(randTaps(r, 16), 4),
		{Kind: stage.KindResample, Taps: randTaps(r, 12), Up: 3, Down: 2}}}
	be, err := New(c, 64)
	if err != nil {
		t.Fatal(err)
	}
	rt := be.(pipeline.Retuner)
	tests := []struct {
		name  string
		i     int
		s     stage.Stage
		class error // ErrStructure, ErrRetuneUnsupported, or ErrChain (a StageError)
	}{
		{"no such stage", 3, shiftStage(1), stage.ErrStructure},
		{"negative index", -1, shiftStage(1), stage.ErrStructure},
		{"kind change", 0, firStage([]float32{1}, 1), stage.ErrStructure},
		{"decimation change", 1, firStage([]float32{1}, 2), stage.ErrStructure},
		{"resample", 2, stage.Stage{Kind: stage.KindResample, Taps: []float32{1}, Up: 3, Down: 2}, stage.ErrRetuneUnsupported},
		{"resample factors", 2, stage.Stage{Kind: stage.KindResample, Taps: []float32{1}, Up: 2, Down: 2}, stage.ErrStructure},
		{"above nyquist", 0, shiftStage(30000), stage.ErrChain},
		{"NaN tap", 1, firStage([]float32{float32(math.NaN())}, 4), stage.ErrChain},
		{"no taps", 1, firStage(nil, 4), stage.ErrChain},
		{"too many taps", 1, firStage(make([]float32, MaxRetuneTaps+1), 4), stage.ErrChain},
	}
	for _, tt := range tests {
		_, err := rt.Retune(stage.Retune{Index: tt.i, Stage: tt.s})
		if !errors.Is(err, tt.class) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.class)
		}
	}
	if got := rt.Chain().String(); got != c.String() {
		t.Errorf("chain after refused retunes: %s, want %s", got, c)
	}
	// All or none: a good change beside a bad one is not applied.
	if _, err := rt.Retune(stage.Retune{Index: 0, Stage: shiftStage(5)}, stage.Retune{Index: 0, Stage: shiftStage(1e9)}); err == nil || rt.Chain().Stages[0].FrequencyHz != 100 {
		t.Errorf("half a batch applied: %v, %s", err, rt.Chain())
	}
	if _, err := rt.Retune(stage.Retune{Index: 1, Stage: firStage(make([]float32, MaxRetuneTaps), 0)}); err != nil {
		t.Errorf("MaxRetuneTaps taps refused: %v", err)
	}
}

// TestBackendRetuneDuringRun retunes from another goroutine while the
// pipeline runs, at whatever block the consumer is at: the index the
// backend reports is where the output changes, to the sample.
func TestBackendRetuneDuringRun(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{shiftStage(-1e5), firStage(randTaps(r, 65), 8)}}
	const n, block = 300 * 100, 100
	x := randTaps(r, 2*n)
	be, err := New(c, block)
	if err != nil {
		t.Fatal(err)
	}
	rtr := be.(pipeline.Retuner)
	var mu sync.Mutex
	var done []stage.Retune
	var errs []error
	snk := &retuneSink{every: 20, retune: func(k int) {
		var rts []stage.Retune
		var err error
		kr := rand.New(rand.NewPCG(uint64(k), 1)) // retunes may run at once
		switch k % 3 {
		case 0:
			rts, err = rtr.Retune(stage.Retune{Index: 1, Stage: firStage(randTaps(kr, 20+7*k), 8)})
		case 1:
			rts, err = rtr.Retune(stage.Retune{Index: 0, Stage: shiftStage(float64(1000 * k))})
		default: // both at one boundary
			rts, err = rtr.Retune(stage.Retune{Index: 0, Stage: shiftStage(float64(-500 * k))},
				stage.Retune{Index: 1, Stage: firStage(randTaps(kr, 3+k), 8)})
			if err == nil && rts[0].ChainAt != rts[1].ChainAt {
				err = fmt.Errorf("a batch landed at %d and %d", rts[0].ChainAt, rts[1].ChainAt)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		done, errs = append(done, rts...), append(errs, err)
	}}
	st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
		pipeline.Config{BlockSize: block, Complex: true, Slots: 4, Policy: pipeline.PolicyBlock}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snk.wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if len(done) < 10 {
		t.Fatalf("only %d retunes", len(done))
	}
	for _, rt := range done {
		if rt.ChainAt%block != 0 {
			t.Fatalf("retune at chain sample %d, not a block boundary", rt.ChainAt)
		}
	}
	want := retunedReference(c, x, done)
	if e := maxErrRMS(snk.got, want); e > 2e-5 {
		t.Errorf("max error %.3g of RMS (got %d values, want %d)", e, len(snk.got), len(want))
	}
	if st.SamplesProduced != uint64(n/8) {
		t.Errorf("produced %d, want %d", st.SamplesProduced, n/8)
	}
}

// retuneSink collects the output and, every every blocks, retunes from
// another goroutine, so the retune races the consumer; one retune at a
// time, so their order is known.
type retuneSink struct {
	got    []float32
	blocks int
	every  int
	retune func(k int)
	wg     sync.WaitGroup
}

func (s *retuneSink) Write(v []float32) error {
	s.got = append(s.got, v...)
	s.blocks++
	if s.blocks%s.every == 0 {
		s.wg.Wait()
		s.wg.Add(1)
		k := s.blocks / s.every
		go func() { defer s.wg.Done(); s.retune(k) }()
	}
	return nil
}

// BenchmarkRetuneApply times installing a prepared retune between two
// blocks, and the block after it.
func BenchmarkRetuneApply(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{shiftStage(1000), firStage(randTaps(r, 129), 8)}}
	p, err := NewChain(c, 256)
	if err != nil {
		b.Fatal(err)
	}
	x := randTaps(r, 512)
	dst := make([]float32, 2*p.MaxOut(256))
	for b.Loop() {
		b.StopTimer()
		pr, err := p.Prepare(1, firStage(randTaps(r, 129), 8))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p.Apply(pr)
		p.Process(dst, x)
	}
}

// TestRetuneChannels retunes a chain of several channels: every channel
// takes the new parameters at the same frame, and each channel's output
// equals the float64 retuned reference of that channel's input alone.
func TestRetuneChannels(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3))
	for _, tt := range []struct {
		name     string
		complex  bool
		channels int
	}{
		{"3 complex channels", true, 3},
		{"4 real channels", false, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := stage.Chain{SampleRate: 48000, Complex: tt.complex, Channels: tt.channels,
				Stages: []stage.Stage{shiftStage(1500), firStage(randTaps(r, 33), 4)}}
			const block, blocks = 103, 10
			v := channels(tt.complex)
			fv := v * tt.channels
			x := randTaps(r, fv*block*blocks)
			p, err := NewChain(c, block)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			plans := map[int][]stage.Retune{
				2: {{Index: 1, Stage: firStage(randTaps(r, 70), 4)}},
				5: {{Index: 0, Stage: shiftStage(-4000)}, {Index: 1, Stage: firStage(randTaps(r, 9), 4)}},
			}
			dst := make([]float32, 2*tt.channels*p.MaxOut(block))
			var got []float32
			var done []stage.Retune
			for b := range blocks {
				for _, pl := range plans[b] {
					pr, err := p.Prepare(pl.Index, pl.Stage)
					if err != nil {
						t.Fatal(err)
					}
					rt := p.Apply(pr)
					if want := c.InputAt(pl.Index, int64(b*block)); rt.At != want || rt.ChainAt != int64(b*block) {
						t.Fatalf("retune at %d (chain %d), want %d (%d)", rt.At, rt.ChainAt, want, b*block)
					}
					done = append(done, rt)
				}
				w, err := p.Process(dst, x[fv*b*block:fv*(b+1)*block])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, dst[:w]...)
			}
			one := c
			one.Channels = 1
			outV := channels(c.OutComplex())
			for ch := range tt.channels {
				xi := make([]float32, v*block*blocks)
				deinterleave(xi, x, ch, tt.channels, v)
				gi := make([]float32, len(got)/tt.channels)
				deinterleave(gi, got, ch, tt.channels, outV)
				if e := maxErrRMS(gi, retunedReference(one, xi, done)); e > 2e-5 {
					t.Errorf("channel %d: max error %.3g of RMS against the retuned reference", ch, e)
				}
			}
		})
	}
}

// TestPrepareWhileApplying: a retune is prepared outside the backend's
// lock (backend.Retune) while the consumer applies the one before it and
// runs blocks cut across cores; `go test -race` (make test) checks that
// the two share nothing unguarded.
func TestPrepareWhileApplying(t *testing.T) {
	taps, err := filter.BankPrototype(16, 4)
	if err != nil {
		t.Fatal(err)
	}
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewChannelize(taps, 16, 8)}}
	ch, err := newChain(c, 40000, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	var mu sync.Mutex
	desc, pending := c, []*Prepared(nil)
	done := make(chan error, 1)
	go func() {
		for k := range 50 {
			mu.Lock()
			d := desc
			mu.Unlock()
			p, err := ch.prepareOn(d, 0, stage.Stage{Kind: stage.KindChannelize, Taps: taps[:len(taps)-k]})
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			pending, desc = append(pending, p), p.desc
			mu.Unlock()
		}
		done <- nil
	}()
	src := make([]float32, 2*40000)
	dst := make([]float32, 2*16*ch.MaxOut(40000))
	for range 60 {
		mu.Lock()
		for _, p := range pending {
			ch.Apply(p)
		}
		pending = pending[:0]
		mu.Unlock()
		if _, err := ch.Process(dst, src); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
