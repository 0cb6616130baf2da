//go:build unix

package capture_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/capture"
)

// viewAll takes src's samples through Region and View in blocks of block
// samples, checking that every view lies in the region.
func viewAll(t *testing.T, src interface {
	capture.Source
	Region() ([]byte, error)
	View(context.Context, int) ([]float32, error)
}, block int) ([]float32, error) {
	t.Helper()
	region, err := src.Region()
	if err != nil {
		t.Fatal(err)
	}
	lo := uintptr(unsafe.Pointer(&region[0]))
	hi := lo + uintptr(len(region))
	var out []float32
	for {
		v, err := src.View(context.Background(), block*src.Info().Channels())
		if len(v) > 0 {
			p := uintptr(unsafe.Pointer(&v[0]))
			if p < lo || p+4*uintptr(len(v)) > hi {
				t.Fatalf("view at %#x+%d outside the region [%#x, %#x)", p, 4*len(v), lo, hi)
			}
		}
		out = append(out, v...)
		if err != nil {
			return out, err
		}
		if len(v) == 0 {
			t.Fatal("View returned no values and no error")
		}
	}
}

// Views of a mapped float32 file give what Read gives, the same end and
// the same truncation error.
func TestRawViewMatchesRead(t *testing.T) {
	vals := make([]float32, 2*70001)
	for i := range vals {
		vals[i] = float32(i) * 0.5
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		format string
		tail   int
		pages  bool // the file is a whole number of pages: the mapping ends exactly at its end
	}{{"cf32_le", 0, false}, {"cf32_le", 5, false}, {"rf32_le", 0, false}, {"rf32_le", 2, false}, {"cf32_le", 0, true}, {"rf32_le", 0, true}} {
		path := filepath.Join(dir, tc.format)
		data := append(le32f(vals...), make([]byte, tc.tail)...)
		if tc.pages {
			data = data[:len(data)/4096*4096]
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, block := range []int{1, 777, 1 << 16, 1 << 20} {
			ref, rerr := readAllFrom(t, func() (capture.Source, error) { return capture.OpenFile(path, tc.format, 1) }, block)
			src, err := capture.OpenFile(path, tc.format, 1)
			if err != nil {
				t.Fatal(err)
			}
			got, gerr := viewAll(t, src.(*capture.Raw), block)
			src.Close()
			if !equal(got, ref) || (rerr == io.EOF) != (gerr == io.EOF) || rerr.Error() != gerr.Error() {
				t.Fatalf("%s tail %d block %d: view %d values (%v), read %d (%v)", tc.format, tc.tail, block, len(got), gerr, len(ref), rerr)
			}
		}
	}
}

// A SigMF recording is viewed from core:sample_start, past its header;
// a header that leaves the samples misaligned is refused (and read).
func TestSigMFView(t *testing.T) {
	dir := t.TempDir()
	vals := make([]float32, 2*5000)
	for i := range vals {
		vals[i] = float32(i)
	}
	for _, tc := range []struct {
		header int
		ok     bool
	}{{8, true}, {4096 + 16, true}, {2, false}} {
		base := filepath.Join(dir, "rec")
		data := append(make([]byte, tc.header), le32f(vals...)...)
		if err := os.WriteFile(base+".sigmf-data", data, 0o644); err != nil {
			t.Fatal(err)
		}
		meta := `{"global":{"core:datatype":"cf32_le","core:sample_rate":1000,"core:version":"1.0.0"},
"captures":[{"core:sample_index":0,"core:sample_start":1,"core:header_bytes":` + itoa(tc.header) + `}],"annotations":[]}`
		if err := os.WriteFile(base+".sigmf-meta", []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := capture.OpenSigMF(base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Region(); (err == nil) != tc.ok {
			t.Fatalf("header %d: Region error %v, want ok=%v", tc.header, err, tc.ok)
		}
		if tc.ok {
			got, err := viewAll(t, src, 999)
			if err != io.EOF || !equal(got, vals[2:]) {
				t.Fatalf("header %d: %d values (%v), want %d", tc.header, len(got), err, len(vals)-2)
			}
		}
		src.Close()
	}
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// A memory source is viewed in place when its samples are page-aligned.
func TestMemoryView(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	x := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), len(mem)/4)
	for i := range x {
		x[i] = float32(i)
	}
	src, err := capture.NewMemory(x, capture.Info{SampleRate: 1, Complex: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := viewAll(t, src, 1000)
	if err != io.EOF || !equal(got, x) {
		t.Fatalf("%d values (%v)", len(got), err)
	}
	src.Close()
	if _, err := src.View(context.Background(), 2); !errors.Is(err, capture.ErrClosed) {
		t.Fatalf("View after Close: %v", err)
	}
	// Go-heap samples are not page-aligned in general: refused, so read.
	heap, _ := capture.NewMemory(make([]float32, 1001*2), capture.Info{SampleRate: 1, Complex: true})
	if _, err := heap.Region(); err == nil {
		t.Log("a heap slice happened to be page-aligned")
	}
}

// A file of whole pages viewed in blocks that divide it: the view after
// the last block is empty and ends the stream (it used to index one past
// the mapping).
func TestRawViewEndsOnAPageBoundary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.f32")
	if err := os.WriteFile(path, le32f(make([]float32, 2048)...), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := viewAll(t, src.(*capture.Raw), 512)
	if err != io.EOF || len(got) != 2048 {
		t.Fatalf("%d values, %v", len(got), err)
	}
}
