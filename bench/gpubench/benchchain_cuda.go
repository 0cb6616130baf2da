//go:build cuda

package gpubench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/internal/cudrv"
)

// BenchChain times cuda.ChainFilter on cfg.Samples random samples already
// in device memory: each timed pass is one Launch over all of them (the
// chain's state carries on from pass to pass, as in a stream), timed with
// CUDA events after cfg.Warmup untimed passes. It locks the calling
// goroutine's OS thread and creates (and destroys) its own context.
func BenchChain(ctx context.Context, cfg BenchChainConfig) (res BenchChainResult, err error) {
	if err := cfg.validate(); err != nil {
		return BenchChainResult{}, err
	}
	ch := 1
	if cfg.Chain.Complex {
		ch = 2
	}
	cuctx, err := cudrv.NewContext(cfg.Device, cudrv.SchedBlockingSync)
	if err != nil {
		return BenchChainResult{}, err
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
	res = BenchChainResult{Device: cuctx.Info, Chain: cfg.Chain.String(), Samples: cfg.Samples}
	f, err := cuda.NewChainFilter(cfg.Chain, cfg.Samples, cfg.PTXPath)
	if err != nil {
		return BenchChainResult{}, err
	}
	defer func() {
		if e := f.Close(); e != nil && err == nil {
			err = e
		}
	}()
	if cfg.BankPath != "" {
		if err := f.SetBankSplit(cfg.BankPath == "split"); err != nil {
			return BenchChainResult{}, err
		}
	}
	alloc := func(n int64) (cudrv.DevicePtr, error) {
		p, err := cudrv.MemAlloc(n)
		if err != nil {
			return 0, fmt.Errorf("gpu: allocate %d MiB of device memory: %w", n>>20, err)
		}
		frees = append(frees, p)
		return p, nil
	}
	nvals := cfg.Samples * ch
	outCh := f.FrameValues()
	hist := f.HistoryValues()
	din, err := alloc(int64(hist+nvals) * 4)
	if err != nil {
		return BenchChainResult{}, err
	}
	dout, err := alloc(int64(f.MaxOutValues(nvals)) * 4)
	if err != nil {
		return BenchChainResult{}, err
	}
	// Zero history, then 1 Mi values of noise repeated: the data do not
	// change the speed, and drawing 128 Mi normals would take seconds.
	x := make([]float32, hist+nvals)
	r := rand.New(rand.NewPCG(cfg.Seed, 16))
	noise := make([]float32, 1<<20)
	for i := range noise {
		noise[i] = float32(r.NormFloat64())
	}
	for i := hist; i < len(x); i += len(noise) {
		copy(x[i:], noise)
	}
	stream, err := cudrv.NewStream()
	if err != nil {
		return BenchChainResult{}, fmt.Errorf("gpu: create stream: %w", err)
	}
	defer stream.Destroy()
	// On the kernels' stream: a non-blocking stream does not wait for a
	// pageable cuMemcpyHtoD on the legacy stream (see BenchFIR).
	if err := stream.CopyHtoD(din, unsafe.Pointer(&x[0]), int64(len(x))*4); err != nil {
		return BenchChainResult{}, fmt.Errorf("gpu: copy input to device: %w", err)
	}
	var nout int
	launch := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Launch(stream, din, dout, nvals)
		nout = n
		return err
	}
	t, err := timePasses(stream, "chain", cfg.Warmup, cfg.Reps, apart, launch)
	if err != nil {
		return BenchChainResult{}, err
	}
	res.Seconds, res.OutSamples = t.per, nout/outCh
	return res, nil
}
