package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestChannelizeSplit: a channelizer on 2–4 cores, its blocks cut into
// segments, gives the bits of one core, retuned mid-stream too.
func TestChannelizeSplit(t *testing.T) {
	for _, complex := range []bool{false, true} {
		r := rand.New(rand.NewPCG(30, 3))
		for name, c := range map[string]stage.Chain{
			"channelize64÷32":     {Stages: []stage.Stage{stage.NewChannelize(randTaps(r, 16*64-5), 64, 32)}},
			"shift+channelize8":   {Stages: []stage.Stage{shiftStage(1000), stage.NewChannelize(randTaps(r, 100), 8, 8)}},
			"channelize32+select": {Stages: []stage.Stage{stage.NewChannelize(randTaps(r, 200), 32, 16), stage.NewSelect(31, 0, 7)}},
		} {
			c.SampleRate, c.Complex = 1e6, complex
			t.Run(fmt.Sprintf("%s/complex=%v", name, complex), func(t *testing.T) { checkSplit(t, r, c) })
		}
	}
}

// TestSelectOfChannels: a select first on a stream of several channels
// takes its frames whole and keeps the channels listed.
func TestSelectOfChannels(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 5))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Channels: 5, Stages: []stage.Stage{stage.NewSelect(4, 1)}}
	p, err := NewChain(c, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	x := randTaps(r, 100*5*2)
	y := make([]float32, 100*2*2)
	n, err := p.Process(y, x)
	if err != nil || n != len(y) {
		t.Fatalf("Process: %d, %v", n, err)
	}
	for f := range 100 {
		for j, k := range []int{4, 1} {
			if y[(f*2+j)*2] != x[(f*5+k)*2] || y[(f*2+j)*2+1] != x[(f*5+k)*2+1] {
				t.Fatalf("frame %d channel %d is not input channel %d", f, j, k)
			}
		}
	}
}

// TestChannelizeRetune: new taps, longer and shorter, apply from the
// frame at the retune's sample on, over the same input history, and the
// frames match the definition (float64) with the taps in force at each.
func TestChannelizeRetune(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 4))
	const m, d, block, blocks = 16, 8, 77, 12 // 77: frames straddle blocks
	c := stage.Chain{SampleRate: 48000, Complex: true, Stages: []stage.Stage{stage.NewChannelize(randTaps(r, 70), m, d)}}
	plans := map[int]stage.Stage{2: stage.NewChannelize(randTaps(r, 150), m, 0), 6: stage.NewChannelize(randTaps(r, 9), 0, d)}
	x := randTaps(r, 2*block*blocks)
	p, err := NewChain(c, block)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 2*m*p.MaxOut(block))
	var got []float32
	type change struct {
		at   int64
		taps []float32
	}
	changes := []change{{0, c.Stages[0].Taps}}
	for b := range blocks {
		if s, ok := plans[b]; ok {
			pr, err := p.Prepare(0, s)
			if err != nil {
				t.Fatal(err)
			}
			rt := p.Apply(pr)
			if rt.At != int64(b*block) || rt.Stage.Bank != m || rt.Stage.Decimate != d {
				t.Fatalf("retune %+v, want at %d keeping %d channels ÷%d", rt, b*block, m, d)
			}
			changes = append(changes, change{rt.At, s.Taps})
		}
		w, err := p.Process(dst, x[2*b*block:2*(b+1)*block])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, dst[:w]...)
	}
	var want []float32
	for f := int64(0); f < block*blocks; f += d {
		var h []float32
		for _, ch := range changes {
			if ch.at <= f {
				h = ch.taps
			}
		}
		for k := range m {
			var acc complex128
			for i, v := range h {
				if j := f - int64(i); j >= 0 {
					xj := complex(float64(x[2*j]), float64(x[2*j+1]))
					acc += complex(float64(v), 0) * xj * complexExp(-2*math.Pi*float64(int64(k)*j%m)/m)
				}
			}
			want = append(want, float32(real(acc)), float32(imag(acc)))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	if e := maxErrRMS(got, want); e > 2e-5 {
		t.Errorf("max error %.3g of RMS against the retuned definition", e)
	}
}

// TestStagesAfterSelect: the stages after a channelizer's selection run
// on each kept channel apart: the output is each channel of the
// selection filtered (and decimated) alone, and a retune of such a stage
// lands at its own index.
func TestStagesAfterSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 6))
	const block, blocks = 1000, 9
	bank := []stage.Stage{stage.NewChannelize(randTaps(r, 130), 16, 8), stage.NewSelect(3, 12, 0)}
	taps := randTaps(r, 33)
	full := stage.Chain{SampleRate: 1.6e6, Complex: true, Stages: append(append([]stage.Stage(nil), bank...), shiftStage(1000), firStage(taps, 2))}
	if full.FanEnd() != 2 || full.OutChannels() != 3 {
		t.Fatalf("FanEnd %d, %d channels", full.FanEnd(), full.OutChannels())
	}
	x := randTaps(r, 2*block*blocks)
	run := func(c stage.Chain, workers int) []float32 {
		p, err := newChain(c, block, workers)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		dst := make([]float32, 2*c.OutChannels()*p.MaxOut(block))
		var out []float32
		for b := range blocks {
			n, err := p.Process(dst, x[2*b*block:2*(b+1)*block])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, dst[:n]...)
		}
		return out
	}
	kept := run(stage.Chain{SampleRate: 1.6e6, Complex: true, Stages: bank}, 1)
	got := run(full, 2)
	one := stage.Chain{SampleRate: 1.6e6 / 8, Complex: true, Stages: []stage.Stage{shiftStage(1000), firStage(taps, 2)}}
	for j := range 3 {
		var ch []float32
		for f := 0; f < len(kept)/6; f++ {
			ch = append(ch, kept[6*f+2*j], kept[6*f+2*j+1])
		}
		want := reference(one, ch)
		var g []float32
		for f := 0; f < len(got)/6; f++ {
			g = append(g, got[6*f+2*j], got[6*f+2*j+1])
		}
		if e := maxErrRMS(g, want); len(g) != len(want) || e > 2e-5 {
			t.Errorf("channel %d: %d values against %d, max error %.3g of RMS", j, len(g), len(want), e)
		}
	}
	p, err := NewChain(full, block)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dst := make([]float32, 2*3*p.MaxOut(block))
	p.Process(dst, x[:2*block])
	pr, err := p.Prepare(3, firStage(randTaps(r, 40), 0))
	if err != nil {
		t.Fatal(err)
	}
	if rt := p.Apply(pr); rt.Index != 3 || rt.At != 125 || rt.ChainAt != block || p.Desc().Stages[3].Decimate != 2 {
		t.Errorf("retune of stage 3: %+v, want at its input sample 125 (chain %d)", rt, block)
	}
	if _, err := p.Prepare(3, firStage(randTaps(r, 40), 4)); err == nil || !strings.Contains(err.Error(), "stage 3") {
		t.Errorf("a decimation change of stage 3: %v", err)
	}
	checkSplit(t, r, full)
}

// TestChannelizeChainAllocs: a chain with a channelizer, a selection and
// stages per channel allocates nothing a block, cut across cores or not,
// and shows its output to a watcher.
func TestChannelizeChainAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 7))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewChannelize(randTaps(r, 256), 32, 16), stage.NewSelect(1, 2), firStage(randTaps(r, 9), 2)}}
	for _, workers := range []int{1, 4} {
		p, err := newChain(c, 4096, workers)
		if err != nil {
			t.Fatal(err)
		}
		last := 0
		p.watch = func(point int, x []float32) {
			if point == 2 {
				last = len(x)
			}
		}
		x := randTaps(r, 2*4096)
		dst := make([]float32, 2*2*p.MaxOut(4096))
		n, _ := p.Process(dst, x)
		if a := testing.AllocsPerRun(10, func() { p.Process(dst, x) }); a != 0 || last != n || n == 0 {
			t.Errorf("%d workers: %v allocations a block; the watcher saw %d of %d output values", workers, a, last, n)
		}
		p.Close()
	}
}

// TestChainRefusesHugeOutput: a block whose output would pass 1 GiB (4096
// channels, no decimation, 64 Ki samples: 2 GiB) is refused, saying what
// to change.
func TestChainRefusesHugeOutput(t *testing.T) {
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{stage.NewChannelize([]float32{1}, 4096, 1)}}
	if _, err := NewChain(c, 1<<16); err == nil || !strings.Contains(err.Error(), "stage 0 (channelize): its output for a block of 65536 samples is 2048 MiB (4096 channels); give a smaller block_size") {
		t.Errorf("err %v", err)
	}
}
