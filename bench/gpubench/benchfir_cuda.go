//go:build cuda

package gpubench

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
)

// BenchFIR times BatchFIR on cfg.Input for each tap set of cfg.Taps on one
// device: the input is copied to the device once per tap set behind a
// zero history, and each timed pass is one Launch over all of it, timed
// with CUDA events after cfg.Warmup untimed passes. It locks the calling
// goroutine's OS thread and creates (and destroys) its own context.
func BenchFIR(ctx context.Context, cfg BenchFIRConfig) (res BenchFIRResult, err error) {
	if err := cfg.validate(); err != nil {
		return BenchFIRResult{}, err
	}
	ch := cfg.lanes()
	nvals := len(cfg.Input)
	nout := nvals / ch
	maxTaps := 0
	for _, t := range cfg.Taps {
		maxTaps = max(maxTaps, len(t))
	}

	cuctx, err := cudrv.NewContext(cfg.Device, cudrv.SchedBlockingSync)
	if err != nil {
		return BenchFIRResult{}, err
	}
	var frees []cudrv.DevicePtr
	defer func() {
		for _, p := range frees {
			if e := cudrv.MemFree(p); e != nil && err == nil {
				err = fmt.Errorf("gpu: free device memory: %w", e)
			}
		}
		if e := cuctx.Close(); e != nil && err == nil {
			err = e
		}
	}()
	dev := cuctx.Dev
	res.Device = cuctx.Info
	if res.MemClockKHz, res.MemBusWidthBits, res.PeakBytesPerSec, err = cudrv.MemoryPeak(dev); err != nil {
		return BenchFIRResult{}, err
	}
	if res.SMs, err = dev.Attribute(cudrv.MultiprocessorCount); err != nil {
		return BenchFIRResult{}, fmt.Errorf("gpu: multiprocessor count: %w", err)
	}
	if res.ClockKHz, err = dev.Attribute(cudrv.ClockRate); err != nil {
		return BenchFIRResult{}, fmt.Errorf("gpu: clock rate: %w", err)
	}

	alloc := func(n int64) (cudrv.DevicePtr, error) {
		p, err := cudrv.MemAlloc(n)
		if err != nil {
			return 0, fmt.Errorf("gpu: allocate %d MiB of device memory: %w", n>>20, err)
		}
		frees = append(frees, p)
		return p, nil
	}
	din, err := alloc(int64((maxTaps-1)*ch+nvals) * 4)
	if err != nil {
		return BenchFIRResult{}, err
	}
	dout, err := alloc(int64(nvals) * 4)
	if err != nil {
		return BenchFIRResult{}, err
	}
	stream, err := cudrv.NewStream()
	if err != nil {
		return BenchFIRResult{}, fmt.Errorf("gpu: create stream: %w", err)
	}
	defer stream.Destroy()
	var host []float32
	if cfg.Output != nil {
		host = make([]float32, nvals)
	}
	for _, taps := range cfg.Taps {
		run, err := benchOne(ctx, cfg, taps, ch, nout, din, dout, stream, host)
		if err != nil {
			return BenchFIRResult{}, err
		}
		res.Runs = append(res.Runs, run)
	}
	return res, nil
}

// benchFilter is what BatchFIR and OLSFIR share.
type benchFilter interface {
	HistoryValues() int
	Launch(cudrv.Stream, cudrv.DevicePtr, cudrv.DevicePtr, int) error
	Close() error
}

// newBenchFilter makes the filter cfg.Method resolves to for taps on ch
// values per frame (overlap-save takes one channel), and
// the run's description.
func newBenchFilter(cfg BenchFIRConfig, taps []float32, ch, nout int) (benchFilter, BenchFIRRun, error) {
	m := cuda.ResolveMethod(cfg.Method, len(taps))
	if m == filter.MethodFFT && ch > 2 && cfg.Method == filter.MethodAuto && len(taps) <= cuda.BatchMaxTaps {
		m = filter.MethodDirect // overlap-save takes one channel; the batch kernel takes the lanes
	}
	run := BenchFIRRun{Taps: len(taps), Method: m.String()}
	if m == filter.MethodFFT {
		if ch > 2 {
			return nil, run, fmt.Errorf("gpu: method fft takes one channel, not %d values per frame", ch)
		}
		// Two real channels are two lanes to overlap-save, as I/Q are.
		f, err := cuda.NewOLSFIR(taps, ch == 2, cuda.OLSOptions{FFTSize: cfg.FFTSize, ChunkValues: cfg.ChunkValues, Strided: cfg.Strided, Fused: cfg.Fused, Radix4: cfg.Radix4})
		if err != nil {
			return nil, run, err
		}
		run.FFTSize, run.Segments, run.CuFFT = f.FFTSize(), f.SegmentsPerPass(), f.LibraryPath()
		return f, run, nil
	}
	f, err := cuda.NewBatchFIRLanes(taps, ch, cfg.PTXPath)
	if err != nil {
		return nil, run, err
	}
	if cfg.Threads > 0 {
		if err := f.SetThreads(cfg.Threads); err != nil {
			f.Close()
			return nil, run, err
		}
	}
	run.Threads, run.Blocks, run.SharedBytes = f.Threads(), f.Blocks(nout), f.SharedBytes()
	return f, run, nil
}

// benchOne times one tap set; the output, if wanted, goes to cfg.Output.
func benchOne(ctx context.Context, cfg BenchFIRConfig, taps []float32, ch, nout int, din, dout cudrv.DevicePtr,
	stream cudrv.Stream, host []float32) (BenchFIRRun, error) {
	f, run, err := newBenchFilter(cfg, taps, ch, nout)
	if err != nil {
		return BenchFIRRun{}, err
	}
	defer f.Close()
	hist := int64(f.HistoryValues())
	nvals := int64(len(cfg.Input))
	// The setup goes on the kernels' stream: the synchronous cuMemsetD32
	// and pageable cuMemcpyHtoD run on the legacy default stream, return
	// before the device has done them, and a non-blocking stream does not
	// wait for them. On the H200 the poisoning memset of a complex 129-tap
	// run landed after the last timed pass, and its output read as NaN.
	if hist > 0 {
		if err := stream.MemsetD32(din, 0, hist); err != nil {
			return BenchFIRRun{}, fmt.Errorf("gpu: clear history: %w", err)
		}
	}
	if err := stream.CopyHtoD(din+cudrv.DevicePtr(hist*4), unsafe.Pointer(&cfg.Input[0]), nvals*4); err != nil {
		return BenchFIRRun{}, fmt.Errorf("gpu: copy input to device: %w", err)
	}
	// NaN everywhere, so an output the kernel never wrote fails the check.
	if err := stream.MemsetD32(dout, 0xffffffff, nvals); err != nil {
		return BenchFIRRun{}, fmt.Errorf("gpu: poison output: %w", err)
	}
	launch := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return f.Launch(stream, din, dout, nout)
	}
	t, err := timePasses(stream, fmt.Sprintf("batch FIR (%d taps)", len(taps)), cfg.Warmup, cfg.Reps, apart, launch)
	if err != nil {
		return BenchFIRRun{}, err
	}
	run.Seconds = t.per
	if cfg.Output != nil {
		if err := stream.CopyDtoH(unsafe.Pointer(&host[0]), dout, nvals*4); err != nil {
			return BenchFIRRun{}, fmt.Errorf("gpu: copy output to host: %w", err)
		}
		if err := stream.Synchronize(); err != nil {
			return BenchFIRRun{}, fmt.Errorf("gpu: copy output to host: %w", err)
		}
		if err := cfg.Output(len(taps), host); err != nil {
			return BenchFIRRun{}, err
		}
	}
	return run, nil
}
