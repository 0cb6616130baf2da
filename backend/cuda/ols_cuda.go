//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/kernels"
)

// OLSOptions tune an OLSFIR; the zero value chooses everything.
type OLSOptions struct {
	FFTSize     int    // transform points, a power of two >= taps; 0 = OLSFFTSize
	ChunkValues int    // float32 values per pass of the kernels; 0 = 4 Mi (L2-resident work)
	MaxSamples  int    // the largest Launch expected (the explicit transport's block); 0 = unknown
	PTXPath     string // ols.ptx to load instead of the embedded one
	// Strided lets the forward transform of a full pass read its
	// segments straight from the input (cuFFT's advanced layout with
	// overlapping inputs, idist = L < n) instead of gathering them first,
	// which saves one pass over the work; a partial last pass, and a pass
	// whose input cuFFT would refuse as misaligned (olsStridedPass), still
	// gathers. Off by default until measured on the device.
	Strided bool
	// Fused runs the whole of overlap-save in one kernel per transform
	// (kernels/ols.cu's ols_fused_*: shared-memory radix-2 transforms,
	// one read and one write of the data) instead of cuFFT; transforms of
	// up to OLSFusedMaxFFT points. It needs no cuFFT.
	Fused bool
	// Radix4 makes the fused kernel take its stages two at a time in
	// registers (radix 2²), halving its shared-memory traffic.
	Radix4 bool
}

// OLSFIR filters data already in device memory by overlap-save fast
// convolution with cuFFT: the same contract as BatchFIR (the
// [history | block] input layout, one output per input sample, complex
// data interleaved I/Q with the same real taps), at a cost that grows
// with the logarithm of the tap count rather than the tap count.
//
// Each pass of Launch covers up to a chunk of samples in segments of
// L = n − (ntaps−1) outputs: gather the segments (kernels/ols.cu), one
// batched forward transform, the product with the filter's spectrum
// (computed once in float64 and scaled by 1/n), one batched inverse, and
// scatter the valid points. The work buffers are shared by the passes, so
// launches must be stream-ordered one after another (as the explicit
// transport's history chain orders them); like BatchFIR it keeps its
// kernel arguments inside and is not safe for concurrent use.
type OLSFIR struct {
	lib                   *cudrv.CuFFT
	mod                   cudrv.Module
	gather, mul, scatter  cudrv.Function
	fwd, inv              *cudrv.FFTPlan
	direct                *cudrv.FFTPlan // the strided forward plan (OLSOptions.Strided), else nil
	fused                 cudrv.Function // ols_fused_* when OLSOptions.Fused
	isFused               bool
	dtw                   cudrv.DevicePtr // the fused kernel's twiddles
	fArgs                 [10]uint64
	fp                    [10]unsafe.Pointer
	r4                    bool
	dh, dwork             cudrv.DevicePtr
	ntaps, ch, n, l, nseg int
	stride                int // float32 values from one segment to the next in dwork
	nbins                 int
	closed                bool

	// Launch arguments (8 bytes each) and the pointers Launch passes.
	gArgs [7]uint64
	sArgs [6]uint64
	mArgs [4]uint64
	gp    [7]unsafe.Pointer
	sp    [6]unsafe.Pointer
	mp    [4]unsafe.Pointer
}

// NewOLSFIR loads cuFFT (cudrv.LoadCuFFT) and the overlap-save kernels
// into the current CUDA context and prepares the filter's spectrum and
// plans for taps (1 to OLSMaxTaps, finite).
func NewOLSFIR(taps []float32, complex bool, o OLSOptions) (f *OLSFIR, err error) {
	n, err := checkOLS(taps, o.FFTSize)
	if err != nil {
		return nil, err
	}
	if o.ChunkValues < 0 || o.MaxSamples < 0 {
		return nil, fmt.Errorf("gpu: overlap-save: chunk %d and max samples %d must be >= 0", o.ChunkValues, o.MaxSamples)
	}
	if o.Fused {
		return newFusedOLS(taps, complex, n, o)
	}
	lib, err := cudrv.LoadCuFFT()
	if err != nil {
		return nil, fmt.Errorf("gpu: method fft: %w", err)
	}
	ch := 1
	if complex {
		ch = 2
	}
	f = &OLSFIR{lib: lib, ntaps: len(taps), ch: ch, n: n, l: n - len(taps) + 1}
	f.nseg = olsSegments(o.ChunkValues, ch, n, f.l, o.MaxSamples, o.Strided)
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	if f.mod, err = cudrv.LoadModule(o.PTXPath, kernels.OLSPTX, "overlap-save"); err != nil {
		return nil, err
	}
	gname, sname := "ols_gather_r", "ols_scatter_r"
	if complex {
		gname, sname = "ols_gather_c", "ols_scatter_c"
	}
	for _, k := range []struct {
		fn   *cudrv.Function
		name string
	}{{&f.gather, gname}, {&f.mul, "ols_mul"}, {&f.scatter, sname}} {
		if *k.fn, err = f.mod.Function(k.name); err != nil {
			return nil, fmt.Errorf("gpu: kernel %s: %w", k.name, err)
		}
	}

	// In-place transforms: a real segment is padded to n+2 floats, the
	// size of its half spectrum; a complex one is n float2s.
	if complex {
		f.nbins, f.stride = n, 2*n
		if f.fwd, err = lib.NewFFTPlan(n, n, n, cudrv.FFTC2C, f.nseg); err != nil {
			return nil, fmt.Errorf("gpu: %w", err)
		}
		f.inv = f.fwd
	} else {
		f.nbins, f.stride = n/2+1, n+2
		if f.fwd, err = lib.NewFFTPlan(n, n+2, n/2+1, cudrv.FFTR2C, f.nseg); err != nil {
			return nil, fmt.Errorf("gpu: %w", err)
		}
		if f.inv, err = lib.NewFFTPlan(n, n/2+1, n+2, cudrv.FFTC2R, f.nseg); err != nil {
			return nil, fmt.Errorf("gpu: %w", err)
		}
	}
	if o.Strided {
		// Out of place from the input (segments L apart) into the work
		// layout the in-place plans use.
		kind, odist := cudrv.FFTR2C, n/2+1
		if complex {
			kind, odist = cudrv.FFTC2C, n
		}
		if f.direct, err = lib.NewFFTPlan(n, f.l, odist, kind, f.nseg); err != nil {
			return nil, fmt.Errorf("gpu: strided plan: %w", err)
		}
	}
	h := olsSpectrum(taps, n, complex)
	hb := int64(len(h)) * 8
	if f.dh, err = cudrv.MemAlloc(hb); err != nil {
		return nil, fmt.Errorf("gpu: allocate the filter spectrum (%d bytes): %w", hb, err)
	}
	if err = cudrv.MemcpyHtoD(f.dh, unsafe.Pointer(&h[0]), hb); err != nil {
		return nil, fmt.Errorf("gpu: copy the filter spectrum: %w", err)
	}
	wb := int64(f.nseg) * int64(f.stride) * 4
	if f.dwork, err = cudrv.MemAlloc(wb); err != nil {
		return nil, fmt.Errorf("gpu: allocate overlap-save work (%d MiB): %w", wb>>20, err)
	}
	if err = cudrv.SyncUploads("overlap-save spectrum"); err != nil {
		return nil, err
	}
	for i := range f.gp {
		f.gp[i] = unsafe.Pointer(&f.gArgs[i])
	}
	for i := range f.sp {
		f.sp[i] = unsafe.Pointer(&f.sArgs[i])
	}
	for i := range f.mp {
		f.mp[i] = unsafe.Pointer(&f.mArgs[i])
	}
	return f, nil
}

// NTaps returns the number of taps.
func (f *OLSFIR) NTaps() int { return f.ntaps }

// Channels returns the values per sample: 1 for real data, 2 for I/Q.
func (f *OLSFIR) Channels() int { return f.ch }

// HistoryValues is the number of float32 values that must precede the new
// samples in Launch's input: (ntaps−1)·Channels, as for BatchFIR.
func (f *OLSFIR) HistoryValues() int { return (f.ntaps - 1) * f.ch }

// FFTSize is the transform size in points.
func (f *OLSFIR) FFTSize() int { return f.n }

// Strided reports whether full passes read their segments straight from
// the input (OLSOptions.Strided).
func (f *OLSFIR) Strided() bool { return f.direct != nil }

// SegmentsPerPass is the batch of each pair of transforms.
func (f *OLSFIR) SegmentsPerPass() int { return f.nseg }

// Library is the cuFFT library in use.
func (f *OLSFIR) Library() *cudrv.CuFFT { return f.lib }

// olsThreads is the block size of the gather, product and scatter kernels.
const olsThreads = 256

func olsGrid(work int64) int { return int(min((work+olsThreads-1)/olsThreads, 1<<16)) }

// Launch enqueues the filter of nout samples on stream, with BatchFIR's
// layout: in points at HistoryValues() values of history followed by
// nout·Channels() new values; out receives nout·Channels() values and must
// not overlap in. nout 0 does nothing.
func (f *OLSFIR) Launch(stream cudrv.Stream, in, out cudrv.DevicePtr, nout int) error {
	switch {
	case f.closed:
		return errors.New("gpu: overlap-save: launch after Close")
	case nout < 0:
		return fmt.Errorf("gpu: overlap-save: nout %d < 0", nout)
	case nout == 0:
		return nil
	case in == 0 || out == 0:
		return errors.New("gpu: overlap-save: nil device pointer")
	}
	if f.isFused {
		return f.launchFused(stream, in, out, nout)
	}
	if err := f.fwd.SetStream(stream); err != nil {
		return fmt.Errorf("gpu: overlap-save: %w", err)
	}
	if err := f.inv.SetStream(stream); err != nil {
		return fmt.Errorf("gpu: overlap-save: %w", err)
	}
	if f.direct != nil {
		if err := f.direct.SetStream(stream); err != nil {
			return fmt.Errorf("gpu: overlap-save: %w", err)
		}
	}
	m1 := f.ntaps - 1
	chunk := f.nseg * f.l
	vb := cudrv.DevicePtr(4 * f.ch) // bytes per sample
	segPoints := int64(f.nseg) * int64(f.n)
	for c0 := 0; c0 < nout; c0 += chunk {
		cn := min(chunk, nout-c0)
		xin := in + cudrv.DevicePtr(c0)*vb
		if f.direct != nil && olsStridedPass(uintptr(xin), cn, chunk) {
			// A full pass reads at most cn+m1 samples from xin: all data.
			if err := f.direct.Exec(xin, f.dwork, cudrv.FFTForward); err != nil {
				return fmt.Errorf("gpu: overlap-save: %w", err)
			}
		} else {
			f.gArgs = [7]uint64{uint64(xin), uint64(f.dwork), uint64(f.n),
				uint64(f.stride / f.ch), uint64(f.l), uint64(f.nseg), uint64(m1 + cn)}
			if err := f.gather.Launch(olsGrid(segPoints), olsThreads, 0, stream, f.gp[:]); err != nil {
				return fmt.Errorf("gpu: overlap-save gather: %w", err)
			}
			if err := f.fwd.Exec(f.dwork, f.dwork, cudrv.FFTForward); err != nil {
				return fmt.Errorf("gpu: overlap-save: %w", err)
			}
		}
		f.mArgs = [4]uint64{uint64(f.dwork), uint64(f.dh), uint64(f.nbins), uint64(f.nseg)}
		if err := f.mul.Launch(olsGrid(int64(f.nbins)*int64(f.nseg)), olsThreads, 0, stream, f.mp[:]); err != nil {
			return fmt.Errorf("gpu: overlap-save product: %w", err)
		}
		if err := f.inv.Exec(f.dwork, f.dwork, cudrv.FFTInverse); err != nil {
			return fmt.Errorf("gpu: overlap-save: %w", err)
		}
		f.sArgs = [6]uint64{uint64(f.dwork), uint64(out + cudrv.DevicePtr(c0)*vb), uint64(f.stride / f.ch),
			uint64(f.l), uint64(m1), uint64(cn)}
		if err := f.scatter.Launch(olsGrid(int64(cn)), olsThreads, 0, stream, f.sp[:]); err != nil {
			return fmt.Errorf("gpu: overlap-save scatter: %w", err)
		}
	}
	return nil
}

// Close frees the plans, buffers and module. The context must still be
// current; pending launches must have finished. Close is idempotent.
func (f *OLSFIR) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	if f.inv != f.fwd {
		errs = append(errs, f.inv.Destroy())
	}
	errs = append(errs, f.fwd.Destroy(), f.direct.Destroy())
	for _, p := range []*cudrv.DevicePtr{&f.dh, &f.dwork, &f.dtw} {
		if *p != 0 {
			if err := cudrv.MemFree(*p); err != nil {
				errs = append(errs, fmt.Errorf("gpu: overlap-save: free: %w", err))
			}
			*p = 0
		}
	}
	if f.mod != (cudrv.Module{}) {
		if err := f.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: unload overlap-save module: %w", err))
		}
		f.mod = cudrv.Module{}
	}
	return errors.Join(errs...)
}

// Fused reports whether the fused kernel runs (OLSOptions.Fused).
func (f *OLSFIR) Fused() bool { return f.isFused }

// LibraryPath names the transform code in use: cuFFT's file, "fused" or
// "fused-r4".
func (f *OLSFIR) LibraryPath() string {
	switch {
	case f.lib != nil:
		return f.lib.Path
	case f.r4:
		return "fused-r4"
	}
	return "fused"
}

// olsFusedThreads is the fused kernel's block size.
const olsFusedThreads = 256

// newFusedOLS prepares the fused kernel (OLSOptions.Fused) for an n-point
// transform.
func newFusedOLS(taps []float32, complex bool, n int, o OLSOptions) (f *OLSFIR, err error) {
	if n > OLSFusedMaxFFT || n < 2 {
		return nil, fmt.Errorf("gpu: overlap-save: the fused kernel takes transforms of 2 to %d points, %d taps want %d (leave fused off to use cuFFT)",
			OLSFusedMaxFFT, len(taps), n)
	}
	ch := 1
	name := "ols_fused_r"
	if complex {
		ch, name = 2, "ols_fused_c"
	}
	f = &OLSFIR{ntaps: len(taps), ch: ch, n: n, l: n - len(taps) + 1, isFused: true, nseg: 1, r4: o.Radix4}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	dev, err := cudrv.CurrentDevice()
	if err != nil {
		return nil, fmt.Errorf("gpu: overlap-save needs a current CUDA context: %w", err)
	}
	optin, err := cudrv.OptinSharedMem(dev)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	smem := 12 * n
	if smem > optin {
		return nil, fmt.Errorf("gpu: overlap-save: the fused kernel needs %d KiB of shared memory for %d points, the device allows %d KiB",
			smem>>10, n, optin>>10)
	}
	if f.mod, err = cudrv.LoadModule(o.PTXPath, kernels.OLSPTX, "overlap-save"); err != nil {
		return nil, err
	}
	if f.fused, err = f.mod.Function(name); err != nil {
		return nil, fmt.Errorf("gpu: kernel %s: %w", name, err)
	}
	if smem > 48<<10 {
		if err = f.fused.SetMaxDynamicSmem(smem); err != nil {
			return nil, fmt.Errorf("gpu: %w", err)
		}
	}
	hperm, tw := olsFusedTables(taps, n)
	for _, t := range []struct {
		p *cudrv.DevicePtr
		v []complex64
	}{{&f.dh, hperm}, {&f.dtw, tw}} {
		nb := int64(len(t.v)) * 8
		if *t.p, err = cudrv.MemAlloc(nb); err != nil {
			return nil, fmt.Errorf("gpu: allocate %d bytes for the fused kernel's tables: %w", nb, err)
		}
		if err = cudrv.MemcpyHtoD(*t.p, unsafe.Pointer(&t.v[0]), nb); err != nil {
			return nil, fmt.Errorf("gpu: copy the fused kernel's tables: %w", err)
		}
	}
	if err = cudrv.SyncUploads("fused overlap-save tables"); err != nil {
		return nil, err
	}
	for i := range f.fp {
		f.fp[i] = unsafe.Pointer(&f.fArgs[i])
	}
	return f, nil
}

// launchFused enqueues one fused kernel over all nout samples.
func (f *OLSFIR) launchFused(stream cudrv.Stream, in, out cudrv.DevicePtr, nout int) error {
	nseg := (int64(nout) + int64(f.l) - 1) / int64(f.l)
	blocks := nseg
	if f.ch == 1 {
		blocks = (nseg + 1) / 2
	}
	if blocks > maxGridX {
		return fmt.Errorf("gpu: overlap-save: %d samples need %d blocks, more than the grid limit %d", nout, blocks, maxGridX)
	}
	r4 := uint64(0)
	if f.r4 {
		r4 = 1
	}
	f.fArgs = [10]uint64{uint64(in), uint64(out), uint64(f.dh), uint64(f.dtw), uint64(f.n),
		uint64(bitsLen(f.n) - 1), uint64(f.l), uint64(f.ntaps - 1), uint64(nout), r4}
	threads := min(olsFusedThreads, max(32, f.n/2))
	if err := f.fused.Launch(int(blocks), threads, 12*f.n, stream, f.fp[:]); err != nil {
		return fmt.Errorf("gpu: launch fused overlap-save (%d points, %d blocks): %w", f.n, blocks, err)
	}
	return nil
}
