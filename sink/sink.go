package sink

import (
	"errors"
	"fmt"
)

// MaxChannels bounds the channels of a stream a sink writes: a
// channelizer's output (filter.MaxBankChannels), as many as a source
// reads (capture.MaxChannels).
const MaxChannels = 4096

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

// Raw output formats (Spec.Format): SigMF datatypes, cs8 as HackRF calls
// it (SigMF ci8).
const (
	FormatRF32 = "rf32_le"
	FormatCF32 = "cf32_le"
	FormatRI16 = "ri16_le"
	FormatCI16 = "ci16_le"
	FormatCS8  = "cs8" // complex int8 I,Q (HackRF): scaled by 128, clipped
)

// WAV sample formats (Spec.Format for TypeWAV).
const (
	WAVPCM16   = "pcm16"
	WAVPCM24   = "pcm24"
	WAVFloat32 = "float32"
)

// encoding is how one value is stored.
type encoding uint8

const (
	encF32 encoding = iota
	encI16
	encI24
	encI8
)

// format is an output sample layout: frames of channels channels, each
// real or complex.
type format struct {
	name     string
	complex  bool
	float    bool // float32: no clipping
	enc      encoding
	channels int // stream channels per frame, >= 1
}

// frameValues is the number of float32 values per frame.
func (f format) frameValues() int {
	if f.complex {
		return 2 * f.channels
	}
	return f.channels
}

// checkFrames refuses n values that are not whole frames.
func (f format) checkFrames(n int) error {
	fv := f.frameValues()
	switch {
	case n%fv == 0:
		return nil
	case f.channels == 1:
		return fmt.Errorf("%w: %s got %d values", ErrOddLength, f.name, n)
	}
	return fmt.Errorf("%w: %d values are not whole %d-value frames of %d %s channels", ErrOddLength, n, fv, f.channels, f.name)
}

// size is the bytes of one value.
func (f format) size() int {
	switch f.enc {
	case encI16:
		return 2
	case encI24:
		return 3
	case encI8:
		return 1
	}
	return 4
}

// supportedFormats is listed in error messages.
const supportedFormats = "rf32_le, cf32_le, ri16_le, ci16_le, cs8"

// lookupFormat resolves a raw format name for one channel.
func lookupFormat(name string) (format, error) {
	switch name {
	case FormatRF32:
		return format{name: name, float: true, enc: encF32, channels: 1}, nil
	case FormatCF32:
		return format{name: name, complex: true, float: true, enc: encF32, channels: 1}, nil
	case FormatRI16:
		return format{name: name, enc: encI16, channels: 1}, nil
	case FormatCI16:
		return format{name: name, complex: true, enc: encI16, channels: 1}, nil
	case FormatCS8:
		return format{name: name, complex: true, enc: encI8, channels: 1}, nil
	}
	return format{}, fmt.Errorf("%w %q (supported: %s)", ErrFormat, name, supportedFormats)
}

// lookupWAVFormat resolves a WAV format for a stream of channels channels,
// complex or not: each complex channel is two WAV channels (I, Q).
func lookupWAVFormat(name string, complex bool, channels int) (format, error) {
	f := format{name: name, complex: complex, channels: max(1, channels)}
	switch name {
	case WAVPCM16:
		f.enc = encI16
	case WAVPCM24:
		f.enc = encI24
	case WAVFloat32:
		f.enc, f.float = encF32, true
	default:
		return format{}, fmt.Errorf("%w %q for wav (supported: %s, %s, %s)", ErrFormat, name, WAVPCM16, WAVPCM24, WAVFloat32)
	}
	return f, nil
}

// SigMFDatatype returns the SigMF core:datatype of a raw format: cs8 is
// SigMF's ci8; the others are spelt the same.
func SigMFDatatype(format string) string {
	if format == FormatCS8 {
		return "ci8"
	}
	return format
}
