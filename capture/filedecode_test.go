package capture_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// randomBytes returns n bytes of a fixed pseudo-random sequence: every
// value of every format, none of them a container header.
func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// sameEnd fails unless the file ended as the stream did: the same error
// text with the file's name for the stream's.
func sameEnd(t *testing.T, what string, gerr, rerr error, path, name string) {
	t.Helper()
	if (rerr == io.EOF) != (gerr == io.EOF) || errors.Is(rerr, capture.ErrTruncated) != errors.Is(gerr, capture.ErrTruncated) ||
		rerr.Error() != strings.ReplaceAll(gerr.Error(), path, name) {
		t.Fatalf("%s: the file ends with %v, the stream with %v", what, gerr, rerr)
	}
}

// An integer-format file is read by position, large reads in parallel
// parts each decoded by the goroutine that read it: the values must be the
// stream decoder's bit for bit, for reads that split into parts and end
// inside one, and its end (a partial frame left over) the same error.
// Len counts the frames left as the reads go. Region maps the file, for a
// backend that takes the bytes as stored; reads after it (a backend that
// declined them) give the same values.
func TestIntFileMatchesStream(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	dir := t.TempDir()
	const size = 700_001 // parts of 32 KiB (cs8) to 96 KiB (ci16, 3 channels) and more
	full := randomBytes(size + 16)
	for _, format := range []string{"cs8", "cu8", "ci16_le", "ri16_le"} {
		complex := format[0] == 'c'
		value := 1
		if strings.Contains(format, "16") {
			value = 2
		}
		for _, chans := range []int{1, 3} {
			frame := value * chans
			if complex {
				frame *= 2
			}
			tails := []int{0, 1}
			if frame > 2 {
				tails = append(tails, frame-1)
			}
			for _, tail := range tails {
				data := full[:size/frame*frame+tail]
				path := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.raw", format, chans, tail))
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				info := capture.Info{SampleRate: 1, Complex: complex, NumChannels: chans}
				for i, block := range []int{1, 1000, 1 << 13, 1 << 15, 1 << 17} { // frames a Read
					mapped := i%2 == 1
					what := fmt.Sprintf("%s, %d channel(s), %d byte(s) over, %d-frame reads, mapped %t", format, chans, tail, block, mapped)
					stream, err := capture.NewRaw(bytes.NewReader(data), format, info)
					if err != nil {
						t.Fatal(err)
					}
					ref, rerr := readAll(stream, block)
					src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: format, SampleRate: 1, Channels: chans})
					if err != nil {
						t.Fatal(err)
					}
					if src.(*capture.Raw).Encoding() == "" {
						t.Fatalf("%s: no encoding: integers are taken as stored", what)
					}
					if mapped {
						if _, err := src.(*capture.Raw).Region(); err != nil {
							t.Fatalf("%s: Region %v: integers are mapped", what, err)
						}
					}
					frames := int64(len(data) / frame)
					if n, ok := src.(interface{ Len() (int64, bool) }).Len(); !ok || n != frames {
						t.Fatalf("%s: Len %d, %t before the reads; want %d", what, n, ok, frames)
					}
					buf := make([]float32, block*src.Info().Channels())
					k, gerr := src.Read(context.Background(), buf)
					got := append([]float32(nil), buf[:k]...)
					if gerr == nil {
						n, _ := src.(interface{ Len() (int64, bool) }).Len()
						if want := frames - int64(k/src.Info().Channels()); n != want {
							t.Fatalf("%s: Len %d after %d values; want %d", what, n, k, want)
						}
						var rest []float32
						rest, gerr = readAll(src, block)
						got = append(got, rest...)
					}
					src.Close()
					if !sameBits(got, ref) {
						t.Fatalf("%s: the file gives %d values, the stream %d, or they differ", what, len(got), len(ref))
					}
					sameEnd(t, what, gerr, rerr, path, "input stream")
				}
			}
		}
	}
}

// An integer-format file truncated during the run ends it with
// ErrTruncated after the whole frames still in it, as a float32 file
// does; one that grows is read to its new end; the error is sticky.
func TestIntFileTruncatedDuringRun(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	data := randomBytes(3 << 20)
	tests := []struct {
		name   string
		format string
		chans  int
		block  int   // frames a Read
		before int   // frames read before the file changes
		size   int64 // the file's new size in bytes
		grow   bool
	}{
		{"at open, to nothing", "cs8", 1, 1 << 16, 0, 0, false},
		{"at open, to half", "ci16_le", 1, 1 << 20, 0, 3 << 19, false},
		{"behind the offset", "cu8", 2, 1 << 14, 3 << 16, 1 << 18, false},
		{"ahead of the offset", "ri16_le", 3, 1 << 16, 1 << 16, 2 << 20, false},
		{"inside a frame", "ci16_le", 3, 1000, 5000, 2<<20 + 5, false},
		{"one byte short", "cs8", 1, 1 << 20, 0, 3<<20 - 1, false},
		{"grows", "cs8", 2, 1 << 16, 1 << 16, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.raw")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			complex := tc.format[0] == 'c'
			info := capture.Info{SampleRate: 1, Complex: complex, NumChannels: tc.chans}
			src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: tc.format, SampleRate: 1, Channels: tc.chans})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			ch := src.Info().Channels() // values a frame
			frame := ch
			if strings.Contains(tc.format, "16") {
				frame *= 2
			}
			buf := make([]float32, tc.block*ch)
			got := readAtLeast(t, src, buf, tc.before*ch)
			want := data
			growOrCut(t, path, data, tc.grow, tc.size)
			if tc.grow {
				want = append(append([]byte{}, data...), data...)
			}
			rest, err := readAll(src, tc.block)
			got = append(got, rest...)
			if tc.grow {
				ref, rerr := readAll(mustRaw(t, want, tc.format, info), tc.block)
				if err != io.EOF || rerr != io.EOF || !sameBits(got, ref) {
					t.Fatalf("%d values (%v), want %d and io.EOF", len(got), err, len(ref))
				}
				return
			}
			if !errors.Is(err, capture.ErrTruncated) {
				t.Fatalf("%d values, then %v; want ErrTruncated", len(got), err)
			}
			now := max(tc.size, int64(len(got)/ch*frame))
			msg := fmt.Sprintf("capture: %s: the file was truncated during the run: %d bytes now, %d when the run began", path, now, len(data))
			if err.Error() != msg {
				t.Errorf("error %q\nwant  %q", err, msg)
			}
			// What was read is the whole frames still there.
			ref, _ := readAll(mustRaw(t, data[:now/int64(frame)*int64(frame)], tc.format, info), tc.block)
			if !sameBits(got, ref) {
				t.Fatalf("%d values read, want the %d of the frames still there", len(got), len(ref))
			}
			if _, err2 := src.Read(context.Background(), buf); err2 != err {
				t.Errorf("the error is not sticky: then %v", err2)
			}
		})
	}
}

func mustRaw(t *testing.T, data []byte, format string, info capture.Info) capture.Source {
	t.Helper()
	src, err := capture.NewRaw(bytes.NewReader(data), format, info)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// A SigMF recording of integer samples is read by position from
// core:sample_start to the end of its data, trailing bytes left out, with
// the values the stream decoder gives for those bytes.
func TestSigMFIntFileRange(t *testing.T) {
	capture.SetParallelReads(3)
	defer capture.SetParallelReads(0)
	const header, start, trailing = 7, 5, 3 // bytes, frames, bytes
	for _, tc := range []struct {
		datatype, format string
		frame, chans     int
	}{
		{"ci8", "cs8", 2, 1}, {"cu8", "cu8", 6, 3}, {"ci16_le", "ci16_le", 8, 2}, {"ri16_le", "ri16_le", 2, 1},
	} {
		samples := randomBytes((400_000 / tc.frame) * tc.frame)
		data := append(append(make([]byte, header), samples...), 1, 2, 3)
		meta := fmt.Sprintf(`{"global":{"core:datatype":%q,"core:sample_rate":1000,"core:version":"1.0.0","core:num_channels":%d,"core:trailing_bytes":%d},
"captures":[{"core:sample_index":0,"core:sample_start":%d,"core:header_bytes":%d}],"annotations":[]}`, tc.datatype, tc.chans, trailing, start, header)
		base := writeSigMF(t, meta, data)
		info := capture.Info{SampleRate: 1, Complex: tc.datatype[0] == 'c', NumChannels: tc.chans}
		ref, _ := readAll(mustRaw(t, samples[start*tc.frame:], tc.format, info), 1<<16)
		src, err := capture.OpenSigMF(base)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := src.Len(); !ok || n != int64(len(samples)/tc.frame-start) {
			t.Errorf("%s: Len %d, %t; want %d", tc.datatype, n, ok, len(samples)/tc.frame-start)
		}
		got, err := readAll(src, 1<<16)
		src.Close()
		if err != io.EOF || !sameBits(got, ref) {
			t.Fatalf("%s: %d values (%v), want %d and io.EOF", tc.datatype, len(got), err, len(ref))
		}
	}
}

// A WAV file's data chunk is read by position: PCM of every width and
// float, several channels, I,Q pairs, a partial frame at the end, a file
// shorter than its header declares (read as a stream, whose message says
// so) and the streaming size field (to the end of the file) give what the
// stream decoder gives. A float32 file's data can be mapped and viewed.
func TestWAVFileMatchesStream(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	dir := t.TempDir()
	pcm := randomBytes(600_000)
	for _, bits := range []uint16{8, 16, 24, 32} {
		for _, tag := range []uint16{1, 3} {
			if tag == 3 && bits != 32 {
				continue
			}
			for _, chans := range []uint16{1, 2, 6} {
				align := int(chans) * int(bits) / 8
				body := pcm[:len(pcm)/align*align]
				if tag == 3 {
					body = le32f(testSignal(len(body) / 4)...)
				}
				for _, shape := range []string{"whole", "partial frame", "short", "unknown size", "list chunks"} {
					s := wavSpec{tag: tag, chans: chans, bits: bits, rate: 8000, data: body}
					switch shape {
					case "partial frame":
						if align == 1 {
							continue
						}
						s.data = body[:len(body)-1]
					case "short":
						s.declared = len(body) + 100
					case "list chunks":
						s.list = true
					}
					b := buildWAV(s)
					if shape == "unknown size" {
						i := bytes.Index(b, []byte("data"))
						binary.LittleEndian.PutUint32(b[i+4:], 0xFFFFFFFF)
					}
					path := filepath.Join(dir, fmt.Sprintf("%d-%d-%d-%s.wav", tag, bits, chans, shape))
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					for _, complex := range []bool{false, true} {
						if complex && chans%2 != 0 {
							continue
						}
						what := fmt.Sprintf("%d-bit format %d, %d channels, complex %t, %s", bits, tag, chans, complex, shape)
						stream, err := capture.NewStdinWAV(context.Background(), bytes.NewReader(b), complex)
						if err != nil {
							t.Fatal(err)
						}
						ref, rerr := readAll(stream, 1<<15)
						src, err := capture.Open(context.Background(), path, capture.FileOptions{Complex: complex})
						if err != nil {
							t.Fatal(err)
						}
						got, gerr := readAll(src, 1<<15)
						src.Close()
						if !sameBits(got, ref) {
							t.Fatalf("%s: the file gives %d values, the stream %d, or they differ", what, len(got), len(ref))
						}
						sameEnd(t, what, gerr, rerr, path, "stdin")
						if tag == 3 && shape == "whole" {
							checkWAVView(t, path, ref)
						}
					}
				}
			}
		}
	}
}

// checkWAVView maps a float32 WAV file's data and views it whole.
func checkWAVView(t *testing.T, path string, want []float32) {
	t.Helper()
	r, err := capture.OpenWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Region(); err != nil {
		t.Fatal(err)
	}
	var got []float32
	for {
		v, err := r.View(context.Background(), 1<<14)
		got = append(got, v...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !sameBits(got, want) {
		t.Fatalf("%s: the views give %d values, the stream %d, or they differ", path, len(got), len(want))
	}
}

// Reading an integer-format file allocates nothing per Read once its
// buffer is made, and a smaller Read reuses the larger one's.
func TestIntFileReadAllocs(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	path := filepath.Join(t.TempDir(), "x.cs8")
	if err := os.WriteFile(path, make([]byte, 64<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "cs8", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	small, large := make([]float32, 1<<18), make([]float32, 1<<21) // 256 KiB, 2 MiB of the file: in parts
	ctx := context.Background()
	src.Read(ctx, small)
	src.Read(ctx, large)
	if a := testing.AllocsPerRun(8, func() {
		if _, err := src.Read(ctx, large); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Read(ctx, small); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocs per two Reads, want 0", a)
	}
}
