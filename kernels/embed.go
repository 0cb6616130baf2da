// Package kernels holds sigproc's CUDA kernels: fir.cu, their source, and
// fir.ptx, the PTX built from it (`make ptx`), which the cuda build embeds
// and the driver JITs for the GPU at hand.
package kernels

import _ "embed"

// PTX is the embedded PTX of fir.cu.
//
//go:embed fir.ptx
var PTX string
