package sink_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/internal/sigmftest"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// create prepares and creates a sink from spec.
func create(t *testing.T, spec sink.Spec) sink.Sink {
	t.Helper()
	p, err := sink.Prepare(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCS8Encoding(t *testing.T) {
	var b bytes.Buffer
	s, err := sink.NewRaw(&b, sink.FormatCS8)
	if err != nil {
		t.Fatal(err)
	}
	in := []float32{0, 0.5, -0.5, -1, 127.0 / 128, 1, -1.5, float32(math.NaN()), 0.00390625, -0.00390625}
	if err := s.Write(in); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := []int8{0, 64, -64, -128, 127, 127, -128, 0, 1, -1} // half away from zero
	for i, w := range want {
		if int8(b.Bytes()[i]) != w {
			t.Errorf("value %d (%v) = %d, want %d", i, in[i], int8(b.Bytes()[i]), w)
		}
	}
	if s.Clipped() != 3 || s.Samples() != 5 {
		t.Errorf("clipped %d samples %d, want 3 and 5", s.Clipped(), s.Samples())
	}
	// Read back through the capture side: v/128.
	src, err := capture.NewRaw(bytes.NewReader(b.Bytes()), capture.FormatCS8, capture.Info{SampleRate: 1, Complex: true})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 10)
	if n, _ := src.Read(context.Background(), got); n != 10 || got[1] != 0.5 || got[3] != -1 {
		t.Errorf("read back %v", got[:n])
	}
}

// TestChannelsFrames: a 3-channel complex sink counts frames and refuses
// partial frames.
func TestChannelsFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cf32")
	s := create(t, sink.Spec{Type: sink.TypeFile, Path: path, Format: sink.FormatCF32, Channels: 3}).(*sink.Raw)
	if err := s.Write(make([]float32, 7)); err == nil || !strings.Contains(err.Error(), "not whole 6-value frames of 3 cf32_le channels") {
		t.Errorf("partial frame: %v", err)
	}
	s.Write(make([]float32, 12))
	if s.Samples() != 2 {
		t.Errorf("Samples %d, want 2 frames", s.Samples())
	}
	s.Close()
}

// readWAV decodes a WAV file with the capture package's reader: rate,
// channels and values.
func readWAV(t *testing.T, path string) (capture.Info, []float32) {
	t.Helper()
	src, err := capture.OpenWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var all []float32
	buf := make([]float32, 64*src.Info().Channels())
	for {
		n, err := src.Read(context.Background(), buf)
		all = append(all, buf[:n]...)
		if err == io.EOF {
			return src.Info(), all
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestWAVSinkRoundTrip(t *testing.T) {
	in := []float32{0, 0.5, -0.5, 0.25, -1, 0.75, 1.5, -2} // 4 frames of 2 values
	for _, tc := range []struct {
		format   string
		complex  bool
		channels int
		bits     int
		ext      bool
		clipped  uint64
	}{
		{sink.WAVPCM16, false, 2, 16, false, 2},
		{sink.WAVPCM24, true, 1, 24, false, 2},
		{sink.WAVFloat32, false, 2, 32, false, 0},
		{sink.WAVPCM16, false, 4, 16, true, 2},  // 2 frames of 4: extensible
		{sink.WAVFloat32, true, 2, 32, true, 0}, // 2 complex channels: 4 WAV channels
	} {
		t.Run(tc.format+map[bool]string{false: "", true: "/complex"}[tc.complex], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "y.wav")
			s := create(t, sink.Spec{Type: sink.TypeWAV, Path: path, Format: tc.format, Complex: tc.complex, Channels: tc.channels, SampleRate: 48000})
			w := s.(*sink.WAV)
			if err := w.Write(in); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.Clipped() != tc.clipped {
				t.Errorf("clipped %d, want %d", w.Clipped(), tc.clipped)
			}
			raw, _ := os.ReadFile(path)
			if tag := binary.LittleEndian.Uint16(raw[20:]); (tag == 0xFFFE) != tc.ext {
				t.Errorf("format tag %#x", tag)
			}
			if string(raw[0:4]) != "RIFF" || int(binary.LittleEndian.Uint32(raw[4:])) != len(raw)-8 {
				t.Errorf("RIFF size %d for a %d-byte file", binary.LittleEndian.Uint32(raw[4:]), len(raw))
			}
			info, got := readWAV(t, path)
			wch := tc.channels
			if tc.complex {
				wch *= 2
			}
			if info.SampleRate != 48000 || info.ChannelCount() != wch || len(got) != len(in) {
				t.Fatalf("info %+v, %d values", info, len(got))
			}
			for i, v := range in {
				want := float64(max(-1, min(v, 1)))
				if tc.format == sink.WAVFloat32 {
					want = float64(v)
				} else if v >= 1 {
					want = 1 - math.Ldexp(1, 1-tc.bits) // full scale is one step below 1
				}
				if math.Abs(float64(got[i])-want) > 1e-9 {
					t.Errorf("value %d = %v, want %v", i, got[i], want)
				}
			}
		})
	}
}

// TestWAVSinkOddPad: 24-bit mono of an odd count pads the data chunk to
// an even size, outside the declared data size.
func TestWAVSinkOddPad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "y.wav")
	s := create(t, sink.Spec{Type: sink.TypeWAV, Path: path, Format: sink.WAVPCM24, SampleRate: 8000})
	s.Write([]float32{0.5})
	s.Close()
	raw, _ := os.ReadFile(path)
	if len(raw) != 44+4 || binary.LittleEndian.Uint32(raw[40:]) != 3 || binary.LittleEndian.Uint32(raw[4:]) != 40 {
		t.Errorf("%d bytes, data size %d, riff %d", len(raw), binary.LittleEndian.Uint32(raw[40:]), binary.LittleEndian.Uint32(raw[4:]))
	}
	// A rate a WAV header cannot hold is refused by Prepare, before the
	// run starts, split or not, to a file or to stdout.
	for _, spec := range []sink.Spec{
		{Type: sink.TypeWAV, Path: path + "2", Format: sink.WAVPCM16, SampleRate: 44100.5},
		{Type: sink.TypeWAV, Path: path + "2", Format: sink.WAVPCM16, SampleRate: 0.5, Split: true, Channels: 2, Labels: []string{"a", "b"}},
		{Type: sink.TypeWAV, Path: sink.Stdout, Format: sink.WAVPCM16, SampleRate: 5e9, Stdout: &bytes.Buffer{}},
	} {
		if _, err := sink.Prepare(spec); err == nil || !strings.Contains(err.Error(), "not a whole number") {
			t.Errorf("rate %g: %v", spec.SampleRate, err)
		}
	}
}

// TestStdoutWAVRedirected: a WAV on stdout redirected to a file (>) gets
// its sizes patched on Close; one appended to a file (>>) does not, since
// the patch would land at the end: it keeps the streaming sizes and the
// file holds one header, then the samples.
func TestStdoutWAVRedirected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  int
		prefix []byte // what the file held before
		size   uint32 // the data size in the header
	}{
		{">", os.O_WRONLY | os.O_CREATE | os.O_TRUNC, nil, 4},
		{">> a new file", os.O_WRONLY | os.O_CREATE | os.O_APPEND, nil, 0xFFFFFFFF},
		{">> a file", os.O_WRONLY | os.O_CREATE | os.O_APPEND, []byte("abc"), 0xFFFFFFFF},
	} {
		path := filepath.Join(t.TempDir(), "o.wav")
		if tc.prefix != nil {
			os.WriteFile(path, tc.prefix, 0o644)
		}
		f, err := os.OpenFile(path, tc.flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		s := create(t, sink.Spec{Type: sink.TypeWAV, Path: sink.Stdout, Format: sink.WAVPCM16, Stdout: f, SampleRate: 8000})
		s.Write([]float32{0.5, -0.5})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		b, _ := os.ReadFile(path)
		b = bytes.TrimPrefix(b, tc.prefix)
		if len(b) != 44+4 || binary.LittleEndian.Uint32(b[40:]) != tc.size {
			t.Errorf("%s: %d bytes after what was there, data size %#x; want 48 bytes, %#x", tc.name, len(b), binary.LittleEndian.Uint32(b[40:]), tc.size)
		}
	}
}

// TestStdoutSink: "-" writes to Spec.Stdout; a pipe's WAV header keeps the
// streaming sizes, and the capture side reads it to the end.
func TestStdoutSink(t *testing.T) {
	var b bytes.Buffer
	s := create(t, sink.Spec{Type: sink.TypeFile, Path: sink.Stdout, Format: sink.FormatRF32, Stdout: &b})
	s.Write([]float32{1, 2})
	s.Close()
	if b.Len() != 8 {
		t.Errorf("%d bytes on stdout", b.Len())
	}
	b.Reset()
	s = create(t, sink.Spec{Type: sink.TypeWAV, Path: sink.Stdout, Format: sink.WAVPCM16, Stdout: &b, SampleRate: 8000})
	s.Write([]float32{0.5, -0.5})
	s.Close()
	if binary.LittleEndian.Uint32(b.Bytes()[40:]) != 0xFFFFFFFF {
		t.Errorf("streamed data size %#x", binary.LittleEndian.Uint32(b.Bytes()[40:]))
	}
	src, err := capture.NewWAV(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if n, err := src.Read(context.Background(), got); n != 2 || err != io.EOF || got[0] != 0.5 {
		t.Errorf("read back %v %v", got[:n], err)
	}
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: sink.Stdout, Format: sink.FormatRF32}); err == nil {
		t.Error("- without a Stdout accepted")
	}
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: sink.Stdout, Format: sink.FormatRF32, Stdout: &b}); err == nil {
		t.Error("sigmf to stdout accepted")
	}
}

// TestSigMFCarried: metadata from an input recording, through a chain
// that shifts and decimates by 4, into a 2-channel recording that the
// SigMF schema accepts.
func TestSigMFCarried(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.UTC)
	src := &capture.Meta{
		Author: "a", HW: "rtl-sdr v3", Description: "fm band",
		FrequencyHz: 100e6, HasFrequency: true, Datetime: t0,
		Annotations: []capture.Annotation{
			{SampleStart: 1000, SampleCount: 802, HasCount: true, Fields: map[string]json.RawMessage{"core:label": []byte(`"station"`), "core:freq_lower_edge": []byte(`99.9e6`)}},
			{SampleStart: 7, Fields: map[string]json.RawMessage{"core:comment": []byte(`"point"`)}},
			{SampleStart: 1 << 20, SampleCount: 10, HasCount: true}, // beyond the end: left out
		},
		Extensions: []json.RawMessage{[]byte(`{"name":"antenna","version":"1.0.0","optional":true}`)},
	}
	chain := stage.Chain{SampleRate: 2e6, Complex: true, Channels: 2, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: -250e3}, {Kind: stage.KindFIR, Taps: []float32{1}, Decimate: 4}}}
	m := sink.SigMFMeta{Datatype: sink.FormatCF32, Description: "sigproc"}
	m.Carry(src, chain)
	base := filepath.Join(t.TempDir(), "out")
	s := create(t, sink.Spec{Type: sink.TypeSigMF, Path: base, Format: sink.FormatCF32, Channels: 2, Meta: m}).(*sink.SigMF)
	// 2000 input frames -> 500 output frames of 2 complex channels.
	if err := s.WriteIndexed(0, 2000, make([]float32, 500*2*2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(base + ".sigmf-meta")
	sigmftest.Validate(t, raw)
	var doc struct {
		Global      map[string]any   `json:"global"`
		Captures    []map[string]any `json:"captures"`
		Annotations []map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Global
	if g["core:sample_rate"] != 5e5 || g["core:num_channels"] != 2.0 || g["core:hw"] != "rtl-sdr v3" || g["core:author"] != "a" ||
		g["core:description"] != "fm band (sigproc)" || g["core:datatype"] != "cf32_le" {
		t.Errorf("global %v", g)
	}
	if exts := g["core:extensions"].([]any); len(exts) != 2 || exts[1].(map[string]any)["name"] != "antenna" {
		t.Errorf("extensions %v", exts)
	}
	c0 := doc.Captures[0]
	if c0["core:frequency"] != 100.25e6 || c0["core:datetime"] != "2026-01-02T03:04:05.6Z" {
		t.Errorf("captures[0] %v (want the centre at f_c − shift = 100.25 MHz)", c0)
	}
	if len(doc.Annotations) != 2 {
		t.Fatalf("annotations %v", doc.Annotations)
	}
	a0, a1 := doc.Annotations[0], doc.Annotations[1]
	// 7 -> ceil(7/4) = 2; [1000, 1802) -> [250, 451).
	if a0["core:sample_start"] != 2.0 || a0["core:comment"] != "point" || a0["core:sample_count"] != nil {
		t.Errorf("point annotation %v", a0)
	}
	if a1["core:sample_start"] != 250.0 || a1["core:sample_count"] != 201.0 || a1["core:label"] != "station" || a1["core:freq_lower_edge"] != 99.9e6 {
		t.Errorf("annotation %v", a1)
	}
}

// TestSigMFSetDatetimeAndCS8: a live source's first-sample time replaces
// the stamp; cs8 is written as SigMF ci8.
func TestSigMFSetDatetimeAndCS8(t *testing.T) {
	base := filepath.Join(t.TempDir(), "live")
	s := create(t, sink.Spec{Type: sink.TypeSigMF, Path: base, Format: sink.FormatCS8, StampStart: true,
		Meta: sink.SigMFMeta{SampleRate: 1e6}}).(*sink.SigMF)
	s.Write([]float32{0.5, -0.5})
	t0 := time.Date(2027, 5, 6, 7, 8, 9, 123456789, time.UTC)
	s.SetDatetime(t0)
	s.Close()
	raw, _ := os.ReadFile(base + ".sigmf-meta")
	sigmftest.Validate(t, raw)
	if !bytes.Contains(raw, []byte(`"core:datetime": "2027-05-06T07:08:09.123456789Z"`)) || !bytes.Contains(raw, []byte(`"core:datatype": "ci8"`)) {
		t.Errorf("meta:\n%s", raw)
	}
}
