package capture_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
)

// wavSpec describes a WAV file for buildWAV.
type wavSpec struct {
	tag         uint16 // format tag (1 PCM, 3 float); the subformat if extensible
	chans, bits uint16
	rate        uint32
	extensible  bool
	badGUID     bool
	data        []byte
	declared    int    // data chunk size field; 0 = len(data)
	list        bool   // add odd-sized LIST chunks before fmt and before data, and one after data
	noFmt       bool   // omit the fmt chunk
	noData      bool   // omit the data chunk
	dataFirst   bool   // put data before fmt
	align       uint16 // block align override
	riff, wave  string // header overrides
}

func chunk(id string, body []byte) []byte {
	b := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(body)))
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// buildWAV returns the bytes of the WAV file s describes.
func buildWAV(s wavSpec) []byte {
	le := binary.LittleEndian
	align := s.chans * s.bits / 8
	if s.align != 0 {
		align = s.align
	}
	fmtBody := make([]byte, 16)
	tag := s.tag
	if s.extensible {
		tag = 0xFFFE
	}
	le.PutUint16(fmtBody[0:], tag)
	le.PutUint16(fmtBody[2:], s.chans)
	le.PutUint32(fmtBody[4:], s.rate)
	le.PutUint32(fmtBody[8:], s.rate*uint32(align))
	le.PutUint16(fmtBody[12:], align)
	le.PutUint16(fmtBody[14:], s.bits)
	if s.extensible {
		ext := make([]byte, 24)
		le.PutUint16(ext[0:], 22)
		le.PutUint16(ext[2:], s.bits)
		le.PutUint32(ext[4:], 3) // channel mask FL|FR
		le.PutUint16(ext[8:], s.tag)
		copy(ext[10:], []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71})
		if s.badGUID {
			ext[23] = 0x72
		}
		fmtBody = append(fmtBody, ext...)
	}
	dataChunk := chunk("data", s.data)
	if s.declared != 0 {
		le.PutUint32(dataChunk[4:], uint32(s.declared))
		dataChunk = dataChunk[:8+len(s.data)] // no pad: the file simply ends
	}
	var body []byte
	body = append(body, "WAVE"...)
	if s.wave != "" {
		copy(body, s.wave)
	}
	list := chunk("LIST", []byte("INFOISFT\x03\x00\x00\x00ab\x00"))
	if s.list {
		body = append(body, list...)
	}
	if s.dataFirst && !s.noData {
		body = append(body, dataChunk...)
	}
	if !s.noFmt {
		body = append(body, chunk("fmt ", fmtBody)...)
	}
	if s.list {
		body = append(body, chunk("fact", []byte{1, 2, 3})...)
	}
	if !s.dataFirst && !s.noData {
		body = append(body, dataChunk...)
	}
	if s.list && !s.noData && s.declared == 0 {
		body = append(body, list...) // must not be read as samples
	}
	out := append([]byte("RIFF"), 0, 0, 0, 0)
	if s.riff != "" {
		copy(out, s.riff)
	}
	le.PutUint32(out[4:], uint32(len(body)))
	return append(out, body...)
}

func TestWAVDecode(t *testing.T) {
	pcm := le16(16384, -16384, 32767, -32768)
	pcmWant := []float32{0.5, -0.5, 32767.0 / 32768, -1}
	flt := le32f(0.25, -0.125, 1.5, -2)
	fltWant := []float32{0.25, -0.125, 1.5, -2}
	u8 := []byte{128, 0, 255, 192}
	u8Want := []float32{0, -1, 127.0 / 128, 0.5}
	// 24-bit: 0x400000 = 0.5, 0xC00000 = -0.5, 0x7FFFFF, 0x800000 = -1.
	i24 := []byte{0, 0, 0x40, 0, 0, 0xC0, 0xFF, 0xFF, 0x7F, 0, 0, 0x80}
	i24Want := []float32{0.5, -0.5, float32(8388607.0 / 8388608), -1}
	i32 := le32i(1<<30, -(1 << 30), 1<<31-1, -(1 << 31))
	i32Want := []float32{0.5, -0.5, float32(2147483647.0 / 2147483648), -1}
	tests := []struct {
		name    string
		spec    wavSpec
		pair    bool // complex: the channels paired as I,Q
		complex bool
		nch     int
		want    []float32
	}{
		{"pcm16 mono", wavSpec{tag: 1, chans: 1, bits: 16, rate: 48000, data: pcm}, false, false, 1, pcmWant},
		{"pcm16 stereo as two channels", wavSpec{tag: 1, chans: 2, bits: 16, rate: 48000, data: pcm}, false, false, 2, pcmWant},
		{"pcm16 stereo as IQ", wavSpec{tag: 1, chans: 2, bits: 16, rate: 2400000, data: pcm}, true, true, 1, pcmWant},
		{"float32 mono", wavSpec{tag: 3, chans: 1, bits: 32, rate: 8000, data: flt}, false, false, 1, fltWant},
		{"float32 stereo as IQ", wavSpec{tag: 3, chans: 2, bits: 32, rate: 8000, data: flt}, true, true, 1, fltWant},
		{"float32 four channels", wavSpec{tag: 3, chans: 4, bits: 32, rate: 8000, extensible: true, data: flt}, false, false, 4, fltWant},
		{"float32 four channels as two IQ", wavSpec{tag: 3, chans: 4, bits: 32, rate: 8000, extensible: true, data: flt}, true, true, 2, fltWant},
		{"extensible pcm16 stereo", wavSpec{tag: 1, chans: 2, bits: 16, rate: 96000, extensible: true, data: pcm}, true, true, 1, pcmWant},
		{"extensible float mono", wavSpec{tag: 3, chans: 1, bits: 32, rate: 96000, extensible: true, data: flt}, false, false, 1, fltWant},
		{"u8 mono", wavSpec{tag: 1, chans: 1, bits: 8, rate: 8000, data: u8}, false, false, 1, u8Want},
		{"pcm24 mono", wavSpec{tag: 1, chans: 1, bits: 24, rate: 44100, data: i24}, false, false, 1, i24Want},
		{"pcm24 extensible stereo", wavSpec{tag: 1, chans: 2, bits: 24, rate: 44100, extensible: true, data: i24}, false, false, 2, i24Want},
		{"pcm32 mono", wavSpec{tag: 1, chans: 1, bits: 32, rate: 44100, data: i32}, false, false, 1, i32Want},
		{"pcm32 extensible stereo as IQ", wavSpec{tag: 1, chans: 2, bits: 32, rate: 44100, extensible: true, data: i32}, true, true, 1, i32Want},
		{"extra chunks skipped", wavSpec{tag: 1, chans: 1, bits: 16, rate: 22050, data: pcm, list: true}, false, false, 1, pcmWant},
		{"empty data", wavSpec{tag: 1, chans: 1, bits: 16, rate: 22050}, false, false, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.wav")
			if err := os.WriteFile(path, buildWAV(tc.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := capture.Open(context.Background(), path, capture.FileOptions{Complex: tc.pair})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if info := src.Info(); info.SampleRate != float64(tc.spec.rate) || info.Complex != tc.complex || info.ChannelCount() != tc.nch {
				t.Fatalf("Info %+v, want rate %d complex %v channels %d", info, tc.spec.rate, tc.complex, tc.nch)
			}
			got, err := readAll(src, src.Info().Channels())
			if err != io.EOF || !equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v, EOF", got, err, tc.want)
			}
			if !tc.pair {
				// The stream reader agrees.
				src2, err := capture.NewWAV(bytes.NewReader(buildWAV(tc.spec)))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := readAll(src2, src2.Info().Channels()); err != io.EOF || !equal(got, tc.want) {
					t.Fatalf("NewWAV: got %v, %v", got, err)
				}
			}
		})
	}
}

func TestOpenWAVFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "iq.wav")
	if err := os.WriteFile(path, buildWAV(wavSpec{tag: 3, chans: 2, bits: 32, rate: 250000, data: le32f(1, 2, 3, 4), list: true}), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(src, 8)
	if err != io.EOF || !equal(got, []float32{1, 2, 3, 4}) || src.Info().Complex || src.Info().ChannelCount() != 2 {
		t.Fatalf("got %v %v %+v", got, err, src.Info())
	}
	if _, err := capture.Open(context.Background(), path, capture.FileOptions{Channels: 3}); err == nil || !strings.Contains(err.Error(), "3 channels were given but the file has 2") {
		t.Fatalf("channel mismatch: %v", err)
	}
	if _, err := capture.Open(context.Background(), path, capture.FileOptions{Channels: 2, Complex: true}); err == nil || !strings.Contains(err.Error(), "file has 1 complex") {
		t.Fatalf("complex channel mismatch: %v", err)
	}
}

func TestWAVErrors(t *testing.T) {
	pcm := le16(1, 2, 3, 4)
	tests := []struct {
		name string
		data []byte
		want string
		is   error
	}{
		{"empty", nil, "too short for a RIFF header", capture.ErrFormat},
		{"bad RIFF", []byte("RIFX\x00\x00\x00\x00WAVE"), "big-endian RIFX", capture.ErrUnsupported},
		{"not RIFF", []byte("OggS\x00\x00\x00\x00WAVEfmt "), `not a RIFF file (starts with "OggS")`, capture.ErrFormat},
		{"not WAVE", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 1, wave: "AVI "}), `RIFF form type is "AVI "`, capture.ErrFormat},
		{"RF64", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 1, riff: "RF64"}), "RF64", capture.ErrUnsupported},
		{"12-bit", buildWAV(wavSpec{tag: 1, chans: 1, bits: 12, rate: 8000, align: 2, data: pcm}), "unsupported WAV encoding PCM 12-bit", capture.ErrUnsupported},
		{"64-bit extensible", buildWAV(wavSpec{tag: 1, chans: 2, bits: 64, rate: 8000, extensible: true, data: pcm}), "PCM 64-bit", capture.ErrUnsupported},
		{"float64", buildWAV(wavSpec{tag: 3, chans: 1, bits: 64, rate: 8000, data: pcm}), "IEEE float 64-bit", capture.ErrUnsupported},
		{"A-law", buildWAV(wavSpec{tag: 6, chans: 1, bits: 8, rate: 8000, data: pcm}), "A-law 8-bit", capture.ErrUnsupported},
		{"4097 channels", buildWAV(wavSpec{tag: 1, chans: 4097, bits: 16, rate: 8000, data: le16(1, 2, 3)}), "unsupported WAV channel count 4097", capture.ErrUnsupported},
		{"0 channels", buildWAV(wavSpec{tag: 1, chans: 0, bits: 16, rate: 8000, align: 2}), "channel count 0", capture.ErrUnsupported},
		{"bad GUID", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, extensible: true, badGUID: true}), "subformat GUID", capture.ErrUnsupported},
		{"block align", buildWAV(wavSpec{tag: 1, chans: 2, bits: 16, rate: 8000, align: 3}), "block align 3, want 4", capture.ErrFormat},
		{"rate 0", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 0}), "sample rate is 0", capture.ErrFormat},
		{"no fmt", buildWAV(wavSpec{noFmt: true, noData: true}), "no fmt chunk", capture.ErrFormat},
		{"no data", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, noData: true}), "no data chunk", capture.ErrFormat},
		{"no data after LIST", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, noData: true, list: true}), "no data chunk", capture.ErrFormat},
		{"data before fmt", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, dataFirst: true, data: pcm}), "data chunk before fmt chunk", capture.ErrFormat},
		{"fmt cut short", buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, noData: true})[:30], "fmt chunk cut short", capture.ErrFormat},
		{"LIST cut short", append([]byte("RIFF\x00\x00\x00\x00WAVELIST\xff\x00\x00\x00"), 1, 2), `input ends inside chunk "LIST"`, capture.ErrFormat},
		{"fmt too small", append([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x04\x00\x00\x00"), 1, 0, 1, 0), "fmt chunk is 4 bytes", capture.ErrFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := capture.NewWAV(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) {
				t.Fatalf("error %v, want it to contain %q and match %v", err, tc.want, tc.is)
			}
			if src != nil {
				t.Fatal("non-nil source with error")
			}
		})
	}
}

func TestWAVTruncatedData(t *testing.T) {
	tests := []struct {
		name string
		spec wavSpec
		want []float32
		msg  string
	}{
		{"shorter than declared", wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, data: le16(16384, 8192), declared: 100},
			[]float32{0.5, 0.25}, "header declares 100 data bytes but input ends after 4"},
		{"partial sample", wavSpec{tag: 1, chans: 2, bits: 16, rate: 8000, data: append(le16(16384, 8192), 1, 2, 3)},
			[]float32{0.5, 0.25}, "3 byte(s) left over"},
		{"short and partial", wavSpec{tag: 3, chans: 1, bits: 32, rate: 8000, data: append(le32f(1), 9, 9), declared: 40},
			[]float32{1}, "header declares 40 data bytes but input ends after 6, and the last 2 byte(s)"},
	}
	for _, tc := range tests {
		src, err := capture.NewWAV(bytes.NewReader(buildWAV(tc.spec)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := readAll(src, 64)
		if !equal(got, tc.want) || !errors.Is(err, capture.ErrTruncated) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, %v; want %v and ErrTruncated with %q", tc.name, got, err, tc.want, tc.msg)
		}
	}
}

// Streaming writers that cannot seek back to fill in the sizes leave
// 0xFFFFFFFF or 0 in the data chunk's: the data runs to the end of the
// input, from a stream or a file, unless the RIFF size was filled in
// past the data chunk's header, which makes a data size of 0 an empty
// recording (with, say, a LIST chunk after it).
func TestWAVUnknownSize(t *testing.T) {
	le := binary.LittleEndian
	samples := []float32{0.5, 0.25}
	const asBuilt = 0xFFFFFFFE // leave the RIFF size buildWAV wrote
	tests := []struct {
		name       string
		riff, data uint32
		list       bool // an empty data chunk, a LIST chunk after it
		want       []float32
	}{
		{"data 0xFFFFFFFF", asBuilt, 0xFFFFFFFF, false, samples},
		{"data 0, RIFF 0", 0, 0, false, samples},
		{"data 0, RIFF 0xFFFFFFFF", 0xFFFFFFFF, 0, false, samples},
		{"data 0, RIFF up to the data header", 36, 0, false, samples},
		{"empty, LIST after it", asBuilt, 0, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b []byte
			if tc.list {
				b = buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, data: []byte{}})
				b = append(b, chunk("LIST", []byte("INFOISFT\x03\x00\x00\x00ab\x00"))...)
				le.PutUint32(b[4:], uint32(len(b)-8))
			} else {
				b = buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, data: le16(16384, 8192)})
				le.PutUint32(b[len(b)-8:], tc.data)
			}
			if tc.riff != asBuilt {
				le.PutUint32(b[4:], tc.riff)
			}
			path := filepath.Join(t.TempDir(), "s.wav")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			stream, err := capture.NewWAV(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			file, err := capture.OpenWAV(path)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			for _, src := range []capture.Source{stream, file} {
				if got, err := readAll(src, 64); err != io.EOF || !equal(got, tc.want) {
					t.Errorf("got %v, %v; want %v and EOF", got, err, tc.want)
				}
			}
		})
	}
}

// OpenStdin reads a WAV stream from a pipe: the header says the rate and
// channels (pairs of them I,Q with Complex), values given in the options
// must agree, the streaming size field 0xFFFFFFFF reads to the end, and a
// silent writer does not hold the header read past ctx's end.
func TestOpenStdinWAV(t *testing.T) {
	pcm := make([]byte, 2*6) // 3 frames of 2 int16 channels
	for i := range 6 {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(1000*(i+1))))
	}
	want := []float32{1000. / 32768, 2000. / 32768, 3000. / 32768, 4000. / 32768, 5000. / 32768, 6000. / 32768}
	tests := []struct {
		name     string
		declared int
		opts     capture.FileOptions
		info     capture.Info
		err      string
	}{
		{"two real channels", 0, capture.FileOptions{}, capture.Info{SampleRate: 8000, NumChannels: 2}, ""},
		{"streaming size", -1, capture.FileOptions{}, capture.Info{SampleRate: 8000, NumChannels: 2}, ""},
		{"paired as I,Q", 0, capture.FileOptions{Complex: true}, capture.Info{SampleRate: 8000, Complex: true, NumChannels: 1}, ""},
		{"rate agrees", 0, capture.FileOptions{SampleRate: 8000, Channels: 2}, capture.Info{SampleRate: 8000, NumChannels: 2}, ""},
		{"rate disagrees", 0, capture.FileOptions{SampleRate: 48000}, capture.Info{}, "sample rate 48000 S/s was given but the file says 8000 S/s"},
		{"channels disagree", 0, capture.FileOptions{Channels: 4}, capture.Info{}, "4 channels were given but the file has 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			spec := wavSpec{tag: 1, chans: 2, bits: 16, rate: 8000, data: pcm}
			if tt.declared < 0 {
				spec.declared = -1 // 0xFFFFFFFF
			}
			go func() {
				w.Write(buildWAV(spec))
				w.Close()
			}()
			tt.opts.Format = capture.FormatWAV
			src, err := capture.OpenStdin(context.Background(), r, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if src.Info() != tt.info {
				t.Errorf("Info %+v, want %+v", src.Info(), tt.info)
			}
			got := make([]float32, 8)
			n, err := src.Read(context.Background(), got)
			if err != io.EOF || n != 6 {
				t.Fatalf("read %d values, %v; want 6 and EOF", n, err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("values %v, want %v", got[:n], want)
				}
			}
		})
	}
	t.Run("silent writer", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := capture.OpenStdin(ctx, r, capture.FileOptions{Format: capture.FormatWAV}); !errors.Is(err, context.Canceled) {
			t.Fatalf("header read on a silent pipe after cancel: %v, want context.Canceled", err)
		}
	})
}
