package gpubench

import (
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

// ReferenceFIRLanes filters each lane on its own: lane c of its output is
// filter.Convolve of lane c of the input.
func TestReferenceFIRLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	taps := []float32{0.5, -0.25, 0.125, 1}
	for _, lanes := range []int{1, 2, 3, 8} {
		frames := 70001
		x := make([]float32, frames*lanes)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y, err := ReferenceFIRLanes(taps, x, lanes, 3)
		if err != nil {
			t.Fatal(err)
		}
		for c := range lanes {
			one := make([]float32, frames)
			got := make([]float32, frames)
			for f := range frames {
				one[f], got[f] = x[f*lanes+c], y[f*lanes+c]
			}
			if e := filter.MaxErrRMS(got, filter.Convolve(taps, one, false)); e > 1e-6 {
				t.Fatalf("lanes %d, lane %d: max error %g", lanes, c, e)
			}
		}
	}
}
