package sink_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/sink"
)

func TestNull(t *testing.T) {
	s := sink.NewNull()
	s.Write(make([]float32, 10))
	s.Write(make([]float32, 5))
	if n := s.(sink.Counter).Samples(); n != 15 {
		t.Fatalf("Samples %d, want 15", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(make([]float32, 1)); !errors.Is(err, sink.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

func TestRawEncoding(t *testing.T) {
	le16 := func(v ...int16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
		}
		return b
	}
	le32 := func(v ...float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	nan := float32(math.NaN())
	tests := []struct {
		format  string
		in      []float32
		want    []byte
		samples uint64
		clipped uint64
	}{
		{"rf32_le", []float32{0.1, -2, 1e30}, le32(0.1, -2, 1e30), 3, 0},
		{"cf32_le", []float32{1, 2, 3, 4}, le32(1, 2, 3, 4), 2, 0},
		{"ri16_le", []float32{0, 0.5, -1, 1.0 / 65536, -1.0 / 65536, 0.99998}, le16(0, 16384, -32768, 1, -1, 32767), 6, 0},
		{"ri16_le", []float32{1, 1.5, -1.5, nan, -1}, le16(32767, 32767, -32768, 0, -32768), 5, 4},
		{"ci16_le", []float32{0.25, -0.25, 2, 0}, le16(8192, -8192, 32767, 0), 2, 1},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		s, err := sink.NewRaw(&buf, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(tc.in); err != nil {
			t.Fatal(err)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote before Flush/Close; output should be buffered", tc.format)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), tc.want) || s.Samples() != tc.samples || s.Clipped() != tc.clipped {
			t.Errorf("%s %v: bytes %v samples %d clipped %d; want %v, %d, %d",
				tc.format, tc.in, buf.Bytes(), s.Samples(), s.Clipped(), tc.want, tc.samples, tc.clipped)
		}
	}
}

func TestRawLargeWrite(t *testing.T) {
	var buf bytes.Buffer
	s, _ := sink.NewRaw(&buf, "cf32_le")
	in := make([]float32, 100002)
	for i := range in {
		in[i] = float32(i)
	}
	s.Write(in[:2])
	s.Write(in[2:])
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 4*len(in) || s.Samples() != uint64(len(in)/2) {
		t.Fatalf("%d bytes, %d samples", buf.Len(), s.Samples())
	}
	for i := range in {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(buf.Bytes()[4*i:])); got != in[i] {
			t.Fatalf("value %d = %v", i, got)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestRawErrors(t *testing.T) {
	if _, err := sink.NewRaw(&bytes.Buffer{}, "cu8"); !errors.Is(err, sink.ErrFormat) || !strings.Contains(err.Error(), `"cu8" (supported: rf32_le, cf32_le, ri16_le, ci16_le, cs8)`) {
		t.Errorf("bad format: %v", err)
	}
	if _, err := sink.NewRaw(nil, "cf32_le"); err == nil {
		t.Error("nil writer accepted")
	}
	s, _ := sink.NewRaw(&bytes.Buffer{}, "ci16_le")
	if err := s.Write(make([]float32, 3)); !errors.Is(err, sink.ErrOddLength) {
		t.Errorf("odd complex write: %v", err)
	}
	s.Close()
	if err := s.Write(make([]float32, 2)); !errors.Is(err, sink.ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, sink.ErrClosed) {
		t.Errorf("second close: %v", err)
	}

	s, _ = sink.NewRaw(failWriter{}, "rf32_le")
	s.Write(make([]float32, 10))
	err := s.Close()
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "write output stream") {
		t.Errorf("writer failure: %v", err)
	}
	// The pipeline says "write sink:" and the CLI "close sink ...:".
	if err != nil && strings.Contains(err.Error(), "sink:") {
		t.Errorf("writer failure repeats the package: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "no", "such", "dir")
	if _, err := sink.CreateFile(filepath.Join(dir, "x.cf32"), "cf32_le"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("create in missing dir: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		s, err := sink.CreateFile("/dev/full", "rf32_le")
		if err != nil {
			t.Fatal(err)
		}
		// Enough to overflow the buffer, so Write itself reports the failure.
		err = s.Write(make([]float32, 100000))
		if err == nil || !strings.Contains(err.Error(), "/dev/full") {
			t.Errorf("write to /dev/full: %v", err)
		}
		if err2 := s.Write(make([]float32, 1)); !errors.Is(err2, errors.Unwrap(err)) {
			t.Errorf("error not sticky: %v", err2)
		}
		s.Close()
	}
}

func TestCreateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.ci16")
	s, err := sink.CreateFile(path, "ci16_le")
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]float32{0.5, -0.5})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.Equal(b, []byte{0x00, 0x40, 0x00, 0xc0}) {
		t.Fatalf("file bytes %x", b)
	}
}

func TestSigMFMetaFile(t *testing.T) {
	dir := t.TempDir()
	for _, given := range []string{"a", "b.sigmf-data", "c.sigmf-meta"} {
		base := filepath.Join(dir, strings.SplitN(given, ".", 2)[0])
		s, err := sink.CreateSigMF(filepath.Join(dir, given), sink.SigMFMeta{
			Datatype: "cf32_le", SampleRate: 1e6, Description: "desc", Author: "me", HW: "rtl-sdr",
			FrequencyHz: 100e6, Datetime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Extra: map[string]any{"my:gain_db": 20.5},
		})
		if err != nil {
			t.Fatal(err)
		}
		s.Write(make([]float32, 20))
		// The metadata is there from the start, so that a recording cut
		// short (kill -9, power loss) is still described.
		if early, err := os.ReadFile(base + ".sigmf-meta"); err != nil || !json.Valid(early) {
			t.Fatalf("%s: no valid meta before Close: %v\n%s", given, err, early)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s.Samples() != 10 || s.MetaPath() != base+".sigmf-meta" {
			t.Fatalf("%s: Samples %d MetaPath %s", given, s.Samples(), s.MetaPath())
		}
		if fi, err := os.Stat(base + ".sigmf-data"); err != nil || fi.Size() != 80 {
			t.Fatalf("%s: data file %v %v", given, fi, err)
		}
		raw, err := os.ReadFile(base + ".sigmf-meta")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Global      map[string]any   `json:"global"`
			Captures    []map[string]any `json:"captures"`
			Annotations []any            `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		wantGlobal := map[string]any{"core:version": "1.0.0", "core:datatype": "cf32_le", "core:sample_rate": 1e6,
			"core:recorder": "sigproc", "core:description": "desc", "core:author": "me", "core:hw": "rtl-sdr", "my:gain_db": 20.5,
			"core:extensions": nil}
		for k, v := range wantGlobal {
			if k == "core:extensions" {
				continue // checked in TestSigMFGaps
			}
			if m.Global[k] != v {
				t.Errorf("%s: global %s = %v, want %v", given, k, m.Global[k], v)
			}
		}
		if len(m.Global) != len(wantGlobal) {
			t.Errorf("%s: global has extra keys: %v", given, m.Global)
		}
		if len(m.Captures) != 1 || m.Captures[0]["core:sample_start"] != 0.0 || m.Captures[0]["core:frequency"] != 100e6 ||
			m.Captures[0]["core:datetime"] != "2026-01-02T03:04:05Z" {
			t.Errorf("%s: captures %v", given, m.Captures)
		}
		if m.Annotations == nil || len(m.Annotations) != 0 {
			t.Errorf("%s: annotations %v, want []", given, m.Annotations)
		}
	}
}

func TestSigMFMinimalMeta(t *testing.T) {
	base := filepath.Join(t.TempDir(), "m")
	s, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: "ri16_le", SampleRate: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(base + ".sigmf-meta")
	var m map[string]any
	json.Unmarshal(raw, &m)
	caps := m["captures"].([]any)
	if len(caps) != 1 || len(caps[0].(map[string]any)) != 1 || len(m["global"].(map[string]any)) != 5 {
		t.Fatalf("meta %s", raw)
	}
}

func TestSigMFErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		base string
		meta sink.SigMFMeta
		want string
	}{
		{"datatype", "a", sink.SigMFMeta{Datatype: "cu8", SampleRate: 1}, `unsupported format "cu8"`},
		{"rate", "a", sink.SigMFMeta{Datatype: "cf32_le"}, "sample rate 0"},
		{"frequency", "a", sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1, FrequencyHz: math.Inf(1)}, "frequency +Inf"},
		{"extra namespace", "a", sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1, Extra: map[string]any{"gain": 1}}, `extra key "gain" is not namespaced`},
		{"extra reserved", "a", sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1, Extra: map[string]any{"core:sample_rate": 2}}, `extra key "core:sample_rate" is set by the recorder`},
		{"extra unencodable", "a", sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1, Extra: map[string]any{"x:y": math.NaN()}}, "encode metadata"},
		{"missing dir", "nodir/a", sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1}, filepath.Join(dir, "nodir", "a.sigmf-data")},
	}
	for _, tc := range tests {
		s, err := sink.CreateSigMF(filepath.Join(dir, tc.base), tc.meta)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
		if s != nil {
			t.Errorf("%s: non-nil sink with error", tc.name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.sigmf-data")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a failed CreateSigMF left a data file")
	}
}

func TestWriteAllocs(t *testing.T) {
	in := make([]float32, 4096)
	for _, format := range []string{"rf32_le", "cf32_le", "ri16_le", "ci16_le"} {
		s, _ := sink.NewRaw(discard{}, format)
		if a := testing.AllocsPerRun(100, func() { s.Write(in) }); a != 0 {
			t.Errorf("%s: %v allocs per Write", format, a)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkWrite(b *testing.B) {
	in := make([]float32, 16384)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)))
	}
	for _, format := range []string{"cf32_le", "ci16_le"} {
		b.Run(format, func(b *testing.B) {
			s, _ := sink.NewRaw(discard{}, format)
			b.ReportAllocs()
			b.SetBytes(int64(4 * len(in)))
			for b.Loop() {
				if err := s.Write(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(in)/2)/b.Elapsed().Seconds()/1e6, "MS/s")
		})
	}
}

func ExampleNewRaw() {
	var out bytes.Buffer
	s, _ := sink.NewRaw(&out, "ri16_le")
	s.Write([]float32{0.5, -0.25, 1.0, -1.5})
	s.Close()
	fmt.Printf("% x\n", out.Bytes())
	fmt.Println(s.Samples(), "samples,", s.Clipped(), "clipped")
	// Output:
	// 00 40 00 e0 ff 7f 00 80
	// 4 samples, 2 clipped
}

// TestIntRounding checks the int16 and int8 encoders against math.Round
// with clipping over a fine grid, including every half-step tie and the
// floats on either side of it (0.49999997 of a step rounds to 0, not 1).
func TestIntRounding(t *testing.T) {
	for _, tc := range []struct {
		format string
		scale  float64
		lo, hi float64
		size   int
	}{
		{"ri16_le", 32768, -32768, 32767, 2},
		{"cs8", 128, -128, 127, 1},
	} {
		var in []float32
		top := int(tc.scale) + 2
		for k := -top * 4; k <= top*4; k++ {
			v := float32(float64(k) / (4 * tc.scale)) // quarter steps: ties and non-ties
			in = append(in, v, math.Nextafter32(v, 0), math.Nextafter32(v, float32(math.Inf(1))))
		}
		in = append(in, float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e30)
		if len(in)%2 == 1 {
			in = append(in, 0)
		}
		var buf bytes.Buffer
		s, _ := sink.NewRaw(&buf, tc.format)
		if err := s.Write(in); err != nil {
			t.Fatal(err)
		}
		s.Close()
		var clipped uint64
		for i, v := range in {
			want := math.Round(float64(v) * tc.scale)
			if want > tc.hi || want < tc.lo {
				want = max(tc.lo, min(tc.hi, want))
				clipped++
			}
			var got float64
			if tc.size == 2 {
				got = float64(int16(binary.LittleEndian.Uint16(buf.Bytes()[2*i:])))
			} else {
				got = float64(int8(buf.Bytes()[i]))
			}
			if got != want {
				t.Fatalf("%s: %v (%v steps) encoded as %v, want %v", tc.format, v, float64(v)*tc.scale, got, want)
			}
		}
		if s.Clipped() != clipped {
			t.Fatalf("%s: Clipped %d, want %d", tc.format, s.Clipped(), clipped)
		}
	}
}
