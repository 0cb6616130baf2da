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

// TestRunChainBank: a filter bank's output is frames of its kept
// channels, counted as frames and sized as 2 values a channel. With one
// tap h[0] = 1 channel k of frame n is x[nD]·exp(−j2πk·nD/M): for a
// constant 1, M = 8 and D = 4, (−1)^(k·n).
func TestRunChainBank(t *testing.T) {
	keep := []int{0, 5, 7}
	c := stage.Chain{SampleRate: 8, Complex: true, Stages: []stage.Stage{stage.NewChannelize([]float32{1}, 8, 4), stage.NewSelect(keep...)}}
	in := make([]float32, 2*100)
	for i := range 100 {
		in[2*i] = 1
	}
	r, err := RunChain(ChainOptions{Chain: c, Input: in, Block: 33, Reps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.OutSamples != 25 || len(r.Output) != 25*3*2 {
		t.Fatalf("%d frames, %d values; want 25 frames of 3 channels", r.OutSamples, len(r.Output))
	}
	for n := range 25 {
		for j, k := range keep {
			want := float32(1 - 2*(k*n%2))
			re, im := r.Output[2*(3*n+j)], r.Output[2*(3*n+j)+1]
			if d := re - want; d > 1e-5 || d < -1e-5 || im > 1e-5 || im < -1e-5 {
				t.Fatalf("frame %d channel %d = %g%+gj, want %g", n, k, re, im, want)
			}
		}
	}
}
