package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// rawBufSize is the size of the byte buffer each Raw allocates once.
const rawBufSize = 64 << 10

// maxNoProgress bounds consecutive (0, nil) reads from a misbehaving reader.
const maxNoProgress = 100

// Raw decodes little-endian int16 or float32 samples from a byte stream. It
// is also the decoder behind WAV and SigMF sources. It is not safe for
// concurrent use.
type Raw struct {
	r      io.Reader
	closer io.Closer // set when Raw owns the input
	name   string    // path or description, for messages
	dt     datatype
	info   Info
	frameBuf
	consumed int64 // bytes read from r
	declared int64 // byte count the header promised; -1 if unknown
	eof      bool
	err      error // sticky terminal error
	closed   bool
}

// NewRaw returns a source decoding r in format ("ri16_le", "rf32_le",
// "ci16_le" or "cf32_le"). info.SampleRate must be positive and info.Complex
// must agree with the format. Close does not close r; the caller owns it
// (for example os.Stdin).
func NewRaw(r io.Reader, format string, info Info) (*Raw, error) {
	if r == nil {
		return nil, errors.New("capture: NewRaw: nil reader")
	}
	if format == FormatWAV || format == FormatSigMF {
		return nil, fmt.Errorf("capture: NewRaw: format %q is a container; use NewWAV or OpenSigMF", format)
	}
	dt, err := lookupDatatype(format)
	if err != nil {
		return nil, fmt.Errorf("capture: NewRaw: %w", err)
	}
	if err := checkRate(info.SampleRate); err != nil {
		return nil, fmt.Errorf("capture: NewRaw: %w", err)
	}
	if info.Complex != dt.complex {
		return nil, fmt.Errorf("capture: NewRaw: format %s is %s but info.Complex is %t", format, kind(dt.complex), info.Complex)
	}
	return newRaw(r, nil, "input stream", dt, info.SampleRate, -1), nil
}

func newRaw(r io.Reader, closer io.Closer, name string, dt datatype, rate float64, declared int64) *Raw {
	return &Raw{
		r:        r,
		closer:   closer,
		name:     name,
		dt:       dt,
		info:     Info{SampleRate: rate, Complex: dt.complex},
		frameBuf: frameBuf{buf: make([]byte, rawBufSize)},
		declared: declared,
	}
}

// Info describes the stream.
func (r *Raw) Info() Info { return r.info }

// Datatype returns the SigMF name of the stored sample format.
func (r *Raw) Datatype() string { return r.dt.name }

// Close closes the input if the source opened it. Closing twice is a no-op.
func (r *Raw) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return fmt.Errorf("capture: close %s: %w", r.name, err)
		}
	}
	return nil
}

// Read implements [Source].
func (r *Raw) Read(ctx context.Context, dst []float32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := r.info.Channels()
	if err := checkDst(dst, ch); err != nil {
		return 0, err
	}
	frame := r.dt.frame()
	n, stalls := 0, 0
	for n < len(dst) {
		if k := min((r.hi-r.lo)/frame, (len(dst)-n)/ch); k > 0 {
			r.decode(dst[n:n+k*ch], r.buf[r.lo:r.lo+k*frame])
			r.lo += k * frame
			n += k * ch
			continue
		}
		if r.err != nil {
			return n, r.err
		}
		if r.eof {
			r.err = r.endErr()
			return n, r.err
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := r.refill(r.r)
		r.consumed += int64(m)
		switch {
		case err == io.EOF:
			r.eof = true
		case err != nil:
			r.err = fmt.Errorf("capture: read %s: %w", r.name, err)
		case m == 0:
			if stalls++; stalls >= maxNoProgress {
				r.err = fmt.Errorf("capture: read %s: %w", r.name, io.ErrNoProgress)
			}
		default:
			stalls = 0
		}
	}
	return n, nil
}

// endErr is the error at end of input: io.EOF, or ErrTruncated when bytes
// are left over or the input is shorter than its header declared.
func (r *Raw) endErr() error {
	left := r.hi - r.lo
	short := r.declared >= 0 && r.consumed < r.declared
	switch {
	case short && left > 0:
		return inputErr(ErrTruncated, "capture: %s: truncated input: header declares %d data bytes but input ends after %d, and the last %d byte(s) are not a whole %d-byte %s sample",
			r.name, r.declared, r.consumed, left, r.dt.frame(), r.dt.name)
	case short:
		return inputErr(ErrTruncated, "capture: %s: truncated input: header declares %d data bytes but input ends after %d",
			r.name, r.declared, r.consumed)
	case left > 0:
		return inputErr(ErrTruncated, "capture: %s: truncated input: %d byte(s) left over at the end, not a whole %d-byte %s sample",
			r.name, left, r.dt.frame(), r.dt.name)
	}
	return io.EOF
}

// nativeLE is true on little-endian hosts, where a float32's memory is its
// little-endian encoding.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// decode converts len(dst) little-endian values from src.
func (r *Raw) decode(dst []float32, src []byte) { decodeLE(r.dt, dst, src) }

// decodeLE converts len(dst) little-endian values of datatype dt from src.
func decodeLE(dt datatype, dst []float32, src []byte) {
	if dt.float && nativeLE && len(dst) > 0 {
		// The bytes are already the in-memory float32s: one memmove.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src[:4*len(dst)])
		return
	}
	if dt.float {
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		return
	}
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:]))) * (1.0 / 32768)
	}
}

// OpenFile opens a sample file. format is a raw datatype ("ri16_le",
// "rf32_le", "ci16_le", "cf32_le"), "wav" or "sigmf"; "" infers it from the
// extension (.wav; .sigmf-meta, .sigmf-data, .sigmf). Raw formats need
// sampleRate > 0. For WAV and SigMF the rate comes from the file; a non-zero
// sampleRate that disagrees with it is an error rather than being ignored.
func OpenFile(path, format string, sampleRate float64) (Source, error) {
	if format == "" {
		var err error
		if format, err = inferFormat(path); err != nil {
			return nil, err
		}
	}
	var src Source
	switch format {
	case FormatWAV:
		w, err := OpenWAV(path)
		if err != nil {
			return nil, err
		}
		src = w
	case FormatSigMF:
		s, err := OpenSigMF(path)
		if err != nil {
			return nil, err
		}
		src = s
	default:
		dt, err := lookupDatatype(format)
		if err != nil {
			return nil, fmt.Errorf("capture: %s: %w; or use wav or sigmf", path, err)
		}
		if err := checkRate(sampleRate); err != nil {
			return nil, fmt.Errorf("capture: %s: %w (raw %s files need it)", path, err, format)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		return newRaw(f, f, path, dt, sampleRate, -1), nil
	}
	if got := src.Info().SampleRate; sampleRate != 0 && sampleRate != got {
		src.Close()
		return nil, fmt.Errorf("capture: %s: sample rate %g S/s was given but the file says %g S/s", path, sampleRate, got)
	}
	return src, nil
}

// inferFormat maps a file extension to a container format.
func inferFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".wav":
		return FormatWAV, nil
	case ".sigmf-meta", ".sigmf-data", ".sigmf":
		return FormatSigMF, nil
	}
	return "", fmt.Errorf("capture: cannot infer the sample format of %s from its extension; give it explicitly (%s, wav or sigmf)", path, supportedDatatypes)
}

func checkRate(rate float64) error {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("sample rate %g must be a positive finite number", rate)
	}
	return nil
}

func kind(complex bool) string {
	if complex {
		return "complex"
	}
	return "real"
}
