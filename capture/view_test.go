//go:build unix

package capture_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
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

// A mapped file truncated during the run: the next View that would touch
// a page gone ends the run with ErrTruncated, sticky, and never a SIGBUS.
// The fstat before each view catches it; with the fstat skipped, the
// scan's fault on the pages gone is recovered into the same error, on
// the pool's goroutines (large views) or the caller's (small ones). A file
// already cut when Region is called is refused, and reading it ends with
// the error too.
func TestViewTruncatedDuringRun(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	const n = 4 << 20 // 16 MiB
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	data := le32f(vals...)
	path := filepath.Join(t.TempDir(), "x.f32")
	tests := []struct {
		name   string
		fault  bool  // skip the fstat: the fault recovery must catch it
		block  int   // values a view
		before int   // views taken before the cut
		size   int64 // bytes left
	}{
		{"fstat, to nothing", false, 1 << 20, 1, 0},
		{"fstat, behind the offset", false, 1 << 20, 2, 1 << 20},
		{"fstat, inside the next view", false, 1 << 20, 1, 6<<20 + 100},
		{"fstat, one value short", false, 1 << 20, 3, 16<<20 - 4},
		{"fault, to nothing, parts on the pool", true, 1 << 20, 1, 0},
		{"fault, inside the next view, parts on the pool", true, 1 << 20, 1, 6<<20 + 100},
		{"fault, behind the offset, on the caller", true, 1000, 5, 4096},
		{"fault, to nothing, on the caller", true, 1000, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := writeAndOpen(t, path, data)
			if tc.fault {
				capture.SkipViewSizeCheck(r)
			}
			if _, err := r.Region(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			at := 0
			for range tc.before {
				v, err := r.View(ctx, tc.block)
				if err != nil || !equal(v, vals[at:at+tc.block]) {
					t.Fatalf("view at %d: %d values, %v", at, len(v), err)
				}
				at += len(v)
			}
			if err := os.Truncate(path, tc.size); err != nil {
				t.Fatal(err)
			}
			v, err := r.View(ctx, tc.block)
			if !errors.Is(err, capture.ErrTruncated) || v != nil {
				t.Fatalf("after the cut: %d values, %v; want none and ErrTruncated", len(v), err)
			}
			msg := fmt.Sprintf("capture: %s: the file was truncated during the run: %d bytes now, %d when the run began", path, tc.size, len(data))
			if err.Error() != msg {
				t.Errorf("error %q\nwant  %q", err, msg)
			}
			if _, err2 := r.View(ctx, tc.block); err2 != err {
				t.Errorf("the error is not sticky: then %v", err2)
			}
			if got := r.NonFinite(); got != 0 {
				t.Errorf("%d non-finite values counted in a finite file", got)
			}
		})
	}
	t.Run("before Region", func(t *testing.T) {
		src := writeAndOpen(t, path, data)
		if err := os.Truncate(path, 8<<20); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Region(); !errors.Is(err, capture.ErrTruncated) {
			t.Fatalf("Region: %v, want ErrTruncated", err)
		}
		got, err := readAll(src, 1<<20)
		if !errors.Is(err, capture.ErrTruncated) || !equal(got, vals[:2<<20]) {
			t.Fatalf("read %d values after a refused Region, %v", len(got), err)
		}
	})
}

// Views count NaN and ±Inf values as Read does, also across the parts a
// large view is scanned in, and call the handler once.
func TestViewCountsNonFinite(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := make([]float32, 3<<20+5)
	for i := range x {
		x[i] = float32(i%17) / 17
	}
	special := map[int]float32{0: nan, 131071: inf, 131072: -inf, 262143: nan, 262144: nan, 1<<20 - 1: -inf,
		1 << 20: inf, 1<<21 + 12345: nan, 3 << 20: -inf, 3<<20 + 4: nan}
	for i, v := range special {
		x[i] = v
	}
	want := uint64(0) // counted independently of the scan
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			want++
		}
	}
	if want != uint64(len(special)) {
		t.Fatalf("%d specials written, %d found", len(special), want)
	}
	path := filepath.Join(t.TempDir(), "x.f32")
	if err := os.WriteFile(path, le32f(x...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, block := range []int{1000, 1 << 16, 1 << 21} { // 1 << 21: an 8 MiB view, in parts
		for _, view := range []bool{false, true} {
			r, calls := openCounted(t, path)
			var got []float32
			var err error
			if view {
				got, err = viewAll(t, r, block)
			} else {
				got, err = readAll(r, block)
			}
			if err != io.EOF || len(got) != len(x) {
				t.Fatalf("block %d view %v: %d values, %v", block, view, len(got), err)
			}
			if n := r.NonFinite(); n != want || *calls != 1 {
				t.Errorf("block %d view %v: counted %d, want %d; handler called %d times, want once", block, view, n, want, *calls)
			}
		}
	}
}

// openCounted opens path as an rf32_le file, closed when the test ends,
// whose non-finite handler counts its calls in *calls.
func openCounted(t *testing.T, path string) (r *capture.Raw, calls *int) {
	t.Helper()
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	calls = new(int)
	r = src.(*capture.Raw)
	r.SetNonFiniteHandler(func(uint64) { *calls++ })
	return r, calls
}

// LeaveScan leaves the scan of each view to its reader: View and
// ViewReserved count nothing, the check returned counts what it is given
// and calls the handler once, allocating nothing, and Read still counts
// what it reads. The check of a view whose file was truncated since is
// ErrTruncated. Before Region, or for integers, nothing is left.
func TestLeaveScan(t *testing.T) {
	x := make([]float32, 1<<16)
	x[7], x[1<<15], x[len(x)-1] = float32(math.NaN()), float32(math.Inf(-1)), float32(math.NaN())
	dir := t.TempDir()
	path := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(path, le32f(x...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"view", "reserved view", "read"} {
		r, calls := openCounted(t, path)
		if r.LeaveScan() != nil {
			t.Fatal("a scan left before Region")
		}
		if _, err := r.Region(); err != nil {
			t.Fatal(err)
		}
		check := r.LeaveScan()
		if check == nil {
			t.Fatal("a float32 file left no scan")
		}
		var got []float32
		var err error
		switch how {
		case "view":
			got, err = viewAll(t, r, 1<<12)
		case "reserved view":
			for {
				at, n, ok := r.Reserve(1 << 12)
				if !ok {
					break
				}
				var v []float32
				v, err = r.ViewReserved(at, n)
				got = append(got, v...)
				if err != nil {
					break
				}
			}
		case "read":
			got, err = readAll(r, 1<<12)
		}
		counted := uint64(0)
		if how == "read" {
			counted = 3
		}
		if err != io.EOF || len(got) != len(x) || r.NonFinite() != counted {
			t.Fatalf("%s: %d values, %v; %d counted before the check, want %d, io.EOF and %d", how, len(got), err, r.NonFinite(), len(x), counted)
		}
		if how != "read" {
			for _, part := range [][]float32{got[:1<<15], got[1<<15:]} {
				if err := check(part); err != nil {
					t.Fatalf("%s: check: %v", how, err)
				}
			}
		}
		if n := r.NonFinite(); n != 3 || *calls != 1 {
			t.Errorf("%s: counted %d, want 3; handler called %d times, want once", how, n, *calls)
		}
		if a := testing.AllocsPerRun(10, func() { check(got[:1<<10]) }); how == "view" && a != 0 {
			t.Errorf("the check allocates %.1f times a call", a)
		}
	}

	r, _ := openCounted(t, path)
	if _, err := r.Region(); err != nil {
		t.Fatal(err)
	}
	check := r.LeaveScan()
	v, err := r.View(context.Background(), len(x))
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := check(v); !errors.Is(err, capture.ErrTruncated) {
		t.Errorf("the check of a view of a file truncated since: %v, want ErrTruncated", err)
	}

	ipath := filepath.Join(dir, "x.cs8")
	if err := os.WriteFile(ipath, make([]byte, 1<<12), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(ipath, "cs8", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.(*capture.Raw).Region(); err != nil {
		t.Fatal(err)
	}
	if src.(*capture.Raw).LeaveScan() != nil {
		t.Error("a cs8 file left a scan")
	}
}

// A view allocates nothing: its fstat, and its scan in parts on the pool.
func TestRawViewAllocs(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	path := filepath.Join(t.TempDir(), "x.f32")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(48 << 20) // sparse: reads as zeros
	f.Close()
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := src.(*capture.Raw)
	if _, err := r.Region(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.View(ctx, 1<<20); err != nil { // 4 MiB: scanned in parts
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(8, func() {
		if _, err := r.View(ctx, 1<<20); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocs per View, want 0", a)
	}
}

// writeAndOpen writes data to path and opens it as an rf32_le source,
// closed at the end of the test.
func writeAndOpen(t *testing.T, path string, data []byte) *capture.Raw {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "rf32_le", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src.(*capture.Raw)
}

// MapCost times a mapped file's first pages against a read of the same
// amount, and refuses what it cannot time: before Region, a file without
// twice the bytes left, and a file truncated under the mapping (an
// error wrapping ErrTruncated, not a crash). It moves nothing: the views
// start where they would have.
func TestRawMapCost(t *testing.T) {
	const n = 64 << 10
	vals := make([]float32, 2*n/4+1024)
	for i := range vals {
		vals[i] = float32(i)
	}
	dir := t.TempDir()
	tests := []struct {
		name     string
		values   int  // the file's float32 values
		region   bool // Region first
		truncate bool // cut the file to a page after Region
		want     string
	}{
		{"timed", len(vals), true, false, ""},
		{"before Region", len(vals), false, false, "MapCost before Region"},
		{"too short", 2*n/4 - 1, true, false, "too little left"},
		{"truncated under the mapping", len(vals), true, true, "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, le32f(vals[:tc.values]...), 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := capture.OpenFile(path, "rf32_le", 1)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			raw := src.(*capture.Raw)
			if tc.region {
				if _, err := raw.Region(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.truncate {
				if err := os.Truncate(path, 4096); err != nil {
					t.Fatal(err)
				}
			}
			touch, read, err := raw.MapCost(n)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				if tc.truncate && !errors.Is(err, capture.ErrTruncated) {
					t.Fatalf("err %v does not wrap ErrTruncated", err)
				}
				return
			}
			if err != nil || touch <= 0 || read <= 0 {
				t.Fatalf("touch %v, read %v, err %v", touch, read, err)
			}
			v, err := raw.View(context.Background(), 4)
			if err != nil || len(v) != 4 || v[0] != 0 || v[3] != 3 {
				t.Fatalf("first view after MapCost: %v %v", v, err)
			}
		})
	}
}
