package capture_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// A float32 file read by position that is truncated during the run ends
// with ErrTruncated, saying its sizes, after the whole samples still in
// it: never a silent io.EOF (a short output) and never a crash. One that
// grows is read to its new end. SigMF data is read to its declared end,
// and a file cut short of it errs the same way.
func TestReadTruncatedDuringRun(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	const n = 1 << 20 // 4 MiB: large reads go in parallel parts
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	data := le32f(vals...)
	const header = 16 // SigMF header bytes before the samples
	tests := []struct {
		name   string
		sigmf  bool
		block  int   // values a Read
		before int   // values read before the file changes
		size   int64 // the file's new size in bytes (the data file's, for SigMF)
		grow   bool  // append data instead of truncating
	}{
		{"at open, to nothing", false, 1 << 16, 0, 0, false},
		{"at open, to half", false, 1 << 20, 0, 2 << 20, false},
		{"after reads, behind the offset", false, 1 << 16, 3 << 18, 1 << 20, false},
		{"after reads, ahead of the offset", false, 1 << 18, 1 << 18, 3 << 20, false},
		{"after reads, inside a sample", false, 1000, 5000, 3<<20 + 2, false},
		{"one value short", false, 1 << 20, 0, 4<<20 - 4, false},
		{"sigmf, after reads", true, 1 << 16, 1 << 18, header + 3<<20, false},
		{"sigmf, to its header", true, 1 << 17, 0, header, false},
		{"grows", false, 1 << 16, 1 << 18, 8 << 20, true},
	}
	for _, tc := range tests {
		for _, mapped := range []bool{false, true} {
			if mapped && tc.grow {
				continue // a mapping ends where the file did
			}
			name := tc.name
			if mapped {
				name += "/mapped"
			}
			t.Run(name, func(t *testing.T) {
				src, path := openTestFile(t, data, tc.sigmf, header)
				defer src.Close()
				if mapped { // mapped for a backend that then declined it: the reads go on
					if _, err := src.(interface{ Region() ([]byte, error) }).Region(); err != nil {
						t.Fatal(err)
					}
				}
				buf := make([]float32, tc.block)
				got := readAtLeast(t, src, buf, tc.before)
				want := vals
				growOrCut(t, path, data, tc.grow, tc.size)
				if tc.grow {
					want = append(append([]float32{}, vals...), vals...)
				}
				rest, err := readAll(src, tc.block)
				if tc.grow {
					got = append(got, rest...)
					if err != io.EOF || !equal(got, want) {
						t.Fatalf("%d values (%v), want %d and io.EOF", len(got), err, len(want))
					}
					return
				}
				if !errors.Is(err, capture.ErrTruncated) {
					t.Fatalf("%d values, then %v; want ErrTruncated", len(got)+len(rest), err)
				}
				// The reads end at the new size, or where they stood when the
				// file was cut behind them.
				start := int64(0)
				if tc.sigmf {
					start = header
				}
				now := max(tc.size, start+4*int64(len(got)))
				msg := fmt.Sprintf("capture: %s: the file was truncated during the run: %d bytes now, %d when the run began", path, now, start+int64(len(data)))
				if err.Error() != msg {
					t.Errorf("error %q\nwant  %q", err, msg)
				}
				// What was read is the whole samples still there.
				keep := (now - start) / 4
				if tc.sigmf {
					keep &^= 1 // cf32: whole I/Q pairs
				}
				if got = append(got, rest...); !equal(got, vals[:keep]) {
					t.Fatalf("%d values read, want the first %d", len(got), keep)
				}
				if _, err2 := src.Read(context.Background(), buf); err2 != err {
					t.Errorf("the error is not sticky: then %v", err2)
				}
			})
		}
	}
}

// openTestFile writes data as a rf32_le file, or as the cf32_le data of a
// SigMF recording after header bytes, and opens it.
func openTestFile(t *testing.T, data []byte, sigmf bool, header int) (capture.Source, string) {
	t.Helper()
	dir := t.TempDir()
	if !sigmf {
		path := filepath.Join(dir, "x.f32")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := capture.OpenFile(path, "rf32_le", 1)
		if err != nil {
			t.Fatal(err)
		}
		return src, path
	}
	base := filepath.Join(dir, "rec")
	if err := os.WriteFile(base+".sigmf-data", append(make([]byte, header), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `{"global":{"core:datatype":"cf32_le","core:sample_rate":1000,"core:version":"1.0.0"},
"captures":[{"core:sample_index":0,"core:header_bytes":` + strconv.Itoa(header) + `}],"annotations":[]}`
	if err := os.WriteFile(base+".sigmf-meta", []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenSigMF(base)
	if err != nil {
		t.Fatal(err)
	}
	return src, base + ".sigmf-data"
}

// readAtLeast reads src in buf-sized reads until at least n values came.
func readAtLeast(t *testing.T, src capture.Source, buf []float32, n int) []float32 {
	t.Helper()
	var got []float32
	for len(got) < n {
		k, err := src.Read(context.Background(), buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:k]...)
	}
	return got
}

// growOrCut appends data to the file at path when grow, else truncates it
// to size bytes.
func growOrCut(t *testing.T, path string, data []byte, grow bool, size int64) {
	t.Helper()
	if !grow {
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}
