package cuda

import (
	"errors"
	"fmt"
	"github.com/sigproc/sigproc/filter"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrStages is returned by NewChainBackend for a chain of stages on a
// transport that does not run them yet: the zero-copy transport runs a
// single plain FIR only.
var ErrStages = errors.New("stages are not yet supported on the cuda zero-copy transport")

// ErrKind is returned by CheckChain for a chain with a stage kind that
// has no GPU kernel (kinds.go registers them).
var ErrKind = errors.New("stage kind not supported on cuda")

// ErrChannels is returned for N channels where the CUDA backend does not
// take them yet: a chain of stages (a plain FIR takes them on both
// transports, as a batch dimension of one kernel).
var ErrChannels = errors.New("N channels are not yet supported on cuda")

// CheckChain reports whether the CUDA backend runs the chain c with the
// given options: a plain FIR on any number of channels, or any valid
// chain of shift, fir (decimating or not), resample and channelize stages
// of one channel on the explicit transports (transport auto picks explicit
// for a chain of stages), a channelize stage last or followed by a select
// alone (checkBankPlace); the zero-copy transport runs only a single plain FIR
// (ErrStages), and a chain of stages on several channels fails with
// ErrChannels. A method the kernels would not honour fails with ErrMethod
// (checkMethod), and a stage kind without a GPU kernel with ErrKind. It
// needs no GPU, and SupportTable is written from it.
func CheckChain(c stage.Chain, opts Options) error {
	if _, ok := c.PlainFIR(); ok {
		return checkMethod(c, opts)
	}
	if n := c.ChannelCount(); n > 1 {
		return fmt.Errorf("%w (a chain of stages on %d channels; use backend: cpu)", ErrChannels, n)
	}
	if opts.Transport == TransportZeroCopy {
		return fmt.Errorf("%w (the chain is %s; use transport: explicit or auto, or backend: cpu)", ErrStages, c)
	}
	if err := checkMethod(c, opts); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	for i, s := range c.Stages {
		if _, ok := chainKernels[s.Kind]; !ok {
			return fmt.Errorf("%w: stage %d (%s) has no GPU kernel; use backend: cpu", ErrKind, i, s.Kind)
		}
	}
	return checkBankPlace(c)
}

// checkBankPlace refuses what the filter bank kernel does not run: stages
// after a channelizer run on each of its channels, and the chain kernels
// take one channel, so a channelize stage must be the last, or be
// followed by a select alone (which its kernel fuses), and a select must
// follow a channelize.
func checkBankPlace(c stage.Chain) error {
	for i, s := range c.Stages {
		k := chainKernels[s.Kind]
		switch {
		case k == kernelSelect && (i == 0 || chainKernels[c.Stages[i-1].Kind] != kernelBank):
			return fmt.Errorf("%w: stage %d (select) keeps channels of the channelize stage just before it on cuda (the chain is %s); use backend: cpu", ErrChannels, i, c)
		case k == kernelBank && i+1 < len(c.Stages) && chainKernels[c.Stages[i+1].Kind] != kernelSelect,
			k == kernelBank && i+2 < len(c.Stages):
			return fmt.Errorf("%w: the stages after a channelizer run on each of its channels, on the cpu backend only; on cuda a channelize stage is the last, or followed by a select alone (the chain is %s)", ErrChannels, c)
		}
	}
	return nil
}

// NewChainBackend returns the CUDA backend for the stage chain c. A plain
// FIR (a filter: section) runs on any transport; a chain of shift, fir and
// resample stages runs on the explicit transport (see CheckChain). The
// backend is a pipeline.Retuner: the explicit transport retunes a plain
// fir, others refuse with ErrRetune.
func NewChainBackend(c stage.Chain, opts Options) (pipeline.Backend, error) {
	if err := CheckChain(c, opts); err != nil {
		return nil, err
	}
	if _, err := ParseTransport(string(opts.Transport)); err != nil {
		return nil, err
	}
	if taps, ok := c.PlainFIR(); ok {
		if opts.Method == filter.MethodAuto {
			// The fir stage's method (a config's filter.method) applies
			// unless the options force one.
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
	be, err := newStages(c, opts)
	if err != nil {
		return nil, err
	}
	return &chainBackend{Backend: be, chain: c}, nil
}
