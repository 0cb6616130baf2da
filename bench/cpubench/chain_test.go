package cpubench

import (
	"testing"

	"github.com/sigproc/sigproc/stage"
)

func TestRunChain(t *testing.T) {
	c := stage.Chain{SampleRate: 8, Complex: true, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: -1},
		{Kind: stage.KindFIR, Taps: []float32{1}, Decimate: 2},
	}}
	in := make([]float32, 2*9)
	for i := 0; i < 9; i++ {
		in[2*i] = 1 // DC
	}
	r, err := RunChain(ChainOptions{Chain: c, Input: in, Block: 4, Reps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 9 || r.OutSamples != 5 || len(r.Output) != 10 || r.InMSps <= 0 {
		t.Fatalf("%+v", r)
	}
	// Sample 2m is shifted by −2π·2m/8: output m is exp(−jπm/2).
	want := []float32{1, 0, 0, -1, -1, 0, 0, 1, 1, 0}
	for i, v := range want {
		if d := r.Output[i] - v; d > 1e-6 || d < -1e-6 {
			t.Fatalf("output %v, want %v", r.Output, want)
		}
	}
	if _, err := RunChain(ChainOptions{Chain: c, Input: in[:3], Block: 4, Reps: 1}); err == nil {
		t.Error("odd complex input accepted")
	}
}
