package capture_test

import (
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/sink"
)

// testSignal returns n values in [-1, 1-1/32768], including the extremes.
func testSignal(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	v[0], v[1], v[2] = -1, 0, 1-1.0/32768
	return v
}

// checkRoundTrip compares decoded values with the originals: exact for
// float formats, within half an int16 step for int16 formats.
func checkRoundTrip(t *testing.T, format string, want, got []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: read %d values, wrote %d", format, len(got), len(want))
	}
	tol := 0.0
	if format[1:4] == "i16" {
		tol = 0.5/32768 + 1e-9
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > tol {
			t.Fatalf("%s: value %d read %v, wrote %v (error %g > %g)", format, i, got[i], want[i], d, tol)
		}
	}
}

// writeAll writes v to s in uneven pieces (to cross the sink's buffer).
func writeAll(t *testing.T, s sink.Sink, v []float32) {
	t.Helper()
	for len(v) > 0 {
		k := min(len(v), 10002) // even, so complex pieces stay whole
		if err := s.Write(v[:k]); err != nil {
			t.Fatal(err)
		}
		v = v[k:]
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

var formats = []string{"ri16_le", "rf32_le", "ci16_le", "cf32_le"}

func TestRawRoundTrip(t *testing.T) {
	want := testSignal(2 * 50001)
	for _, format := range formats {
		path := filepath.Join(t.TempDir(), "x.raw")
		s, err := sink.CreateFile(path, format)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, s, want)
		if s.Clipped() != 0 {
			t.Errorf("%s: %d values clipped", format, s.Clipped())
		}
		src, err := capture.OpenFile(path, format, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, 4096)
		if err != io.EOF {
			t.Fatalf("%s: %v", format, err)
		}
		checkRoundTrip(t, format, want, got)
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSigMFRoundTrip(t *testing.T) {
	want := testSignal(2 * 30000)
	for _, format := range formats {
		base := filepath.Join(t.TempDir(), "rec")
		s, err := sink.CreateSigMF(base+".sigmf-data", sink.SigMFMeta{Datatype: format, SampleRate: 2.4e6, FrequencyHz: 433.92e6, Description: "round trip"})
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, s, want)
		src, err := capture.OpenFile(base+".sigmf-meta", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		sm := src.(*capture.SigMF)
		if m := sm.Meta(); m.Datatype != format || m.SampleRate != 2.4e6 || m.FrequencyHz != 433.92e6 || m.Version != "1.0.0" || m.Description != "round trip" {
			t.Fatalf("%s: meta %+v", format, m)
		}
		if src.Info().Complex != (format[0] == 'c') {
			t.Fatalf("%s: Info %+v", format, src.Info())
		}
		got, err := readAll(src, 1000)
		if err != io.EOF {
			t.Fatalf("%s: %v", format, err)
		}
		checkRoundTrip(t, format, want, got)
		src.Close()
	}
}
