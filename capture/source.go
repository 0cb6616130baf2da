package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Info describes a stream: frames of NumChannels channels, each real or
// complex (I,Q), at SampleRate frames per second.
type Info struct {
	// SampleRate is in samples (frames) per second; a complex sample counts once.
	SampleRate float64
	// Complex is true when every channel is interleaved I,Q.
	Complex bool
	// NumChannels is the number of channels in a frame; 0 means 1.
	NumChannels int
}

// MaxChannels bounds the channels of a stream: as many as a channelizer
// writes (filter.MaxBankChannels), so that its recordings read back.
const MaxChannels = 4096

// ChannelCount returns the number of channels in a frame (at least 1).
func (i Info) ChannelCount() int { return max(1, i.NumChannels) }

// Channels returns the number of float32 values per frame: the channel
// count, times 2 for a complex stream. A one-channel stream has 1 value
// per sample when real and 2 (I,Q) when complex.
func (i Info) Channels() int {
	if i.Complex {
		return 2 * i.ChannelCount()
	}
	return i.ChannelCount()
}

// Source reads blocks of samples into a buffer the caller gives, like io.Reader.
type Source interface {
	// Read fills dst (float32 values: whole frames, the channels of each
	// frame in order, complex ones as I,Q) completely unless the input
	// ends or fails. It returns the number of float32 values written,
	// always a multiple of Info().Channels().
	//
	// At end of input it returns n < len(dst) (possibly 0) together with
	// io.EOF. Any other error may also come with n > 0 valid values, which
	// the caller should use before handling the error. ctx cancellation
	// returns ctx.Err(). len(dst) must be a multiple of Info().Channels().
	Read(ctx context.Context, dst []float32) (int, error)
	// Info describes the stream.
	Info() Info
	// Close releases the source; Read afterwards returns ErrClosed.
	Close() error
}

// Sentinel errors of the package; match them with errors.Is.
var (
	// ErrTruncated means the input ended inside a sample (or before the
	// length its header declared). The whole samples before it are returned
	// first; the wrapping error says how many bytes were left over.
	ErrTruncated = errors.New("capture: truncated input")
	// ErrDstLength means Read was given a buffer whose length is not a
	// multiple of the channel count.
	ErrDstLength = errors.New("capture: dst length is not a multiple of the channel count")
	// ErrClosed means Read was called after Close.
	ErrClosed = errors.New("capture: source closed")
	// ErrUnsupported means the input uses an encoding, datatype or layout
	// this package does not decode.
	ErrUnsupported = errors.New("capture: unsupported input")
	// ErrFormat means a header or metadata file is malformed.
	ErrFormat = errors.New("capture: malformed input")
)

// checkDst validates the dst length against the channel count.
func checkDst(dst []float32, ch int) error {
	if len(dst)%ch != 0 {
		return fmt.Errorf("%w: len(dst)=%d, channels=%d", ErrDstLength, len(dst), ch)
	}
	return nil
}

// inputError carries a complete message and unwraps to one of the sentinel
// errors, so that messages read naturally ("unsupported datatype ...")
// instead of repeating the sentinel's text, while errors.Is still works.
type inputError struct {
	msg  string
	kind error
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.kind }

// inputErr formats an error of the given sentinel kind.
func inputErr(kind error, format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// frameBuf holds bytes read from an input but not yet decoded, buf[lo:hi],
// for sources that decode whole frames (samples, scans) from a byte stream.
type frameBuf struct {
	buf    []byte
	lo, hi int
}

// refill keeps the undecoded tail (at most a partial frame) at the front of
// buf and reads more behind it.
func (f *frameBuf) refill(r io.Reader) (int, error) {
	if f.lo > 0 {
		f.hi = copy(f.buf, f.buf[f.lo:f.hi])
		f.lo = 0
	}
	m, err := r.Read(f.buf[f.hi:])
	f.hi += m
	return m, err
}

// PCMSource is a source that knows how its samples were stored: as
// integers (PCM) of some width, or as floats. A WAV output takes that
// width by default, since many WAV readers (Python's wave module) cannot
// open float WAV.
type PCMSource interface {
	// PCMBits returns the bits of one stored integer value (8, 16, 24 or
	// 32), or 0 when the samples are floats.
	PCMBits() int
}
