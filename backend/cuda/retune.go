package cuda

import (
	"fmt"
	"sync"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrRetune is what a cuda backend answers a retune with until its kernels
// take new stage parameters at a block boundary. The control API turns it
// into a 409 refusal; the run goes on.
var ErrRetune = fmt.Errorf("%w: retuning is not yet supported on cuda (use backend: cpu to retune while running)", stage.ErrRetuneUnsupported)

// chainBackend is what NewChainBackend returns: the transport's backend
// plus the pipeline.Retuner face of the chain it runs. It forwards the
// optional methods of the backend inside, so wrapping hides nothing.
//
// What a GPU retune must do (see package stage for the semantics, and
// backend/cpu for the reference implementation): take []stage.Retune
// {Index, Stage} as plain data from Retune on any goroutine, all or none;
// report At and ChainAt (the first input sample of the first block not yet
// handed to the device, counted as the consumer counts blocks); and from
// that block on filter with the new taps over the same input history
// (tap-count changes included, so keep enough history) or shift with a
// continuous phase, without relaunching the kernel or draining the ring.
type chainBackend struct {
	pipeline.Backend
	mu    sync.Mutex // orders retunes; guards chain
	chain stage.Chain
}

// zcRetuner is the zero-copy backend's retune (zc_retune_cuda.go): new
// taps from the next block published on, returning that block's first
// frame in the stream.
type zcRetuner interface {
	retuneZeroCopy(taps []float32) (at int64, err error)
	retuneLive() bool // the persistent kernel is running
}

// Chain returns the chain the backend runs, retunes accepted so far
// included.
func (b *chainBackend) Chain() stage.Chain {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chain
}

// Retune checks the changes as any backend does (a structural change is
// reported as such) and applies them on the zero-copy transport, all at
// the same block; other transports refuse with ErrRetune.
func (b *chainBackend) Retune(changes ...stage.Retune) ([]stage.Retune, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chain
	for _, r := range changes {
		s, err := stage.CheckRetune(c, r.Index, r.Stage)
		if err != nil {
			return nil, err
		}
		c = c.With(r.Index, s)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	zr, ok := b.Backend.(zcRetuner)
	if !ok || !zr.retuneLive() {
		return nil, ErrRetune
	}
	taps, _ := c.PlainFIR() // NewChainBackend takes no other chain
	at, err := zr.retuneZeroCopy(taps)
	if err != nil {
		return nil, err
	}
	c.Stages[0].Taps = append([]float32(nil), taps...) // not the caller's slice
	b.chain = c
	out := make([]stage.Retune, len(changes))
	for k, r := range changes {
		out[k] = stage.Retune{Index: r.Index, Stage: c.Stages[r.Index], At: c.InputAt(r.Index, at), ChainAt: at}
	}
	return out, nil
}

// RetuneRefusal is the standing refusal the control page shows before
// anyone tries: none while the zero-copy kernel runs, ErrRetune otherwise.
func (b *chainBackend) RetuneRefusal() error {
	if zr, ok := b.Backend.(zcRetuner); ok && zr.retuneLive() {
		return nil
	}
	return ErrRetune
}

// UseRegion forwards pipeline.RegionBackend.
func (b *chainBackend) UseRegion(region []byte) (bool, error) {
	if rb, ok := b.Backend.(pipeline.RegionBackend); ok {
		return rb.UseRegion(region)
	}
	return false, nil
}

// ComputeTimes forwards the zero-copy kernel's compute times (probe).
func (b *chainBackend) ComputeTimes() []float64 {
	if t, ok := b.Backend.(interface{ ComputeTimes() []float64 }); ok {
		return t.ComputeTimes()
	}
	return nil
}

// Breakdown forwards the per-phase latency samples.
func (b *chainBackend) Breakdown() map[string][]float64 {
	if t, ok := b.Backend.(interface{ Breakdown() map[string][]float64 }); ok {
		return t.Breakdown()
	}
	return nil
}

// Device forwards the device in use.
func (b *chainBackend) Device() cudrv.DeviceInfo {
	if d, ok := b.Backend.(interface{ Device() cudrv.DeviceInfo }); ok {
		return d.Device()
	}
	return cudrv.DeviceInfo{}
}

// Transport forwards the transport in use.
func (b *chainBackend) Transport() Transport {
	if t, ok := b.Backend.(interface{ Transport() Transport }); ok {
		return t.Transport()
	}
	return ""
}
