//go:build cuda

package cuda

import (
	"fmt"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

// retuneTaps hands a plain fir's new taps to the running transport (see
// chainBackend.Retune): it returns the input sample (frame) from which
// they filter, the first of the first block not yet handed to the device.
func (b *backend) retuneTaps(taps []float32) (int64, error) {
	t := b.live.Load()
	if t == nil {
		return 0, fmt.Errorf("%w: the cuda backend is not running (retune once the run has started)", stage.ErrRetuneUnsupported)
	}
	switch *t {
	case TransportExplicit, TransportExplicitPageable:
		return b.retuneExplicit(taps)
	case TransportZeroCopy:
		return b.retuneZeroCopy(taps)
	}
	return 0, ErrRetune
}

// retuneRefusal is nil where the running transport, or before Start the
// configured one, retunes a plain fir. With transport auto before Start
// the transport depends on the block size: the stricter answer.
func (b *backend) retuneRefusal() error {
	t := b.opts.Transport
	if p := b.live.Load(); p != nil {
		t = *p
	}
	switch t {
	case TransportExplicit, TransportExplicitPageable:
		if ResolveMethod(b.opts.Method, len(b.taps)) == filter.MethodFFT {
			return errOLSRetune
		}
		return nil
	case TransportZeroCopy:
		return b.zeroCopyRetuneRefusal()
	}
	return b.zeroCopyRetuneRefusal()
}

// errOLSRetune is why a plain fir on overlap-save does not retune: only
// the direct batch kernel takes new taps while running.
var errOLSRetune = fmt.Errorf("%w: the explicit transport retunes the direct kernel only, and this fir runs overlap-save (method: fft, or auto beyond %d taps); use method: direct to retune", stage.ErrRetuneUnsupported, BatchMaxTaps)
