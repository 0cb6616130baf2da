package mixer_test

import (
	"fmt"
	"math"

	"github.com/sigproc/sigproc/mixer"
)

// A tone at +250 kHz in a 2 MS/s complex stream, shifted by −250 kHz, is
// at DC: every output sample is the tone's first value.
func Example() {
	s, err := mixer.New(-250000, 2e6, true)
	if err != nil {
		panic(err)
	}
	x := []float32{1, 0, 0.70710677, 0.70710677, 0, 1, -0.70710677, 0.70710677} // exp(j·2π·n/8)
	y := make([]float32, len(x))
	n, _ := s.Process(y, x)
	for i := 0; i < n; i += 2 {
		fmt.Printf("%.3f ", math.Hypot(float64(y[i]-1), float64(y[i+1])))
	}
	fmt.Println()
	// Output: 0.000 0.000 0.000 0.000
}
