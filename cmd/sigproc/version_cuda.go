//go:build cuda

package main

// cudaBuilt reports that this binary has the CUDA backend.
const cudaBuilt = true
