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

// ErrChannels is returned for a stream of more than one channel on a
// transport that does not take the channels as a batch (see
// transportChannels): by NewChainBackend for a configured transport, by
// Start for the one auto chose.
var ErrChannels = errors.New("N channels are not yet supported on cuda")

// NewChainBackend returns the CUDA backend for the stage chain c. Until the
// kernels run shift, decimation and resampling, only the plain FIR chain
// (a filter: section) is accepted; any other fails with ErrStages, and a
// stream of more than one channel on a transport that cannot batch them
// with ErrChannels. The backend is a
// pipeline.Retuner that refuses retunes with ErrRetune.
func NewChainBackend(c stage.Chain, opts Options) (pipeline.Backend, error) {
	if n := c.ChannelCount(); n > 1 && opts.Transport != "" && opts.Transport != TransportAuto && !transportChannels(opts.Transport) {
		return nil, fmt.Errorf("%w on transport %q (the stream has %d channels; use transport: zero-copy or backend: cpu)", ErrChannels, opts.Transport, n)
	}
	taps, ok := c.PlainFIR()
	if !ok {
		return nil, fmt.Errorf("%w (the chain is %s; use backend: cpu)", ErrStages, c)
	}
	be, err := NewBackend(taps, c.Complex, opts)
	if err != nil {
		return nil, err
	}
	if s, ok := be.(interface{ setLanes(int) }); ok {
		s.setLanes(pipeline.FrameValues(c.ChannelCount(), c.Complex))
	}
	return &chainBackend{Backend: be, chain: c}, nil
}

// transportChannels reports whether transport t filters frames of more
// than one channel (values per frame beyond one real or complex channel),
// the channels as a batch dimension of one kernel.
func transportChannels(t Transport) bool { return t == TransportZeroCopy }
