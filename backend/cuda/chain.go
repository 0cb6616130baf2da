package cuda

import (
	"errors"
	"fmt"
	"github.com/sigproc/sigproc/filter"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// ErrStages is returned by NewChainBackend for a chain of stages on a
// transport that does not run them yet: the zero-copy transport runs
// shift, fir and resample stages, not a channelize or select.
var ErrStages = errors.New("these stages are not yet supported on the cuda zero-copy transport")

// ErrKind is returned by CheckChain for a chain with a stage kind that
// has no GPU kernel (kinds.go registers them).
var ErrKind = errors.New("stage kind not supported on cuda")

// ErrChannels is returned for a choice of channels the CUDA backend does
// not make: a select that does not follow a channelize stage (the bank's
// kernel writes the kept channels itself; there is no select kernel).
var ErrChannels = errors.New("this select is not supported on cuda")

// CheckChain reports whether the CUDA backend runs the chain c with the
// given options: a plain FIR on any number of channels, or any valid
// chain of shift, fir (decimating or not), resample and channelize stages
// on any transport (transport auto picks explicit for a chain of stages;
// zero-copy runs them in its persistent kernel, planZCChain), on any
// number of channels, with a select only right after a channelize stage
// (checkBankPlace). A method the kernels
// would not honour fails with ErrMethod (checkMethod), and a stage kind
// without a GPU kernel with ErrKind. It needs no GPU, and SupportTable is
// written from it.
func CheckChain(c stage.Chain, opts Options) error {
	if _, ok := c.PlainFIR(); ok {
		return checkMethod(c, opts)
	}
	if opts.Transport == TransportZeroCopy {
		if err := checkMethod(c, opts); err != nil {
			return err
		}
		_, err := planZCChain(c, 1, 0)
		return err
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

// checkBankPlace refuses the select the kernels do not run: the filter
// bank's kernel writes the channels a select right after it keeps, and no
// other kernel selects.
func checkBankPlace(c stage.Chain) error {
	for i, s := range c.Stages {
		if chainKernels[s.Kind] == kernelSelect && (i == 0 || chainKernels[c.Stages[i-1].Kind] != kernelBank) {
			return fmt.Errorf("%w: stage %d (select) keeps channels of the channelize stage just before it on cuda (the chain is %s); use backend: cpu", ErrChannels, i, c)
		}
	}
	return nil
}

// NewChainBackend returns the CUDA backend for the stage chain c. A plain
// FIR (a filter: section) runs on any transport, as does a chain of
// shift, fir, resample and channelize stages (see CheckChain). The
// backend is a pipeline.Retuner: both transports retune a plain fir and a
// chain's shift, fir and channelize stages; the rest is refused with
// ErrRetune.
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

// resumes reports whether the stage's kind takes new parameters at a
// sample (a shift, a fir, a channelize; not a resample).
func resumes(s stage.Stage) bool {
	_, ok := s.Def().(stage.Resumer)
	return ok
}
