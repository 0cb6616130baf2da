package stage_test

import (
	"fmt"

	"github.com/sigproc/sigproc/stage"
)

// A channel selector: shift a 2 MS/s complex stream by −250 kHz, low-pass
// and decimate by 8. The description says what comes out without running
// anything.
func ExampleChain() {
	c := stage.Chain{SampleRate: 2e6, Complex: true, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: -250000},
		{Kind: stage.KindFIR, Taps: make([]float32, 129), Decimate: 8},
		{Kind: stage.KindResample, Taps: []float32{1, 1, 1}, Up: 3, Down: 2},
	}}
	fmt.Println(c.Validate())
	fmt.Println(c)
	fmt.Println(c.OutRate(), c.OutComplex(), c.Shift())
	fmt.Println(c.Count(1000), c.MaxOut(4096))
	// Output:
	// <nil>
	// shift -250000 Hz → fir 129 taps ÷8 → resample 3 taps ×3/2
	// 375000 true -250000
	// 188 768
}
