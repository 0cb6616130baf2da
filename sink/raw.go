package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync/atomic"
	"unsafe"
)

// bufSize is about the byte buffer each Raw allocates once: whole frames,
// at least one (frameBuffer).
const bufSize = 64 << 10

// Raw writes little-endian samples in a SigMF datatype. It is not safe for
// concurrent use.
type Raw struct {
	w       io.Writer
	closer  io.Closer // set when Raw owns the writer
	name    string    // path or description, for messages
	f       format
	file    *os.File // set when the output is a file: truncated to whole samples after a failed write
	buf     []byte
	n       int    // bytes buffered
	values  uint64 // values accepted by Write, buffered ones included
	written int64  // bytes that reached the writer
	base    int64  // bytes before the samples in the file (a WAV header)
	clipped atomic.Uint64
	onClip  func(total uint64) // called once, on the first clipped value
	err     error              // sticky write error
	closed  bool
}

// NewRaw returns a sink encoding to w in format ("rf32_le", "cf32_le",
// "ri16_le", "ci16_le" or "cs8"), one channel. Output is buffered: call
// Flush to push it out early, Close at the end. Close does not close w.
func NewRaw(w io.Writer, format string) (*Raw, error) {
	if w == nil {
		return nil, errors.New("sink: NewRaw: nil writer")
	}
	f, err := lookupFormat(format)
	if err != nil {
		return nil, err
	}
	return newRaw(w, nil, "output stream", f), nil
}

// CreateFile creates (or truncates) path and returns a buffered sink
// writing format to it; Close flushes and closes the file.
func CreateFile(path, format string) (*Raw, error) {
	f, err := lookupFormat(format)
	if err != nil {
		return nil, fmt.Errorf("sink: %s: %w", path, err)
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	return newFileRaw(file, path, f), nil
}

func newRaw(w io.Writer, c io.Closer, name string, f format) *Raw {
	r := &Raw{w: w, closer: c, name: name, f: f}
	r.buf = make([]byte, frameBuffer(r.frame()))
	return r
}

// frameBuffer is the size of a Raw's buffer for frames of frame bytes:
// bufSize rounded down to whole frames, or one frame if larger. Every
// flush then writes whole frames, so an output cut short by a kill or a
// full disk holds whole frames only.
func frameBuffer(frame int) int {
	return max(bufSize-bufSize%frame, frame)
}

// newFileRaw returns a Raw that owns file.
func newFileRaw(file *os.File, name string, f format) *Raw {
	r := newRaw(file, file, name, f)
	r.file = file
	return r
}

// SetClipHandler sets a function called once, from Write, as soon as the
// first value is clipped to the integer range (int16, int24 or int8), with
// the count so far; so that overload can be reported when it starts, not
// only at the end.
func (s *Raw) SetClipHandler(f func(total uint64)) { s.onClip = f }

// Write encodes samples: whole frames (every channel's sample, I and Q
// for complex formats). A write error is returned (wrapped with the path)
// and repeated by every later call.
func (s *Raw) Write(samples []float32) error {
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if err := s.f.checkFrames(len(samples)); err != nil {
		return err
	}
	size, frame := s.f.size(), s.frame()
	for len(samples) > 0 {
		room := (len(s.buf) - s.n) / frame * s.f.frameValues() // whole frames (frameBuffer)
		if room == 0 {
			if err := s.flush(); err != nil {
				return err
			}
			continue
		}
		k := min(room, len(samples))
		s.encode(s.buf[s.n:s.n+k*size], samples[:k])
		s.n += k * size
		s.values += uint64(k)
		samples = samples[k:]
	}
	return nil
}

// encode writes len(src) values into dst, counting clipped values and
// warning at the first.
func (s *Raw) encode(dst []byte, src []float32) {
	if clipped := encodeLE(s.f, dst, src); clipped > 0 {
		if s.clipped.Add(clipped) == clipped && s.onClip != nil {
			s.onClip(clipped)
		}
	}
}

// nativeLE is true on little-endian hosts.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// encodeLE writes len(src) values into dst in format f and returns how
// many were clipped to the integer range.
func encodeLE(f format, dst []byte, src []float32) (clipped uint64) {
	switch f.enc {
	case encF32:
		if nativeLE && len(src) > 0 {
			// A float32's memory is its little-endian encoding: one memmove.
			copy(dst[:4*len(src)], unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 4*len(src)))
			return 0
		}
		dst = dst[:4*len(src)]
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case encI16:
		dst = dst[:2*len(src)]
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(toInt16(v, &clipped)))
		}
	case encI24:
		dst = dst[:3*len(src)]
		for i, v := range src {
			x := toInt24(v, &clipped)
			d := dst[3*i : 3*i+3]
			d[0], d[1], d[2] = byte(x), byte(x>>8), byte(x>>16)
		}
	case encI8:
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] = byte(toInt8(v, &clipped))
		}
	}
	return clipped
}

// toInt24 scales v by 2^23 and rounds half away from zero, clipping to
// [-2^23, 2^23−1] and counting clipped values (NaN becomes 0). It works in
// float64, where every step is exact.
func toInt24(v float32, clipped *uint64) int32 {
	x := float64(v) * (1 << 23)
	switch {
	case x >= 1<<23-0.5:
		*clipped++
		return 1<<23 - 1
	case x <= -(1<<23)-0.5:
		*clipped++
		return -(1 << 23)
	case x != x:
		*clipped++
		return 0
	}
	return int32(math.Round(x))
}

// toInt8 scales v by 128 and rounds half away from zero, clipping to
// [-128, 127] and counting clipped values (NaN becomes 0).
func toInt8(v float32, clipped *uint64) int8 {
	x := v * 128
	switch {
	case x >= 127.5:
		*clipped++
		return math.MaxInt8
	case x <= -128.5:
		*clipped++
		return math.MinInt8
	case x != x:
		*clipped++
		return 0
	}
	return int8(roundHalfAway(x))
}

// toInt16 scales v by 32768 and rounds half away from zero (like
// math.Round), clipping to [-32768, 32767]. NaN becomes 0. Clipped values
// (including +1.0, which int16 cannot hold, and NaN) are counted. It works
// in float32: scaling by a power of two is exact, and so is roundHalfAway.
func toInt16(v float32, clipped *uint64) int16 {
	x := v * 32768
	switch {
	case x >= 32767.5:
		*clipped++
		return math.MaxInt16
	case x <= -32768.5:
		*clipped++
		return math.MinInt16
	case x != x: // NaN
		*clipped++
		return 0
	}
	return int16(roundHalfAway(x))
}

// roundHalfAway rounds x (|x| < 2^23) half away from zero, exactly: x
// minus its truncation is exact in float32, where x + 0.5 is not (it
// rounds 0.49999997 up to 1).
func roundHalfAway(x float32) int32 {
	t := int32(x)
	switch f := x - float32(t); {
	case f >= 0.5:
		t++
	case f <= -0.5:
		t--
	}
	return t
}

// Flush writes buffered bytes to the underlying writer.
func (s *Raw) Flush() error {
	if s.closed {
		return ErrClosed
	}
	return s.flush()
}

func (s *Raw) flush() error {
	if s.err != nil {
		return s.err
	}
	if s.n == 0 {
		return nil
	}
	m, err := s.w.Write(s.buf[:s.n])
	s.n = 0
	if err != nil {
		// A short write (a full disk) may end inside a sample: cut the
		// file back to whole samples, so that what is there is usable
		// and Written stays exact.
		if cut := int((s.written + int64(m)) % int64(s.frame())); cut != 0 {
			m -= cut
			if s.file != nil {
				_ = s.file.Truncate(s.base + s.written + int64(m))
			}
		}
	}
	s.written += int64(m)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			s.err = err // already names the file
		} else {
			s.err = fmt.Errorf("write %s: %w", s.name, err)
		}
	}
	return s.err
}

// Close flushes and, for CreateFile, closes the file.
func (s *Raw) Close() error {
	if s.closed {
		return ErrClosed
	}
	err := s.flush()
	s.closed = true
	if s.closer != nil {
		if cerr := s.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", s.name, cerr)
		}
	}
	return err
}

// Samples returns the number of samples (frames: one sample of every
// channel, complex ones counting once) written, including any still
// buffered.
func (s *Raw) Samples() uint64 { return s.values / uint64(s.f.frameValues()) }

// Written returns the number of samples that reached the underlying writer
// (the file): Samples less those still buffered or lost to a failed write.
func (s *Raw) Written() uint64 { return uint64(s.written / int64(s.frame())) }

// frame is the size in bytes of one frame (every channel's sample, I and
// Q when complex).
func (s *Raw) frame() int { return s.f.frameValues() * s.f.size() }

// Clipped returns how many values were clipped to the integer range
// (always 0 for float formats). It is safe to call from another goroutine.
func (s *Raw) Clipped() uint64 { return s.clipped.Load() }

// Format returns the SigMF datatype written.
func (s *Raw) Format() string { return s.f.name }
