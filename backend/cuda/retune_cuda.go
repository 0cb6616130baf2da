//go:build cuda

package cuda

import (
	"fmt"

	"github.com/sigproc/sigproc/stage"
)

// retuneTaps hands a plain fir's new taps to the running transport (see
// chainBackend.Retune): it returns the input sample (frame) from which
// they filter, the first of the first block not yet handed to the device.
func (b *backend) retuneTaps(taps []float32) (int64, error) {
	r := b.live.Load()
	if r == nil {
		return 0, fmt.Errorf("%w: the cuda backend is not running (retune once the run has started)", stage.ErrRetuneUnsupported)
	}
	return r.tr.retune(taps)
}

// retuneStages hands a chain's changes to the running transport (see
// chainBackend.Retune) and returns the chain input frame from which they
// apply (either transport's retuneStages).
func (b *backend) retuneStages(c stage.Chain, changes []stage.Retune) (int64, error) {
	r := b.live.Load()
	if r == nil {
		return 0, fmt.Errorf("%w: the cuda backend is not running (retune once the run has started)", stage.ErrRetuneUnsupported)
	}
	x, ok := r.tr.(stageRetuner)
	if !ok {
		return 0, ErrRetune
	}
	return x.retuneStages(c, changes)
}

// retuneRefusal is nil where the running transport, or before Start the
// configured one, retunes a plain fir (transportRetuneRefusal).
func (b *backend) retuneRefusal() error {
	t := b.opts.Transport
	if r := b.live.Load(); r != nil {
		t = r.kind
	}
	return transportRetuneRefusal(t, b.opts.Method, len(b.taps))
}
