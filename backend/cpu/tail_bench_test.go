package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// BenchmarkChainTail times channelize's chain on 4096-sample complex
// blocks with and without the input history that retunes need.
func BenchmarkChainTail(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	c := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{shiftStage(-250000), firStage(randTaps(r, 129), 8)}}
	for _, keep := range []bool{true, false} {
		name := "history"
		if !keep {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			p, err := NewChain(c, 4096)
			if err != nil {
				b.Fatal(err)
			}
			if !keep {
				p.tails = make([]*tail, len(p.tails))
			}
			x := randTaps(r, 2*4096)
			dst := make([]float32, 2*p.MaxOut(4096))
			b.SetBytes(4096 * 8)
			for b.Loop() {
				p.Process(dst, x)
			}
		})
	}
}
