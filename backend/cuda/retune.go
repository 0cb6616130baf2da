package cuda

import (
	"context"
	"fmt"
	"runtime/trace"
	"slices"
	"sync"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrRetune is what a cuda backend answers a retune with where its kernels
// do not yet take new stage parameters at a block boundary: both
// transports retune a plain fir and a chain's shift, fir and channelize
// stages; a resample does not retune yet.
// The control API turns it into a 409 refusal; the run goes on.
var ErrRetune = fmt.Errorf("%w: retuning is not yet supported on cuda for this chain (both transports retune a plain fir and a chain's shift, fir and channelize stages; use backend: cpu to retune a resample while running)", stage.ErrRetuneUnsupported)

// transportRetuneRefusal is the standing refusal of transport t for a
// plain fir of ntaps taps with method m: the explicit transports retune
// the direct batch kernel only, not overlap-save; the zero-copy kernel
// takes new taps (up to the history it keeps). With transport auto
// (before Start resolves it) the answer is zero-copy's.
func transportRetuneRefusal(t Transport, m filter.Method, ntaps int) error {
	if (t == TransportExplicit || t == TransportExplicitPageable) && ResolveMethod(m, ntaps) == filter.MethodFFT {
		return errOLSRetune
	}
	return nil
}

// errOLSRetune is why a plain fir on overlap-save does not retune: only
// the direct batch kernel takes new taps while running.
var errOLSRetune = fmt.Errorf("%w: the explicit transport retunes the direct kernel only, and this fir runs overlap-save (method: fft, or auto beyond %d taps); use method: direct to retune", stage.ErrRetuneUnsupported, BatchMaxTaps)

// tapRetuner is the transport's side of a plain fir's retune (the cuda
// build's backend): retuneTaps schedules taps for the first block not yet
// handed to the device and returns that block's first input sample;
// retuneRefusal is nil where the running (or configured) transport can.
type tapRetuner interface {
	retuneTaps(taps []float32) (at int64, err error)
	retuneRefusal() error
}

// stageRetuner is the transport's side of a chain's retune (the cuda
// build's backend): retuneStages schedules the checked changes, which
// turn the running chain into c, for the first block not yet handed to
// the device and returns that block's first chain input sample.
type stageRetuner interface {
	retuneStages(c stage.Chain, changes []stage.Retune) (at int64, err error)
}

// chainBackend is what NewChainBackend returns: the transport's backend
// plus the pipeline.Retuner face of the chain it runs. It forwards the
// optional methods of the backend inside, so wrapping hides nothing.
//
// What a GPU retune does (see package stage for the semantics, and
// backend/cpu for the reference implementation): take []stage.Retune
// {Index, Stage} as plain data from Retune on any goroutine, all or none;
// report At and ChainAt (the first input sample of the first block not yet
// handed to the device, counted as the consumer counts blocks); and from
// that block on filter with the new taps over the same input history
// (tap-count changes included, so keep enough history) or shift with a
// continuous phase, without relaunching the kernel or draining the ring.
type chainBackend struct {
	pipeline.Backend
	mu    sync.Mutex // orders Retune calls; guards chain
	chain stage.Chain
}

// Chain returns the chain the backend runs, retunes accepted so far
// included.
func (b *chainBackend) Chain() stage.Chain {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chain
}

// Retune checks the changes as any backend does (a structural change is
// reported as such) and hands them to the transport, which applies them
// from the first block it has not yet handed to the device: all the
// changes land there, at one chain input sample (for a plain fir, the
// last one's taps in force). A plain fir retunes on both transports, and
// a chain's shift, fir and channelize stages (ChainFilter.Retune on the
// explicit one, zeroCopy.retuneStages on the zero-copy one); the rest is
// refused with ErrRetune.
func (b *chainBackend) Retune(changes ...stage.Retune) ([]stage.Retune, error) {
	// Regions of a Go execution trace (probe or run --trace), no-ops
	// otherwise: where a retune's time goes, off-CPU waits included.
	defer trace.StartRegion(context.Background(), "retune").End()
	b.mu.Lock()
	defer b.mu.Unlock()
	c, out, err := checkRetunes(b.chain, changes)
	if err != nil {
		return nil, err
	}
	// The transport's side: a plain fir's final taps, or a chain's changes.
	var hand func() (int64, error)
	if taps, plain := c.PlainFIR(); plain {
		if rt, ok := b.Backend.(tapRetuner); ok {
			hand = func() (int64, error) { return rt.retuneTaps(taps) }
		}
	} else if rs, ok := b.Backend.(stageRetuner); ok {
		hand = func() (int64, error) { return rs.retuneStages(c, out) }
	}
	if hand == nil {
		return nil, ErrRetune
	}
	if len(changes) == 0 {
		return out, nil
	}
	at, err := hand()
	if err != nil {
		return nil, err
	}
	b.chain = c
	for i := range out {
		out[i].At, out[i].ChainAt = c.InputAt(out[i].Index, at), at
	}
	return out, nil
}

// checkRetunes checks changes against c as any backend does and returns
// the chain they make and the changes as the transport keeps them (taps
// copied, not the caller's slices).
func checkRetunes(c stage.Chain, changes []stage.Retune) (stage.Chain, []stage.Retune, error) {
	defer trace.StartRegion(context.Background(), "retune: check").End()
	out := make([]stage.Retune, len(changes))
	for i, r := range changes {
		s, err := stage.CheckRetune(c, r.Index, r.Stage)
		if err != nil {
			return c, nil, err
		}
		s.Taps = slices.Clone(s.Taps)
		c = c.With(r.Index, s)
		out[i] = stage.Retune{Index: r.Index, Stage: s}
	}
	return c, out, nil
}

// RetuneRefusal is the standing refusal the control page shows before
// anyone tries: nil where the transport retunes this chain, else
// ErrRetune (or why not).
func (b *chainBackend) RetuneRefusal() error {
	b.mu.Lock()
	c := b.chain
	b.mu.Unlock()
	if _, plain := c.PlainFIR(); !plain {
		if _, ok := b.Backend.(stageRetuner); ok && slices.ContainsFunc(c.Stages, resumes) {
			return nil
		}
		return ErrRetune
	}
	rt, ok := b.Backend.(tapRetuner)
	if !ok {
		return ErrRetune
	}
	return rt.retuneRefusal()
}

// UseRegion forwards pipeline.RegionBackend.
func (b *chainBackend) UseRegion(region []byte, encoding string) (bool, error) {
	if rb, ok := b.Backend.(pipeline.RegionBackend); ok {
		return rb.UseRegion(region, encoding)
	}
	return false, nil
}

// InPlace forwards pipeline.RegionSharer.
func (b *chainBackend) InPlace(off, n int64) bool {
	if rs, ok := b.Backend.(pipeline.RegionSharer); ok {
		return rs.InPlace(off, n)
	}
	return true
}

// DeviceBusy forwards pipeline.DeviceTimer.
func (b *chainBackend) DeviceBusy() (pipeline.DeviceBusy, bool) {
	if t, ok := b.Backend.(pipeline.DeviceTimer); ok {
		return t.DeviceBusy()
	}
	return pipeline.DeviceBusy{}, false
}

// Preflight forwards the backend's check before the run (see
// backend.Preflight in cuda.go).
func (b *chainBackend) Preflight(l pipeline.Layout) error {
	if p, ok := b.Backend.(interface{ Preflight(pipeline.Layout) error }); ok {
		return p.Preflight(l)
	}
	return nil
}

// LiveSlotCeiling forwards the backend's bound on a live source's
// default ring (backend.LiveSlotCeiling in cuda.go).
func (b *chainBackend) LiveSlotCeiling(l pipeline.Layout) int {
	if c, ok := b.Backend.(interface{ LiveSlotCeiling(pipeline.Layout) int }); ok {
		return c.LiveSlotCeiling(l)
	}
	return 0
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
