// Package cuda is sigproc's CUDA backend, with two transports: a persistent
// kernel that polls a ring in mapped, pinned host memory (zero-copy, for
// small blocks: a plain FIR, kernels/fir.cu, or a chain of shift, fir and
// resample stages, kernels/zchain.cu, both retuned at a block), and the
// explicit transport, which keeps several large
// blocks in flight on several streams through the batch FIR (copies in,
// filtering and copies out of different blocks overlap). A chain of stages
// (shift, decimating fir, resample, channelize and the select after it;
// package stage) runs on the explicit transport through ChainFilter, the
// polyphase and filter bank kernels of kernels/chain.cu, which compute
// only the kept outputs, take N channels (and a bank's kept channels) as a
// batch dimension, keep every stage's history, decimation phase and shift
// phase from block to block, and retune a shift, fir or channelize at a
// block (chain_retune_cuda.go).
//
// Each transport is one type behind a small internal interface
// (transport_cuda.go): zeroCopy, and explicit (explicit-pageable is its
// pageable option). The backend resolves the transport when it starts,
// makes that one, and delegates to it; what decides which transport runs
// and what it needs (chooseTransport, CheckChain, the pinned budget, the
// kernels' geometry) is pure, builds without the tag and is unit-tested.
//
// Its driver code is behind the `cuda` build tag and uses internal/cudrv's
// types (module, kernel, stream, event, device and host memory), which own
// the cgo and gorgonia.org/cu. Without the tag the package still builds: Built reports
// false and NewBackend returns ErrNotBuilt, so callers never see the tag.
// The cuda binary links libcuda.so.1 and gorgonia.org/cu calls cuInit (and
// exits on failure) in its package init; internal/cudrv/cuinit runs first
// and turns a failure into a clear message (see cuinit's doc).
//
// # Zero-copy protocol
//
// The input and output rings hold 8-byte words {float32 value, uint32 tag},
// tag = block index + 1 (flag-in-data, as in NCCL's LL protocol). The host
// writes every word with one aligned 8-byte store (internal/tagged, in assembly
// on amd64, so the store is one MOVQ by construction, not by compiler
// whim), so a word with the right tag carries the right value, and the
// kernel needs no separate index that would cost another PCIe round trip.
// The kernel writes its output the same way and the host consumer spins on
// the output tags. Slot i%N is reused only after the host has read block
// i's output, so neither side needs a credit counter. A control block
// holds the stop flag (host), heartbeat, error and running words (kernel),
// each on its own 128-byte line; the host watchdog turns a kernel whose
// heartbeat stops into an error instead of a hang.
package cuda
