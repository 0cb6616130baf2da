package cuda

import (
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrStages is returned by NewChainBackend for a chain the GPU kernels do
// not run yet: anything but a single fir stage without decimation.
var ErrStages = errors.New("stages are not yet supported on cuda")

// ErrChannels is wrapped by the error Start returns for a stream of more
// than one channel on the zero-copy transport, which does not yet take the
// channels as a batch (the explicit transport does).
var ErrChannels = errors.New("N channels are not yet supported on cuda")

// NewChainBackend returns the CUDA backend for the stage chain c. Until the
// kernels run shift, decimation and resampling, only the plain FIR chain
// (a filter: section) is accepted; any other fails with ErrStages. A
// stream of N channels runs on the explicit transport (transport: auto
// picks it), the channels a batch dimension of its kernel. The backend is
// a pipeline.Retuner: the explicit transport retunes a plain fir, others
// refuse with ErrRetune.
func NewChainBackend(c stage.Chain, opts Options) (pipeline.Backend, error) {
	taps, ok := c.PlainFIR()
	if !ok {
		return nil, fmt.Errorf("%w (the chain is %s; use backend: cpu)", ErrStages, c)
	}
	be, err := NewBackend(taps, c.Complex, opts)
	if err != nil {
		return nil, err
	}
	return &chainBackend{Backend: be, chain: c}, nil
}
