//go:build !amd64 || purego

package filter

func cmulSplit(xr, xi, hr, hi []float32) { cmulGeneric(xr, xi, hr, hi) }
