//go:build !amd64 || purego

package capture

// anyNonFinite reports whether x holds a NaN or an infinity.
func anyNonFinite(x []float32) bool { return anyNonFiniteGeneric(x) }
