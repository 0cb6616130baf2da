package capture_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sigproc/sigproc/capture"
)

// readAll reads src to its end in blocks of block samples and returns the
// values and the terminal error (io.EOF on a clean end).
func readAll(src capture.Source, block int) ([]float32, error) {
	buf := make([]float32, block*src.Info().Channels())
	var out []float32
	for {
		n, err := src.Read(context.Background(), buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, errors.New("Read returned (0, nil)")
		}
	}
}

func le16(v ...int16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	}
	return b
}

func le32i(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func le32f(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

func TestRawDecode(t *testing.T) {
	tests := []struct {
		format string
		data   []byte
		want   []float32
	}{
		{"ri16_le", le16(0, 16384, -32768, 32767, -1), []float32{0, 0.5, -1, 32767.0 / 32768, -1.0 / 32768}},
		{"ci16_le", le16(1, -2, 8192, -8192), []float32{1.0 / 32768, -2.0 / 32768, 0.25, -0.25}},
		{"rf32_le", le32f(0.1, -7.5, float32(math.Inf(1))), []float32{0.1, -7.5, float32(math.Inf(1))}},
		{"cf32_le", le32f(1e-30, 2, 3, -4), []float32{1e-30, 2, 3, -4}},
	}
	for _, tc := range tests {
		// OneByteReader exercises samples split across underlying reads.
		for name, r := range map[string]io.Reader{
			"whole":    bytes.NewReader(tc.data),
			"bytewise": iotest.OneByteReader(bytes.NewReader(tc.data)),
			"data+EOF": iotest.DataErrReader(bytes.NewReader(tc.data)),
		} {
			complexFmt := tc.format[0] == 'c'
			src, err := capture.NewRaw(r, tc.format, capture.Info{SampleRate: 1000, Complex: complexFmt})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(src, 1)
			if err != io.EOF || !equal(got, tc.want) {
				t.Errorf("%s %s: got %v, %v; want %v, EOF", tc.format, name, got, err, tc.want)
			}
		}
	}
}

func TestRawBlockSizes(t *testing.T) {
	vals := make([]int16, 2*100003)
	for i := range vals {
		vals[i] = int16(i * 7919)
	}
	data := le16(vals...)
	var ref []float32
	for _, block := range []int{1, 7, 256, 40000, 200000} {
		src, err := capture.NewRaw(bytes.NewReader(data), "ci16_le", capture.Info{SampleRate: 1, Complex: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, block)
		if err != io.EOF || len(got) != len(vals) {
			t.Fatalf("block %d: %d values, %v", block, len(got), err)
		}
		if ref == nil {
			ref = got
		} else if !equal(got, ref) {
			t.Fatalf("block %d differs from block 1", block)
		}
	}
}

func TestRawTruncated(t *testing.T) {
	tests := []struct {
		format string
		data   []byte
		whole  int // values expected before the error
		left   string
	}{
		{"rf32_le", append(le32f(1, 2), 0, 0, 0), 2, "3 byte(s) left over"},
		{"ri16_le", []byte{0, 0x40, 1}, 1, "1 byte(s) left over"},
		{"ci16_le", append(le16(1, 2, 3), 0), 2, "3 byte(s) left over"},
		{"cf32_le", le32f(1, 2, 3), 2, "4 byte(s) left over at the end, not a whole 8-byte cf32_le sample"},
		{"cf32_le", []byte{1}, 0, "1 byte(s) left over"},
	}
	for _, tc := range tests {
		src, err := capture.NewRaw(bytes.NewReader(tc.data), tc.format, capture.Info{SampleRate: 8, Complex: tc.format[0] == 'c'})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, 64)
		if len(got) != tc.whole || !errors.Is(err, capture.ErrTruncated) || !strings.Contains(err.Error(), tc.left) {
			t.Errorf("%s %d bytes: %d values, err %v; want %d values and ErrTruncated mentioning %q",
				tc.format, len(tc.data), len(got), err, tc.whole, tc.left)
		}
		// The error is sticky.
		if _, err2 := src.Read(context.Background(), make([]float32, 2)); !errors.Is(err2, capture.ErrTruncated) {
			t.Errorf("%s: second Read after truncation: %v", tc.format, err2)
		}
	}
}

func TestRawReadErrors(t *testing.T) {
	boom := errors.New("boom")
	src, _ := capture.NewRaw(iotest.ErrReader(boom), "rf32_le", capture.Info{SampleRate: 1})
	if _, err := src.Read(context.Background(), make([]float32, 4)); !errors.Is(err, boom) || !strings.Contains(err.Error(), "read input stream") {
		t.Errorf("reader failure: %v", err)
	}
	src, _ = capture.NewRaw(bytes.NewReader(le16(1, 2, 3)), "ci16_le", capture.Info{SampleRate: 1, Complex: true})
	if _, err := src.Read(context.Background(), make([]float32, 3)); !errors.Is(err, capture.ErrDstLength) || !strings.Contains(err.Error(), "len(dst)=3, channels=2") {
		t.Errorf("odd dst: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Read(ctx, make([]float32, 2)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	src.Close()
	if _, err := src.Read(context.Background(), make([]float32, 2)); !errors.Is(err, capture.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestNewRawErrors(t *testing.T) {
	r := bytes.NewReader(nil)
	tests := []struct {
		name   string
		r      io.Reader
		format string
		info   capture.Info
		want   string
	}{
		{"nil reader", nil, "rf32_le", capture.Info{SampleRate: 1}, "nil reader"},
		{"unknown format", r, "f32", capture.Info{SampleRate: 1}, `unknown datatype "f32" (supported: ri16_le, rf32_le, ci16_le, cf32_le, cu8, cs8`},
		{"big-endian", r, "cf32_be", capture.Info{SampleRate: 1, Complex: true}, `unsupported datatype "cf32_be"`},
		{"cu16", r, "cu16_le", capture.Info{SampleRate: 1, Complex: true}, `unsupported datatype "cu16_le"`},
		{"container", r, "wav", capture.Info{SampleRate: 1}, "use NewWAV"},
		{"no rate", r, "rf32_le", capture.Info{}, "sample rate 0"},
		{"complex mismatch", r, "ci16_le", capture.Info{SampleRate: 1}, "ci16_le is complex but info.Complex is false"},
		{"real mismatch", r, "rf32_le", capture.Info{SampleRate: 1, Complex: true}, "rf32_le is real"},
	}
	for _, tc := range tests {
		if _, err := capture.NewRaw(tc.r, tc.format, tc.info); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(raw, le32f(1, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.cf32")
	wav := filepath.Join(dir, "a.wav")
	if err := os.WriteFile(wav, buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, data: le16(1)}), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, format string
		rate               float64
		want               string
		is                 error
	}{
		{"infer .f32", raw, "", 1000, "cannot infer the sample format of " + raw, nil},
		{"missing file", missing, "cf32_le", 1000, missing, fs.ErrNotExist},
		{"missing wav", filepath.Join(dir, "nope.wav"), "", 0, "nope.wav", fs.ErrNotExist},
		{"missing sigmf", filepath.Join(dir, "nope.sigmf-meta"), "", 0, "nope.sigmf-meta", fs.ErrNotExist},
		{"raw without rate", raw, "rf32_le", 0, "sample rate 0", nil},
		{"bad format", raw, "rf64_le", 1, `unsupported datatype "rf64_le"`, capture.ErrUnsupported},
		{"rate mismatch", wav, "", 44100, "sample rate 44100 S/s was given but the file says 8000", nil},
		{"directory", dir, "ci16_le", 1e6, "is a directory, not a sample file", nil},
	}
	for _, tc := range tests {
		src, err := capture.OpenFile(tc.path, tc.format, tc.rate)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: error %v, want it to contain %q (is %v)", tc.name, err, tc.want, tc.is)
		}
		if src != nil {
			t.Errorf("%s: non-nil source with error", tc.name)
		}
	}
	// The same files open with the right arguments.
	for _, ok := range []struct {
		path, format string
		rate         float64
	}{{raw, "rf32_le", 1000}, {wav, "", 0}, {wav, "wav", 8000}} {
		src, err := capture.OpenFile(ok.path, ok.format, ok.rate)
		if err != nil {
			t.Fatalf("OpenFile(%s, %q, %g): %v", ok.path, ok.format, ok.rate, err)
		}
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRawReadAllocs(t *testing.T) {
	data := le16(make([]int16, 1<<16)...)
	src, _ := capture.NewRaw(&repeatReader{data: data}, "ci16_le", capture.Info{SampleRate: 1, Complex: true})
	buf := make([]float32, 4096)
	if a := testing.AllocsPerRun(100, func() { src.Read(context.Background(), buf) }); a != 0 {
		t.Fatalf("%v allocs per Read, want 0", a)
	}
}

// repeatReader serves data over and over without allocating.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}
