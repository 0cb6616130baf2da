package cuda

import (
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrStages is returned by NewChainBackend for a chain the GPU kernels do
// not run yet: anything but a single fir stage without decimation.
var ErrStages = errors.New("stages are not yet supported on cuda")

// ErrChannels is returned by NewChainBackend for a stream of more than one
// channel: the GPU transports do not yet take the channels as a batch.
var ErrChannels = errors.New("N channels are not yet supported on cuda")

// NewChainBackend returns the CUDA backend for the stage chain c. Until the
// kernels run shift, decimation and resampling, only the plain FIR chain
// (a filter: section) is accepted; any other fails with ErrStages, and a
// stream of more than one channel with ErrChannels. The backend is a
// pipeline.Retuner that refuses retunes with ErrRetune.
func NewChainBackend(c stage.Chain, opts Options) (pipeline.Backend, error) {
	if n := c.ChannelCount(); n > 1 {
		return nil, fmt.Errorf("%w (the stream has %d channels; use backend: cpu)", ErrChannels, n)
	}
	taps, ok := c.PlainFIR()
	if !ok {
		return nil, fmt.Errorf("%w (the chain is %s; use backend: cpu)", ErrStages, c)
	}
	if opts.Method == filter.MethodAuto {
		// The fir stage's method (a config's filter.method) applies unless
		// the options force one.
		m, err := filter.ParseMethod(c.Stages[0].Method)
		if err != nil {
			return nil, fmt.Errorf("gpu: %w", err)
		}
		opts.Method = m
	}
	be, err := NewBackend(taps, c.Complex, opts)
	if err != nil {
		return nil, err
	}
	return &chainBackend{Backend: be, chain: c}, nil
}
