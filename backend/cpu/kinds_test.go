package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestApplyAllocs: handing a running stream to a retuned kernel (each
// kind's stage.Resumer) allocates nothing.
func TestApplyAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{shiftStage(1000), firStage(randTaps(r, 33), 4), firStage(randTaps(r, 9), 1)}}
	p, err := NewChain(c, 256)
	if err != nil {
		t.Fatal(err)
	}
	x := randTaps(r, 512)
	dst := make([]float32, 2*p.MaxOut(256))
	if _, err := p.Process(dst, x); err != nil {
		t.Fatal(err)
	}
	const runs = 20
	var ps []*Prepared
	for k := 0; k <= runs; k++ {
		for i, s := range c.Stages {
			s.FrequencyHz, s.Taps = float64(k), randTaps(r, len(s.Taps)+k)
			pr, err := p.Prepare(i, s)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, pr)
		}
	}
	if a := testing.AllocsPerRun(runs, func() {
		for range c.Stages {
			p.Apply(ps[0])
			ps = ps[1:]
		}
	}); a != 0 {
		t.Errorf("Apply allocates %g times", a)
	}
}
