package cpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// split returns channel c of frames of n channels (v values per sample).
func split(x []float32, c, n, v int) []float32 {
	out := make([]float32, len(x)/n)
	deinterleave(out, x, c, n, v)
	return out
}

// TestChannelsMatchReference runs 1, 2, 4 and 8 channels, real and
// complex, through every test chain in odd block sizes: each channel of
// the interleaved output equals the float64 reference of that channel
// alone, so channels neither mix nor share state.
func TestChannelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	const rate = 2e6
	for _, nch := range []int{1, 2, 4, 8} {
		for _, cplx := range []bool{false, true} {
			for name, c := range chains(r, rate, cplx) {
				c.Channels = nch
				t.Run(fmt.Sprintf("ch=%d/complex=%v/%s", nch, cplx, name), func(t *testing.T) {
					v, ov := valuesOf(cplx), valuesOf(c.OutComplex())
					const n, maxBlock = 1501, 301
					x := randTaps(r, nch*v*n)
					for i := range x { // a different level per channel
						x[i] *= float32(1 + (i/v)%nch)
					}
					p, err := NewChain(c, maxBlock)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					dst := make([]float32, nch*ov*p.MaxOut(maxBlock))
					var got []float32
					for pos, i := 0, 0; pos < n; i++ {
						b := min(n-pos, 1+(i*7919)%maxBlock)
						w, err := p.Process(dst, x[nch*v*pos:nch*v*(pos+b)])
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, dst[:w]...)
						pos += b
					}
					if want := int64(nch*ov) * c.Count(n); int64(len(got)) != want {
						t.Fatalf("got %d values, want %d", len(got), want)
					}
					one := c
					one.Channels = 1
					for ch := 0; ch < nch; ch++ {
						want := reference(one, split(x, ch, nch, v))
						if e := maxErrRMS(split(got, ch, nch, ov), want); e > 2e-5 {
							t.Errorf("channel %d: max error %.3g of RMS", ch, e)
						}
					}
				})
			}
		}
	}
}

func TestChannelsProcessAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	c := chains(r, 1e6, true)["shift+fir÷3+resample"]
	c.Channels = 4
	p, err := NewChain(c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	x := randTaps(r, 4*2*999)
	dst := make([]float32, 4*2*p.MaxOut(1000))
	if a := testing.AllocsPerRun(50, func() { p.Process(dst, x) }); a != 0 {
		t.Errorf("Process allocates %v times", a)
	}
}

// TestBackendRunsChannels runs 4 real channels through a shift and a
// decimating FIR in the pipeline: the sink gets interleaved complex frames,
// each channel its own reference, and the counters count frames.
func TestBackendRunsChannels(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	c := chains(r, 48000, false)["shift+fir÷8"]
	c.Channels = 4
	const n, block = 10007, 256
	x := randTaps(r, 4*n)
	be, err := New(c, block)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	snk := &sliceSink{}
	st, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, snk,
		pipeline.Config{BlockSize: block, Channels: 4, OutComplex: c.OutComplex(), Slots: 4, Policy: pipeline.PolicyBlock}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	one := c
	one.Channels = 1
	for ch := 0; ch < 4; ch++ {
		want := reference(one, split(x, ch, 4, 1))
		if e := maxErrRMS(split(snk.got, ch, 4, 2), want); e > 2e-5 {
			t.Errorf("channel %d: max error %.3g of RMS", ch, e)
		}
	}
	if st.SamplesIn != n || st.SamplesFiltered != n || st.SamplesWritten != (n+7)/8 {
		t.Errorf("stats %+v", st)
	}
	// A layout of another channel count is refused.
	be2, _ := New(c, block)
	if _, err := be2.Start(context.Background(), pipeline.Layout{BlockSize: block, Channels: 2, Slots: 4}); err == nil {
		t.Error("2 values per frame accepted by a 4-channel chain")
	}
}

// BenchmarkChannels filters 8 channels of 64 Ki samples with a 129-tap
// FIR: one 8-channel chain (its channels on the cores) against 8
// one-channel chains run one after another.
func BenchmarkChannels(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	const n = 1 << 16
	taps := randTaps(r, benchTaps)
	for _, mode := range []string{"8-channel", "8x1-channel"} {
		b.Run(mode, func(b *testing.B) {
			c := stage.FIR(1e6, false, taps)
			c.Stages[0].Method = "direct"
			x := randTaps(r, 8*n)
			dst := make([]float32, 8*n)
			b.SetBytes(int64(4 * len(x)))
			if mode == "8-channel" {
				c.Channels = 8
				p, err := NewChain(c, n)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				for b.Loop() {
					p.Process(dst, x)
				}
				return
			}
			var ps []*Chain
			for range 8 {
				p, err := NewChain(c, n)
				if err != nil {
					b.Fatal(err)
				}
				ps = append(ps, p)
			}
			for b.Loop() {
				for i, p := range ps {
					p.Process(dst[i*n:(i+1)*n], x[i*n:(i+1)*n])
				}
			}
		})
	}
}

// benchTaps is BenchmarkChannels's filter length.
const benchTaps = 257

// TestChannelsLargeBlocks runs blocks longer than the chunk the channels
// are split in: the output does not depend on it.
func TestChannelsLargeBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, name := range []string{"fir", "shift+fir÷3+resample"} {
		c := chains(r, 1e6, true)[name]
		c.Channels = 3
		const n = 50000
		x := randTaps(r, 3*2*n)
		p, err := NewChain(c, n)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float32, 3*2*p.MaxOut(n))
		w, err := p.Process(dst, x)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		one := c
		one.Channels = 1
		for ch := 0; ch < 3; ch++ {
			if e := maxErrRMS(split(dst[:w], ch, 3, 2), reference(one, split(x, ch, 3, 2))); e > 2e-5 {
				t.Errorf("%s: channel %d: max error %.3g of RMS", name, ch, e)
			}
		}
	}
}

// TestWatchStagesOfChannels: a chain whose stages run on each channel
// apart (several channels in, or the stages after a channelizer's
// selection) shows every stage's output to a watcher as whole frames:
// the values the chain cut after that stage outputs, in blocks of more
// frames than one chunk of channels too.
func TestWatchStagesOfChannels(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	for name, c := range map[string]stage.Chain{
		"3 channels": {Channels: 3, Stages: []stage.Stage{shiftStage(1000), firStage(randTaps(r, 31), 2), shiftStage(-300)}},
		"select then stages": {Stages: []stage.Stage{stage.NewChannelize(randTaps(r, 130), 16, 8), stage.NewSelect(3, 12, 0),
			shiftStage(1000), firStage(randTaps(r, 33), 2), shiftStage(-500)}},
	} {
		c.SampleRate, c.Complex = 1.6e6, true
		const block, blocks = 30000, 3 // 30000 frames: more than one chunk of 3 channels
		x := randTaps(r, 2*c.ChannelCount()*block*blocks)
		run := func(c stage.Chain, watch func(int, []float32)) []float32 {
			p, err := newChain(c, block, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.watch = watch
			dst := make([]float32, 2*c.OutChannels()*p.MaxOut(block))
			var out []float32
			for b := range blocks {
				fv := 2 * c.ChannelCount()
				n, err := p.Process(dst, x[fv*b*block:fv*(b+1)*block])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, dst[:n]...)
			}
			return out
		}
		seen := make([][]float32, len(c.Stages))
		run(c, func(point int, v []float32) {
			if point >= 0 {
				seen[point] = append(seen[point], v...)
			}
		})
		for i := range c.Stages {
			cut := c
			cut.Stages = c.Stages[:i+1]
			want := run(cut, nil)
			if !slices.Equal(seen[i], want) {
				t.Errorf("%s: stage %d showed %d values, not the %d its chain outputs", name, i, len(seen[i]), len(want))
			}
		}
	}
}
