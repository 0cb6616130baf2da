//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"github.com/sigproc/sigproc/internal/cudrv"
	"unsafe"

	"github.com/sigproc/sigproc/kernels"
)

// Defaults of the batch kernels (kernels/batch.cu); the module's
// fir_batch_per_thread and fir_batch_max_threads globals are what count.
const (
	batchPerThread = 12  // BATCH_R
	batchThreads   = 128 // default threads per block
	maxGridX       = 1<<31 - 1
)

// BatchFIR filters data that is already in device memory with the tiled
// batch kernels of kernels/batch.cu: y[n] = Σ_k h[k]·x[n−k], one output
// per input sample, complex data interleaved I/Q with both components
// filtered by the same real taps (filter.FIR's semantics). Frames of
// several lanes (channels, each real or I/Q; NewBatchFIRLanes) are
// filtered lane by lane with the same taps, in one launch.
//
// A BatchFIR belongs to the CUDA context that was current when it was made;
// the caller owns that context and the locked OS thread. Launch keeps its
// kernel arguments in the BatchFIR so it allocates nothing, and that makes
// a BatchFIR unsafe for concurrent use: launch from one goroutine (one
// BatchFIR may still launch onto several streams in turn).
type BatchFIR struct {
	mod     cudrv.Module
	fn      cudrv.Function
	dtaps   cudrv.DevicePtr
	ntaps   int
	ch      int  // lanes: values per frame
	lanes   bool // fir_batch_lanes (any ch) rather than fir_batch_real/iq
	smem    int
	smemMax int // the kernel's dynamic shared memory attribute, once raised past 48 KiB
	threads int
	perThr  int // output values per thread (BATCH_R)
	maxThr  int // BATCH_MAX_THREADS
	optin   int // the device's shared memory limit per block
	closed  bool

	// Launch arguments; params points at them.
	argIn, argOut, argTaps cudrv.DevicePtr
	argNTaps, argNOut      int64
	argLanes               int64
	params                 [6]unsafe.Pointer
}

// BatchSharedBytes is the dynamic shared memory one block of the batch
// kernel needs for ntaps taps, ch values per sample (lanes) and threads
// threads, with the embedded kernel's 12 output values per thread: the
// zero-padded reversed taps plus the input tile with its halo (for more
// than 2 lanes, one row per lane).
func BatchSharedBytes(ntaps, ch, threads int) int {
	if ch > 2 {
		return lanesSmem(ntaps, ch, threads, batchPerThread)
	}
	return batchSmem(ntaps, ch, threads, batchPerThread)
}

func batchSmem(ntaps, ch, threads, perThread int) int {
	tpad := (ntaps + 3) &^ 3
	return 4 * (tpad + threads*perThread + ch*tpad)
}

// lanesSmem is fir_batch_lanes' shared memory: the padded taps and one row
// of S floats per lane, S = frames + tpad with S/4 odd (kernels/batch.cu).
func lanesSmem(ntaps, lanes, threads, perThread int) int {
	tpad := (ntaps + 3) &^ 3
	s := (threads/lanes)*perThread + tpad
	if (s/4)%2 == 0 {
		s += 4
	}
	return 4 * (tpad + lanes*s)
}

// NewBatchFIR loads the embedded batch kernels into the current CUDA
// context and uploads taps (1 to BatchMaxTaps of them, finite). complex
// selects interleaved I/Q data.
func NewBatchFIR(taps []float32, complex bool) (*BatchFIR, error) {
	return NewBatchFIRFromPTX(taps, complex, "")
}

// NewBatchFIRFromPTX is NewBatchFIR with the kernels loaded from the PTX
// file at ptxPath instead of the embedded kernels.BatchPTX ("" keeps the
// embedded one), so a rebuilt kernel can be tried without rebuilding Go.
func NewBatchFIRFromPTX(taps []float32, complex bool, ptxPath string) (f *BatchFIR, err error) {
	lanes := 1
	if complex {
		lanes = 2
	}
	return newBatchFIR(taps, lanes, ptxPath, false)
}

// NewBatchFIRLanes is NewBatchFIRFromPTX for frames of lanes values (1 to
// BatchMaxLanes): N channels, each real (one lane) or I/Q (two), every
// lane filtered on its own with taps, all in one launch. 1 and 2 lanes
// take the kernels of NewBatchFIR; more take fir_batch_lanes.
func NewBatchFIRLanes(taps []float32, lanes int, ptxPath string) (*BatchFIR, error) {
	return newBatchFIR(taps, lanes, ptxPath, false)
}

// newBatchFIR builds the filter; generic forces fir_batch_lanes for 1 and
// 2 lanes too (tests compare it with the specialised kernels).
func newBatchFIR(taps []float32, lanes int, ptxPath string, generic bool) (f *BatchFIR, err error) {
	if err := CheckBatchTaps(taps); err != nil {
		return nil, err
	}
	if err := CheckBatchLanes(lanes); err != nil {
		return nil, err
	}
	ch := lanes
	name := "fir_batch_real"
	switch {
	case generic || lanes > 2:
		name = "fir_batch_lanes"
	case lanes == 2:
		name = "fir_batch_iq"
	}
	dev, err := cudrv.CurrentDevice()
	if err != nil {
		return nil, fmt.Errorf("gpu: batch FIR needs a current CUDA context: %w", err)
	}
	optin, err := cudrv.OptinSharedMem(dev)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	f = &BatchFIR{ntaps: len(taps), ch: ch, lanes: name == "fir_batch_lanes", optin: optin}
	if f.mod, err = cudrv.LoadModule(ptxPath, kernels.BatchPTX, "batch FIR"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	if f.fn, err = f.mod.Function(name); err != nil {
		return nil, fmt.Errorf("gpu: kernel %s: %w", name, err)
	}
	if f.perThr, err = moduleInt(f.mod, "fir_batch_per_thread"); err != nil {
		return nil, err
	}
	if f.maxThr, err = moduleInt(f.mod, "fir_batch_max_threads"); err != nil {
		return nil, err
	}
	if f.perThr <= 0 || f.perThr%4 != 0 || f.maxThr < 32 || f.maxThr < ch {
		return nil, fmt.Errorf("gpu: batch PTX declares %d values per thread and %d threads at most; want a positive multiple of 4 and >= 32",
			f.perThr, f.maxThr)
	}
	if err = f.SetThreads(min(batchThreads, f.maxThr&^31)); err != nil {
		return nil, err
	}
	n := int64(len(taps)) * 4
	if f.dtaps, err = cudrv.MemAlloc(n); err != nil {
		return nil, fmt.Errorf("gpu: allocate %d bytes for taps: %w", n, err)
	}
	if err = cudrv.MemcpyHtoD(f.dtaps, unsafe.Pointer(&taps[0]), n); err != nil {
		return nil, fmt.Errorf("gpu: copy taps: %w", err)
	}
	if err = cudrv.SyncUploads("batch FIR taps"); err != nil {
		return nil, err
	}
	f.argTaps = f.dtaps
	f.argNTaps = int64(len(taps))
	f.argLanes = int64(ch)
	f.params = [6]unsafe.Pointer{
		unsafe.Pointer(&f.argIn), unsafe.Pointer(&f.argOut), unsafe.Pointer(&f.argTaps),
		unsafe.Pointer(&f.argNTaps), unsafe.Pointer(&f.argNOut), unsafe.Pointer(&f.argLanes),
	}
	return f, nil
}

// moduleInt reads a 32-bit integer global of mod.
func moduleInt(mod cudrv.Module, name string) (int, error) {
	p, size, err := mod.Global(name)
	if err != nil {
		return 0, fmt.Errorf("gpu: batch PTX lacks %s: %w", name, err)
	}
	if size != 4 {
		return 0, fmt.Errorf("gpu: batch PTX global %s is %d bytes, want 4", name, size)
	}
	var v int32
	if err := cudrv.MemcpyDtoH(unsafe.Pointer(&v), p, 4); err != nil {
		return 0, fmt.Errorf("gpu: read %s: %w", name, err)
	}
	return int(v), nil
}

// SetThreads sets the threads per block of later Launches: a multiple of
// 32, at most the kernel's limit (256). More threads make bigger tiles
// (threads × 12 output values) and more shared memory per block; the
// default is 128.
func (f *BatchFIR) SetThreads(n int) error {
	if n < 32 || n%32 != 0 || n > f.maxThr || n < f.ch {
		return fmt.Errorf("gpu: batch FIR: %d threads per block; want a multiple of 32 from 32 to %d, at least the %d lanes", n, f.maxThr, f.ch)
	}
	smem, err := f.sharedFor(f.ntaps, n)
	if err != nil {
		return err
	}
	f.threads, f.smem = n, smem
	return nil
}

// smemFor is the dynamic shared memory of a block for ntaps taps and
// threads threads.
func (f *BatchFIR) smemFor(ntaps, threads int) int {
	if f.lanes {
		return lanesSmem(ntaps, f.ch, threads, f.perThr)
	}
	return batchSmem(ntaps, f.ch, threads, f.perThr)
}

// sharedFor checks that ntaps taps fit a block of threads threads in
// shared memory, raises the kernel's limit where needed, and returns the
// bytes a block takes.
func (f *BatchFIR) sharedFor(ntaps, threads int) (int, error) {
	smem := f.smemFor(ntaps, threads)
	if smem > f.optin {
		what := fmt.Sprintf("%d taps and %d threads", ntaps, threads)
		if f.ch > 2 {
			what = fmt.Sprintf("%d taps on %d lanes (values per frame) and %d threads", ntaps, f.ch, threads)
		}
		return 0, fmt.Errorf("gpu: batch FIR with %s needs %d KiB of shared memory per block, the device allows %d KiB (use fewer taps or channels)",
			what, smem>>10, f.optin>>10)
	}
	if smem > 48<<10 && smem > f.smemMax {
		if err := f.fn.SetMaxDynamicSmem(smem); err != nil {
			return 0, fmt.Errorf("gpu: %w", err)
		}
		f.smemMax = smem
	}
	return smem, nil
}

// maxTapsFor returns the most taps (up to BatchMaxTaps) that fit shared
// memory at the current thread count.
func (f *BatchFIR) maxTapsFor() int {
	n := BatchMaxTaps
	for n > 1 && f.smemFor(n, f.threads) > f.optin {
		n -= 4
	}
	return max(1, n)
}

// useTaps makes later Launches read ntaps taps at dtaps (device memory
// the caller owns, alive while launches read it); the shared memory is
// checked and raised as for SetThreads. The BatchFIR's own taps stay
// allocated until Close.
func (f *BatchFIR) useTaps(dtaps cudrv.DevicePtr, ntaps int) error {
	if ntaps < 1 || ntaps > BatchMaxTaps {
		return fmt.Errorf("gpu: batch FIR: %d taps; want 1 to %d", ntaps, BatchMaxTaps)
	}
	smem, err := f.sharedFor(ntaps, f.threads)
	if err != nil {
		return err
	}
	f.argTaps, f.argNTaps, f.ntaps, f.smem = dtaps, int64(ntaps), ntaps, smem
	return nil
}

// NTaps returns the number of taps.
func (f *BatchFIR) NTaps() int { return f.ntaps }

// Channels returns the values per sample (frame), the lanes: 1 for real
// data, 2 for I/Q, N·(1 or 2) for N channels.
func (f *BatchFIR) Channels() int { return f.ch }

// HistoryValues is the number of float32 values that must precede the new
// samples in Launch's input: (ntaps−1)·Channels.
func (f *BatchFIR) HistoryValues() int { return (f.ntaps - 1) * f.ch }

// SharedBytes is the dynamic shared memory each block uses.
func (f *BatchFIR) SharedBytes() int { return f.smem }

// Threads is the thread count of each block.
func (f *BatchFIR) Threads() int { return f.threads }

// Blocks returns the grid size Launch uses for nout samples.
func (f *BatchFIR) Blocks(nout int) int {
	if f.lanes {
		frames := int64(f.threads/f.ch) * int64(f.perThr)
		return int(min((int64(nout)+frames-1)/frames, maxGridX+1))
	}
	vals := int64(nout) * int64(f.ch)
	tile := int64(f.threads) * int64(f.perThr)
	return int(min((vals+tile-1)/tile, maxGridX+1))
}

// Launch enqueues the filter of nout samples (frames: IQ pairs when
// complex, one value of every lane for N channels) on stream. in points at HistoryValues() float32 values of history (zeros
// at the start of a stream, else the last HistoryValues() values before
// this chunk) followed by nout·Channels() new values; out receives
// nout·Channels() outputs and must not overlap in. Aligning in and out to
// 16 bytes (as cuMemAlloc does) lets the kernel use vector loads and
// stores. nout 0 does nothing. Launch returns once the kernel is queued;
// synchronise the stream before reading out.
func (f *BatchFIR) Launch(stream cudrv.Stream, in, out cudrv.DevicePtr, nout int) error {
	switch {
	case f.closed:
		return errors.New("gpu: batch FIR: launch after Close")
	case nout < 0:
		return fmt.Errorf("gpu: batch FIR: nout %d < 0", nout)
	case nout == 0:
		return nil
	case in == 0 || out == 0:
		return errors.New("gpu: batch FIR: nil device pointer")
	}
	blocks := f.Blocks(nout)
	if blocks > maxGridX {
		return fmt.Errorf("gpu: batch FIR: %d samples need %d blocks, more than the grid limit %d", nout, blocks, maxGridX)
	}
	f.argIn, f.argOut, f.argNOut = in, out, int64(nout)
	params := f.params[:5]
	if f.lanes {
		params = f.params[:]
	}
	if err := f.fn.Launch(blocks, f.threads, f.smem, stream, params); err != nil {
		return fmt.Errorf("gpu: launch batch FIR (%d taps, %d samples, %d blocks): %w", f.ntaps, nout, blocks, err)
	}
	return nil
}

// Close frees the taps and unloads the module. The context must still be
// current; pending launches must have finished. Close is idempotent.
func (f *BatchFIR) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	if f.dtaps != 0 {
		if err := cudrv.MemFree(f.dtaps); err != nil {
			errs = append(errs, fmt.Errorf("gpu: free taps: %w", err))
		}
		f.dtaps = 0
	}
	if f.mod != (cudrv.Module{}) {
		if err := f.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: unload batch module: %w", err))
		}
		f.mod = cudrv.Module{}
	}
	return errors.Join(errs...)
}
