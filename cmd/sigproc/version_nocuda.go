//go:build !cuda

package main

// cudaBuilt reports whether this binary was built with -tags cuda.
const cudaBuilt = false
