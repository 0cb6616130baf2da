package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// WAV support: RIFF/WAVE with PCM samples of 8 (unsigned), 16, 24 or 32
// bits (format 1) or IEEE float 32-bit (format 3), directly or as
// WAVE_FORMAT_EXTENSIBLE (0xFFFE) subformats, any number of channels up to
// MaxChannels. Integers are scaled by 1/2^(bits−1); 8-bit unsigned becomes
// (v−128)/128. Each channel is a real channel of the stream, unless the
// channels are paired as I,Q (left I, right Q: the layout SDR tools such as
// SDR#, HDSDR and SDRuno use for baseband recordings). Unknown chunks (LIST,
// fact, ...) are skipped; reading stops at the end of the data chunk.

// ksGUIDTail is the fixed part (bytes 2..15) of the KSDATAFORMAT_SUBTYPE
// GUIDs; the first two bytes carry the format code.
var ksGUIDTail = [14]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

const (
	wavPCM        = 0x0001
	wavFloat      = 0x0003
	wavExtensible = 0xFFFE
	// wavUnknownSize is the data size streaming writers use when the length
	// is not known; such data runs to the end of the input. Writers that
	// never seek back leave 0 there, which parseWAVHeader reads the same
	// way where the RIFF size was not filled in either (0, 0xFFFFFFFF, or
	// no more than the header): a RIFF size that covers chunks after an
	// empty data chunk says the recording really is empty.
	wavUnknownSize = 0xFFFFFFFF
)

// wavSupported is listed in error messages.
const wavSupported = "PCM 8-bit unsigned, 16-, 24- and 32-bit; IEEE float 32-bit"

// OpenWAV opens a WAV file; see the package notes on supported encodings.
// Each of the file's channels is a real channel of the stream; see [Open]
// for I,Q pairs.
func OpenWAV(path string) (*Raw, error) { return openWAV(path, false) }

// openWAV opens a WAV file, pairing its channels as I,Q when complex.
func openWAV(path string, complex bool) (*Raw, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	r, err := newWAV(f, f, path, complex)
	if err != nil {
		f.Close()
		return nil, err
	}
	// The data chunk of a regular file is read by position, from where
	// the header ends to its declared end (or the end of the file).
	if off, err := f.Seek(0, io.SeekCurrent); err == nil {
		end := int64(-1)
		if r.declared >= 0 {
			end = off + r.declared
		}
		r.direct = newFileReader(f, r.dt, r.fbytes, off, end, r.scan)
	}
	return r, nil
}

// NewWAV reads a WAV stream from r (for example stdin), each channel a real
// channel of the stream. Close does not close r.
func NewWAV(r io.Reader) (*Raw, error) {
	if r == nil {
		return nil, errors.New("capture: NewWAV: nil reader")
	}
	return newWAV(r, nil, "stream", false)
}

func newWAV(r io.Reader, closer io.Closer, name string, complex bool) (*Raw, error) {
	dt, chans, rate, size, err := parseWAVHeader(r)
	if err != nil {
		return nil, fmt.Errorf("capture: wav %s: %w", name, err)
	}
	if complex {
		if chans%2 != 0 {
			return nil, fmt.Errorf("capture: wav %s: %w", name, inputErr(ErrFormat, "%d channels cannot be paired as I,Q (complex needs an even count)", chans))
		}
		chans /= 2
		dt.complex = true
	}
	if size == wavUnknownSize {
		return newRaw(r, closer, name, dt, rate, -1, chans), nil
	}
	return newRaw(io.LimitReader(r, size), closer, name, dt, rate, size, chans), nil
}

// parseWAVHeader reads up to the start of the data chunk and returns the
// sample layout of one channel, the channel count, the rate and the
// declared data size (wavUnknownSize if unknown).
func parseWAVHeader(r io.Reader) (dt datatype, chans int, rate float64, size int64, err error) {
	var hdr [12]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return dt, 0, 0, 0, shortErr(err, fmt.Sprintf("input is %d bytes, too short for a RIFF header", n))
	}
	switch string(hdr[0:4]) {
	case "RIFF":
	case "RF64", "BW64":
		return dt, 0, 0, 0, inputErr(ErrUnsupported, "unsupported %s (64-bit RIFF) file", hdr[0:4])
	case "RIFX":
		return dt, 0, 0, 0, inputErr(ErrUnsupported, "unsupported big-endian RIFX file")
	default:
		return dt, 0, 0, 0, inputErr(ErrFormat, "not a RIFF file (starts with %q)", hdr[0:4])
	}
	if string(hdr[8:12]) != "WAVE" {
		return dt, 0, 0, 0, inputErr(ErrFormat, "RIFF form type is %q, want \"WAVE\"", hdr[8:12])
	}
	riff := binary.LittleEndian.Uint32(hdr[4:8])
	pos := int64(len(hdr)) // bytes of the input so far
	haveFmt := false
	for {
		var ck [8]byte
		if _, err := io.ReadFull(r, ck[:]); err != nil {
			if err == io.EOF {
				if !haveFmt {
					return dt, 0, 0, 0, inputErr(ErrFormat, "no fmt chunk")
				}
				return dt, 0, 0, 0, inputErr(ErrFormat, "no data chunk")
			}
			return dt, 0, 0, 0, shortErr(err, "chunk header cut short")
		}
		id := string(ck[0:4])
		csize := int64(binary.LittleEndian.Uint32(ck[4:]))
		pos += int64(len(ck))
		switch id {
		case "fmt ":
			if haveFmt {
				return dt, 0, 0, 0, inputErr(ErrFormat, "more than one fmt chunk")
			}
			if csize < 16 {
				return dt, 0, 0, 0, inputErr(ErrFormat, "fmt chunk is %d bytes, want at least 16", csize)
			}
			var f [40]byte
			n := min(csize, int64(len(f)))
			if _, err := io.ReadFull(r, f[:n]); err != nil {
				return dt, 0, 0, 0, shortErr(err, "fmt chunk cut short")
			}
			if dt, chans, rate, err = parseWAVFmt(f[:n]); err != nil {
				return dt, 0, 0, 0, err
			}
			if err := skip(r, csize-n+csize&1, "fmt "); err != nil {
				return dt, 0, 0, 0, err
			}
			haveFmt = true
			pos += csize + csize&1
		case "data":
			if !haveFmt {
				return dt, 0, 0, 0, inputErr(ErrFormat, "data chunk before fmt chunk")
			}
			if csize == 0 && (riff == 0 || riff == wavUnknownSize || int64(riff)+8 <= pos) {
				csize = wavUnknownSize // neither size filled in: the data runs to the end
			}
			return dt, chans, rate, csize, nil
		default:
			if err := skip(r, csize+csize&1, id); err != nil {
				return dt, 0, 0, 0, err
			}
			pos += csize + csize&1
		}
	}
}

// parseWAVFmt decodes a fmt chunk body (16 to 40 bytes): one channel's
// sample layout (real), the channel count and the rate.
func parseWAVFmt(f []byte) (datatype, int, float64, error) {
	le := binary.LittleEndian
	tag := le.Uint16(f[0:])
	chans := int(le.Uint16(f[2:]))
	rate := le.Uint32(f[4:])
	align := int(le.Uint16(f[12:]))
	bits := int(le.Uint16(f[14:]))
	if tag == wavExtensible {
		if len(f) < 40 {
			return datatype{}, 0, 0, inputErr(ErrFormat, "WAVE_FORMAT_EXTENSIBLE fmt chunk is %d bytes, want 40", len(f))
		}
		if cb := le.Uint16(f[16:]); cb < 22 {
			return datatype{}, 0, 0, inputErr(ErrFormat, "WAVE_FORMAT_EXTENSIBLE extension is %d bytes, want 22", cb)
		}
		if valid := int(le.Uint16(f[18:])); valid > bits {
			return datatype{}, 0, 0, inputErr(ErrFormat, "%d valid bits in %d-bit samples", valid, bits)
		}
		guid := f[24:40]
		if !bytes.Equal(guid[2:], ksGUIDTail[:]) {
			return datatype{}, 0, 0, inputErr(ErrUnsupported, "unsupported WAVE_FORMAT_EXTENSIBLE subformat GUID %x (supported: %s)", guid, wavSupported)
		}
		tag = le.Uint16(guid[0:])
	}
	var dt datatype
	switch {
	case tag == wavPCM && bits == 8:
		dt = datatype{name: "ru8 (WAV)", size: 1, enc: encU8Half}
	case tag == wavPCM && bits == 16:
		dt = datatype{name: FormatRI16, size: 2, enc: encI16}
	case tag == wavPCM && bits == 24:
		dt = datatype{name: "ri24_le", size: 3, enc: encI24}
	case tag == wavPCM && bits == 32:
		dt = datatype{name: "ri32_le", size: 4, enc: encI32}
	case tag == wavFloat && bits == 32:
		dt = datatype{name: FormatRF32, size: 4, enc: encF32, float: true}
	default:
		return datatype{}, 0, 0, inputErr(ErrUnsupported, "unsupported WAV encoding %s (supported: %s)", wavEncoding(tag, bits), wavSupported)
	}
	if chans < 1 || chans > MaxChannels {
		return datatype{}, 0, 0, inputErr(ErrUnsupported, "unsupported WAV channel count %d (supported: 1..%d)", chans, MaxChannels)
	}
	if align != dt.size*chans {
		return datatype{}, 0, 0, inputErr(ErrFormat, "block align %d, want %d for %d channel(s) of %d bits", align, dt.size*chans, chans, bits)
	}
	if rate == 0 {
		return datatype{}, 0, 0, inputErr(ErrFormat, "sample rate is 0")
	}
	return dt, chans, float64(rate), nil
}

// wavEncoding names a WAV format tag for error messages.
func wavEncoding(tag uint16, bits int) string {
	var name string
	switch tag {
	case wavPCM:
		name = "PCM"
	case wavFloat:
		name = "IEEE float"
	case 0x0002:
		name = "MS ADPCM"
	case 0x0006:
		name = "A-law"
	case 0x0007:
		name = "µ-law"
	case 0x0011:
		name = "IMA ADPCM"
	case 0x0055:
		name = "MPEG layer 3"
	default:
		name = fmt.Sprintf("format tag 0x%04x", tag)
	}
	return fmt.Sprintf("%s %d-bit", name, bits)
}

// skip discards n bytes of chunk id.
func skip(r io.Reader, n int64, id string) error {
	if n <= 0 {
		return nil
	}
	if _, err := io.CopyN(io.Discard, r, n); err != nil {
		if err == io.EOF {
			return inputErr(ErrFormat, "input ends inside chunk %q (no data chunk follows)", id)
		}
		return err
	}
	return nil
}

// shortErr turns an unexpected EOF into a malformed-header error.
func shortErr(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return inputErr(ErrFormat, "%s", what)
	}
	return err
}
