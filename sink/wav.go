package sink

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WAV writes a RIFF/WAVE file: PCM 16- or 24-bit or IEEE float 32-bit,
// one WAV channel per real channel of the stream and two (I, Q) per complex
// one, frames interleaved as they come. More than two WAV channels use
// WAVE_FORMAT_EXTENSIBLE. Integer formats scale by 2^15 or 2^23, round,
// and clip, counting clipped values (Clipped). The header's sizes are
// written when the file is closed, after a write error too; on an output
// that cannot seek (a pipe) they hold 0xFFFFFFFF, the streaming writers'
// "until the end of input", as they do for data beyond 4 GiB.
type WAV struct {
	*Raw
	out     io.WriteSeeker // nil when the sizes cannot be patched
	hdrSize int64
	rate    uint32
}

// wavUnknown is the size streaming writers put in a header they cannot
// patch.
const wavUnknown = 0xFFFFFFFF

// wavGUIDTail is the fixed part (bytes 2..15) of the KSDATAFORMAT_SUBTYPE
// GUIDs; the first two bytes carry the format code.
var wavGUIDTail = [14]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// wavHeader encodes the header for f at rate, with data bytes of samples
// (wavUnknown when not known).
func wavHeader(f format, rate uint32, data uint32) []byte {
	ch := uint16(f.frameValues())
	bits := uint16(8 * f.size())
	tag := uint16(0x0001)
	if f.float {
		tag = 0x0003
	}
	le := binary.LittleEndian
	var fmtBody []byte
	fmtBody = le.AppendUint16(fmtBody, tag)
	fmtBody = le.AppendUint16(fmtBody, ch)
	fmtBody = le.AppendUint32(fmtBody, rate)
	fmtBody = le.AppendUint32(fmtBody, rate*uint32(ch)*uint32(bits/8))
	fmtBody = le.AppendUint16(fmtBody, ch*bits/8)
	fmtBody = le.AppendUint16(fmtBody, bits)
	switch {
	case ch > 2:
		le.PutUint16(fmtBody[0:], 0xFFFE)
		fmtBody = le.AppendUint16(fmtBody, 22)   // cbSize
		fmtBody = le.AppendUint16(fmtBody, bits) // valid bits
		fmtBody = le.AppendUint32(fmtBody, 0)    // no speaker positions
		fmtBody = le.AppendUint16(fmtBody, tag)
		fmtBody = append(fmtBody, wavGUIDTail[:]...)
	case f.float:
		fmtBody = le.AppendUint16(fmtBody, 0) // cbSize: non-PCM formats have one
	}
	h := []byte("RIFF")
	riff := uint32(wavUnknown)
	if data != wavUnknown {
		riff = uint32(4 + 8 + len(fmtBody) + 8 + int(data) + int(data&1))
	}
	h = le.AppendUint32(h, riff)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, uint32(len(fmtBody)))
	h = append(h, fmtBody...)
	h = append(h, "data"...)
	return le.AppendUint32(h, data)
}

// checkWAVRate refuses a sample rate a WAV header cannot hold.
func checkWAVRate(name string, rate float64) error {
	if !(rate > 0) || rate > math.MaxUint32 || rate != math.Trunc(rate) {
		return fmt.Errorf("sink: wav %s: sample rate %g S/s is not a whole number WAV can hold (resample it, or use sigmf or a raw file)", name, rate)
	}
	return nil
}

// newWAV writes the header to raw's writer and returns the sink; out, when
// not nil, is where the sizes are patched on Close.
func newWAV(raw *Raw, rate float64, out io.WriteSeeker) (*WAV, error) {
	if err := checkWAVRate(raw.name, rate); err != nil {
		return nil, err
	}
	h := wavHeader(raw.f, uint32(rate), wavUnknown)
	if _, err := raw.w.Write(h); err != nil {
		return nil, fmt.Errorf("sink: write %s: %w", raw.name, err)
	}
	raw.base = int64(len(h))
	return &WAV{Raw: raw, out: out, hdrSize: int64(len(h)), rate: uint32(rate)}, nil
}

// Close flushes the samples, pads the data to an even size, and writes
// the final sizes into the header when the output can seek. It does so
// after a failed write too: the sizes then describe the whole samples that
// reached the file (a short write is cut back to them), so the file is
// still a valid WAV of what was written, never one whose header says
// 0xFFFFFFFF on a regular file.
func (w *WAV) Close() error {
	if w.closed {
		return ErrClosed
	}
	err := w.flush()
	data := w.written
	if data&1 == 1 {
		var perr error
		if err != nil && w.out != nil {
			// After a short write the offset may lie past the samples kept.
			_, perr = w.out.Seek(w.hdrSize+data, io.SeekStart)
		}
		if perr == nil {
			_, perr = w.w.Write([]byte{0})
		}
		if perr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", w.name, perr)
		}
	}
	if w.out != nil && data <= wavUnknown-w.hdrSize-1 {
		if perr := w.patch(uint32(data)); err == nil {
			err = perr
		}
	}
	w.closed = true
	if w.closer != nil {
		if cerr := w.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", w.name, cerr)
		}
	}
	return err
}

// patch rewrites the header with the data size.
func (w *WAV) patch(data uint32) error {
	if _, err := w.out.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("wav header %s: %w", w.name, err)
	}
	if _, err := w.out.Write(wavHeader(w.f, w.rate, data)); err != nil {
		return fmt.Errorf("wav header %s: %w", w.name, err)
	}
	if _, err := w.out.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("wav header %s: %w", w.name, err)
	}
	return nil
}
