// Package kernels holds sigproc's CUDA kernels: the .cu sources and the PTX
// built from each (`make ptx`), which the cuda build embeds and the driver
// JITs for the GPU at hand. Each .cu file is its own module.
package kernels

import _ "embed"

// PTX is the embedded PTX of fir.cu: the persistent zero-copy kernel.
//
//go:embed fir.ptx
var PTX string

// BatchPTX is the embedded PTX of batch.cu: FIR kernels for data already in
// device memory (the explicit transport, bench fir).
//
//go:embed batch.ptx
var BatchPTX string

// BandwidthPTX is the embedded PTX of bw.cu: the kernel that measures the
// bandwidth of mapped host memory read from the GPU.
//
//go:embed bw.ptx
var BandwidthPTX string

// ChainPTX is the embedded PTX of chain.cu: the stage chain's kernels
// (shift, polyphase decimating FIR and resampler) for data already in
// device memory (the explicit transport, bench chain).
//
//go:embed chain.ptx
var ChainPTX string

// OLSPTX is the embedded PTX of ols.cu: the gather, spectrum product and
// scatter steps of overlap-save fast convolution around cuFFT.
//
//go:embed ols.ptx
var OLSPTX string

// ConvertPTX is the embedded PTX of convert.cu: stored integer samples to
// float32 (the explicit transport, a recording taken in place).
//
//go:embed convert.ptx
var ConvertPTX string

// ZChainPTX is the embedded PTX of zchain.cu: the persistent kernel that
// runs a stage chain on the zero-copy transport.
//
//go:embed zchain.ptx
var ZChainPTX string
