package filter

import "math/rand/v2"

// randSlice returns n uniform values in [-1, 1).
func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*rng.Float64() - 1)
	}
	return s
}
