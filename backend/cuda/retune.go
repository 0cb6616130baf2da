package cuda

import (
	"fmt"

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
	chain stage.Chain
}

// Chain returns the chain the backend runs.
func (b *chainBackend) Chain() stage.Chain { return b.chain }

// Retune refuses every retune with ErrRetune, after the same checks as
// any backend (a structural change is reported as such).
func (b *chainBackend) Retune(changes ...stage.Retune) ([]stage.Retune, error) {
	c := b.chain
	for _, r := range changes {
		s, err := stage.CheckRetune(c, r.Index, r.Stage)
		if err != nil {
			return nil, err
		}
		c = c.With(r.Index, s)
	}
	return nil, ErrRetune
}

// RetuneRefusal is the standing refusal the control page shows before
// anyone tries: ErrRetune.
func (b *chainBackend) RetuneRefusal() error { return ErrRetune }

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
