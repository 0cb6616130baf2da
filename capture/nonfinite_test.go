package capture_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// TestNonFiniteCounted (issue 27 item 8): NaN and ±Inf values read from a
// float source are counted, exactly, whether the samples come from a
// regular file (read by position, in parallel parts when large), a
// stream or a SigMF recording, and the handler is called once, at the
// first; an integer source cannot hold them and counts none.
func TestNonFiniteCounted(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := make([]float32, 10000)
	for i := range x {
		x[i] = float32(i%17) / 17
	}
	x[5], x[4097], x[4098], x[9999] = nan, inf, -inf, nan
	data := le32f(x...)
	dir := t.TempDir()
	raw := filepath.Join(dir, "x.f32")
	os.WriteFile(raw, data, 0o644)
	// A file large enough to be read in parallel parts (512 KiB and up),
	// with NaNs on both sides of the part boundaries.
	big := make([]float32, 1<<20)
	for _, i := range []int{0, 131071, 131072, 262143, 262144, 524287, 524288, 1<<20 - 1} {
		big[i] = nan
	}
	bigPath := filepath.Join(dir, "big.f32")
	os.WriteFile(bigPath, le32f(big...), 0o644)
	rec := filepath.Join(dir, "rec")
	os.WriteFile(rec+".sigmf-data", data, 0o644)
	os.WriteFile(rec+".sigmf-meta", []byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":1000}}`), 0o644)
	tests := []struct {
		name string
		open func() (capture.Source, error)
		want uint64
	}{
		{"rf32 file", func() (capture.Source, error) { return capture.OpenFile(raw, "rf32_le", 1000) }, 4},
		{"rf32 file read in parallel parts", func() (capture.Source, error) { return capture.OpenFile(bigPath, "rf32_le", 1000) }, 8},
		{"cf32 stream", func() (capture.Source, error) {
			return capture.NewRaw(bytes.NewReader(data), "cf32_le", capture.Info{SampleRate: 1000, Complex: true})
		}, 4},
		{"sigmf", func() (capture.Source, error) { return capture.OpenSigMF(rec) }, 4},
		{"ri16 stream", func() (capture.Source, error) {
			return capture.NewRaw(bytes.NewReader(data), "ri16_le", capture.Info{SampleRate: 1000})
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			c, ok := src.(capture.NonFiniteCounter)
			if !ok {
				t.Fatalf("%T does not count non-finite values", src)
			}
			calls, first := 0, uint64(0)
			c.SetNonFiniteHandler(func(total uint64) { calls++; first = total })
			buf := make([]float32, 1<<19)
			for {
				_, err := src.Read(context.Background(), buf)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := c.NonFinite(); got != tt.want {
				t.Errorf("counted %d, want %d", got, tt.want)
			}
			if wantCalls := min(1, int(tt.want)); calls != wantCalls || (calls == 1 && (first < 1 || first > tt.want)) {
				t.Errorf("handler called %d times (first with %d), want %d, with what the first read found", calls, first, wantCalls)
			}
		})
	}
}
