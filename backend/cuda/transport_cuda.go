//go:build cuda

package cuda

import (
	"context"

	"github.com/sigproc/sigproc/pipeline"
)

// transport moves one run's blocks between the ring and the device and
// filters them: zeroCopy (zerocopy_cuda.go) or explicit (explicit_cuda.go,
// pinned or pageable). Start makes the one the run resolves to, and the
// backend's methods delegate to it; a transport reads the backend's
// configuration and shared state and allocates through it, and the
// backend frees those allocations after close.
type transport interface {
	// start sets the transport up for the stream of l, on the backend's
	// context and thread, and returns the ring the producer fills.
	start(l pipeline.Layout) (*pipeline.Ring, error)
	// next returns the next block's output (pipeline.Backend.Next).
	next(ctx context.Context) (pipeline.Output, error)
	// retune hands a plain fir's new taps to the running transport, on
	// any goroutine, and returns the input frame from which they filter:
	// the first of the first block not yet handed to the device.
	retune(taps []float32) (at int64, err error)
	// close stops the transport's work and frees what it alone holds,
	// whatever start got to. keep reports that the device may still read
	// the transport's memory, which must then be left, with the context,
	// to process exit.
	close() (keep bool, err error)
}

// timedTransport is a transport that measures its latency phases
// (Options.Timing): the zero-copy one.
type timedTransport interface {
	ComputeTimes() []float64
	Breakdown() map[string][]float64
}

// regionTransport is a transport that may copy blocks to the device
// straight from the source's memory (pipeline.RegionBackend): the
// explicit one.
type regionTransport interface {
	useRegion(region []byte, encoding string) (bool, error)
	inPlace(off, n int64) bool
}

// newTransport makes the transport t for b's run; t is resolved (not
// auto).
func newTransport(t Transport, b *backend) transport {
	if t == TransportZeroCopy {
		return &zeroCopy{b: b}
	}
	return &explicit{b: b, pageable: t == TransportExplicitPageable}
}
