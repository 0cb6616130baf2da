package capture_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// A float32 file is read by position, large reads in parallel stripes; the
// values, the end and a truncated tail must be what the stream decoder gives
// for the same bytes.
func TestRawFileMatchesStream(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	const n = 3<<20/4 + 5 // over the stripe threshold, not a whole stripe
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i) * 0.001))
	}
	full := le32f(vals...)
	dir := t.TempDir()
	tests := []struct {
		format string
		tail   int // bytes cut off the end
	}{
		{"rf32_le", 0}, {"rf32_le", 3}, {"cf32_le", 0}, {"cf32_le", 4}, {"cf32_le", 7},
	}
	for _, tc := range tests {
		data := full[:len(full)-tc.tail]
		if tc.format == "cf32_le" && tc.tail == 0 {
			data = full[:len(full)-4] // whole I/Q pairs
		}
		path := filepath.Join(dir, tc.format+".raw")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		complex := tc.format[0] == 'c'
		for _, block := range []int{1, 1000, 1 << 17, 1 << 20} {
			ref, rerr := readAllFrom(t, func() (capture.Source, error) {
				return capture.NewRaw(bytes.NewReader(data), tc.format, capture.Info{SampleRate: 1, Complex: complex})
			}, block)
			got, gerr := readAllFrom(t, func() (capture.Source, error) { return capture.OpenFile(path, tc.format, 1) }, block)
			if !equal(got, ref) {
				t.Fatalf("%s tail %d block %d: file gives %d values, stream %d, or they differ", tc.format, tc.tail, block, len(got), len(ref))
			}
			if (rerr == io.EOF) != (gerr == io.EOF) || errors.Is(rerr, capture.ErrTruncated) != errors.Is(gerr, capture.ErrTruncated) ||
				rerr.Error() != strings.ReplaceAll(gerr.Error(), path, "input stream") {
				t.Fatalf("%s tail %d block %d: file ends with %v, stream with %v", tc.format, tc.tail, block, gerr, rerr)
			}
		}
	}
}

func readAllFrom(t *testing.T, open func() (capture.Source, error), block int) ([]float32, error) {
	t.Helper()
	src, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return readAll(src, block)
}

// A SigMF recording's samples are read from core:sample_start to the end
// of the data, skipping the header bytes and trailing bytes.
func TestSigMFFileRange(t *testing.T) {
	capture.SetParallelReads(3)
	defer capture.SetParallelReads(0)
	vals := make([]float32, 2*(1<<19)+2*3)
	for i := range vals {
		vals[i] = float32(i)
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "rec")
	data := append(append([]byte("HEADER!!"), le32f(vals...)...), 1, 2, 3)
	if err := os.WriteFile(base+".sigmf-data", data, 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `{"global":{"core:datatype":"cf32_le","core:sample_rate":1000,"core:version":"1.0.0","core:trailing_bytes":3},
"captures":[{"core:sample_index":0,"core:sample_start":3,"core:header_bytes":8}],"annotations":[]}`
	if err := os.WriteFile(base+".sigmf-meta", []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAllFrom(t, func() (capture.Source, error) { return capture.OpenSigMF(base) }, 1<<18)
	if err != io.EOF || !equal(got, vals[6:]) {
		t.Fatalf("got %d values (%v), want %d from sample 3", len(got), err, len(vals)-6)
	}
}

func TestRawFileReadAllocs(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	path := filepath.Join(t.TempDir(), "x.f32")
	if err := os.WriteFile(path, make([]byte, 64<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	buf := make([]float32, 1<<20) // 4 MiB: striped
	src.Read(context.Background(), buf)
	if a := testing.AllocsPerRun(8, func() { src.Read(context.Background(), buf) }); a != 0 {
		t.Fatalf("%v allocs per Read, want 0", a)
	}
}
