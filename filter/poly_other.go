//go:build !amd64 || purego

package filter

// polySumVec has no vector kernel on this platform or build.
func polySumVec(_, _, _ []float32, _ int) int { return 0 }
