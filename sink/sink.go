package sink

import (
	"errors"
	"fmt"
)

// Sink consumes samples.
type Sink interface {
	// Write consumes float32 values, interleaved I,Q for complex formats.
	Write(samples []float32) error
	// Close flushes buffered data and releases the sink; for SigMF it also
	// writes the .sigmf-meta file.
	Close() error
}

// Counter is implemented by every sink in this package.
type Counter interface {
	// Samples returns the number of samples written so far.
	Samples() uint64
}

// Sentinel errors; match them with errors.Is.
var (
	// ErrClosed means Write or Close was called after Close.
	ErrClosed = errors.New("sink: closed")
	// ErrOddLength means a complex sink was given an odd number of values.
	ErrOddLength = errors.New("sink: odd number of values for a complex format")
	// ErrFormat means an unknown or unsupported sample format.
	ErrFormat = errors.New("sink: unsupported format")
	// ErrExists means an output file already exists and overwriting was
	// not asked for.
	ErrExists = errors.New("sink: output exists")
	// ErrIsInput means an output path resolves to a file the run reads.
	ErrIsInput = errors.New("sink: output is an input")
)

// Null discards samples and counts them. It does not know whether the
// stream is complex, so Samples counts float32 values.
type Null struct {
	n      uint64
	closed bool
}

// NewNull returns a sink that only counts (a *Null).
func NewNull() Sink { return &Null{} }

// Write counts the values.
func (s *Null) Write(samples []float32) error {
	if s.closed {
		return ErrClosed
	}
	s.n += uint64(len(samples))
	return nil
}

// Close marks the sink closed.
func (s *Null) Close() error {
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	return nil
}

// Samples returns the number of float32 values written.
func (s *Null) Samples() uint64 { return s.n }

// format is an output sample layout.
type format struct {
	name    string
	complex bool
	float   bool // float32, else int16
}

// channels is the number of float32 values per sample.
func (f format) channels() int {
	if f.complex {
		return 2
	}
	return 1
}

func (f format) size() int {
	if f.float {
		return 4
	}
	return 2
}

// supportedFormats is listed in error messages.
const supportedFormats = "rf32_le, cf32_le, ri16_le, ci16_le"

func lookupFormat(name string) (format, error) {
	switch name {
	case "rf32_le":
		return format{name: name, float: true}, nil
	case "cf32_le":
		return format{name: name, complex: true, float: true}, nil
	case "ri16_le":
		return format{name: name}, nil
	case "ci16_le":
		return format{name: name, complex: true}, nil
	}
	return format{}, fmt.Errorf("%w %q (supported: %s)", ErrFormat, name, supportedFormats)
}
