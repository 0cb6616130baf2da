package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"

	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/internal/wavtest"
)

// A float32 file read several blocks at once gives what Read gives one
// block at a time: every sample in order, its NaN counted once, and the
// end (a partial sample, MaxSamples) reported alike.
func TestRunReadsAFileSeveralBlocksAtOnce(t *testing.T) {
	const ch = 2 // cf32
	x := make([]float32, ch*(1000*37+13))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = rng.Float32()
	}
	x[5], x[40001] = float32(math.NaN()), float32(math.Inf(-1))
	raw := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	for _, tc := range []struct {
		name    string
		tail    int // bytes of a partial sample after the last whole one
		readers int
		block   int
		slots   int
		max     int64
		region  string // "refused": the backend maps the file and refuses it; "views": takes it in place; "shared": every other window
	}{
		{"one at a time", 0, 1, 1000, 8, 0, ""},
		{"two", 0, 2, 1000, 8, 0, ""},
		{"seven, odd block", 0, 7, 999, 16, 0, ""},
		{"readers beyond the ring", 0, 14, 1000, 4, 0, ""},
		{"block larger than the file", 0, 4, 1 << 16, 4, 0, ""},
		{"max samples inside a block", 0, 5, 1000, 8, 12345, ""},
		{"partial sample at the end", 3, 4, 1000, 8, 0, ""},
		{"partial sample, one at a time", 3, 1, 1000, 8, 0, ""},
		{"region refused", 0, 4, 1000, 8, 0, "refused"},
		{"views", 0, 4, 1000, 8, 0, "views"},
		{"views, partial sample at the end", 3, 4, 999, 8, 0, "views"},
		{"views, max samples", 0, 3, 1000, 8, 12345, "views"},
		{"shared", 0, 4, 1000, 8, 0, "shared"},
		{"shared, partial sample at the end", 3, 5, 777, 16, 0, "shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.cf32")
			if err := os.WriteFile(path, append(slices.Clone(raw), make([]byte, tc.tail)...), 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := capture.OpenFile(path, "cf32_le", 1e6)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			snk := &sliceSink{}
			var be Backend = &scaleBackend{}
			rb := &regionBackend{take: tc.region != "refused"}
			switch tc.region {
			case "refused", "views":
				be = rb
			case "shared":
				be = &shareBackend{regionBackend: rb, window: 20000}
			}
			st, err := Run(context.Background(), src, be, snk,
				Config{BlockSize: tc.block, Complex: true, Slots: tc.slots, Readers: tc.readers, MaxSamples: tc.max}, Options{})
			if tc.tail > 0 {
				if !errors.Is(err, capture.ErrTruncated) {
					t.Fatalf("err %v, want the partial sample reported", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			want := len(x) / ch
			if tc.max > 0 {
				want = int(tc.max)
			}
			if st.SamplesIn != uint64(want) || st.SamplesOut != st.SamplesIn || st.Gaps != 0 {
				t.Fatalf("stats %+v, want %d samples", st, want)
			}
			for i, v := range snk.got {
				if w := 2 * x[i]; v != w && !(math.IsNaN(float64(v)) && math.IsNaN(float64(w))) {
					t.Fatalf("value %d = %v, want %v", i, v, w)
				}
			}
			blocks := int(st.Blocks)
			if int(st.BlocksInPlace) != rb.inPlace {
				t.Fatalf("stats count %d blocks in place, the backend %d", st.BlocksInPlace, rb.inPlace)
			}
			switch {
			case tc.region == "views" && rb.inPlace != blocks,
				tc.region == "shared" && (rb.inPlace == 0 || rb.inPlace == blocks),
				tc.region == "refused" && rb.inPlace != 0:
				t.Fatalf("%d of %d blocks in place", rb.inPlace, blocks)
			}
			nf := uint64(2)
			if tc.max > 0 {
				nf = 1
			}
			if got := src.(capture.NonFiniteCounter).NonFinite(); got != nf {
				t.Fatalf("non-finite values counted %d, want %d", got, nf)
			}
		})
	}
}

// A file cut short under the reads is an error, after the blocks before
// the cut: read (by a backend that maps the file or not), viewed in place,
// or both.
func TestRunReadsATruncatedFileSeveralBlocksAtOnce(t *testing.T) {
	for _, region := range []string{"", "refused", "views", "shared"} {
		t.Run(region, func(t *testing.T) { testTruncatedParallel(t, region) })
	}
}

func testTruncatedParallel(t *testing.T, region string) {
	path := filepath.Join(t.TempDir(), "x.cf32")
	if err := os.WriteFile(path, make([]byte, 8*100000), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.OpenFile(path, "cf32_le", 1e6)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	snk := &sliceSink{gate: make(chan struct{}), entered: make(chan struct{})}
	go func() {
		<-snk.entered
		if err := os.Truncate(path, 8*30000); err != nil {
			t.Error(err)
		}
		close(snk.gate)
	}()
	var be Backend = &scaleBackend{}
	rb := &regionBackend{take: region != "refused"}
	switch region {
	case "refused", "views":
		be = rb
	case "shared":
		be = &shareBackend{regionBackend: rb, window: 20000}
	}
	st, err := Run(context.Background(), src, be, snk,
		Config{BlockSize: 1000, Complex: true, Slots: 8, Readers: 4}, Options{})
	if !errors.Is(err, capture.ErrTruncated) {
		t.Fatalf("err %v, want the truncation", err)
	}
	if st.SamplesIn > 30000 || st.SamplesOut != st.SamplesIn {
		t.Fatalf("stats %+v", st)
	}
}

// shareBackend takes its region in place but for every other window of
// window bytes, which it has read into the ring: a view there fails the
// run.
type shareBackend struct {
	*regionBackend
	window int64
}

func (b *shareBackend) InPlace(off, n int64) bool { return inEvenWindows(off, n, b.window) }

func (b *shareBackend) Next(ctx context.Context) (Output, error) {
	if blk, err := b.ring.Next(ctx); err == nil && len(blk.Samples) > 0 {
		if err := checkInPlace(b.region, unsafe.Pointer(&blk.Samples[0]), 4*len(blk.Samples), b.window); err != nil {
			return Output{}, err
		}
	}
	return b.regionBackend.Next(ctx)
}

// inEvenWindows reports whether the n bytes at off lie in even windows of
// window bytes only.
func inEvenWindows(off, n, window int64) bool {
	return off/window%2 == 0 && (off+n-1)/window%2 == 0
}

// checkInPlace fails a block of n bytes at p that lies in region but
// touches an odd window: one the backend has read.
func checkInPlace(region []byte, p unsafe.Pointer, n int, window int64) error {
	off := int64(uintptr(p) - uintptr(unsafe.Pointer(&region[0])))
	if off >= 0 && off < int64(len(region)) && !inEvenWindows(off, int64(n), window) {
		return fmt.Errorf("a block at %d in place, in a window read into the ring", off)
	}
	return nil
}

// Integer files read several blocks at once give what Read gives one
// block at a time: decoded on the readers (read), or as stored bytes to a
// backend that converts them, in place (views) or for every other window
// read into the ring (shared).
func TestRunReadsIntegersSeveralBlocksAtOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	raw := make([]byte, 4*(1000*23+11)+2) // ci16: 4 bytes a sample, and a partial one
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	run := func(t *testing.T, format, region string, readers int) ([]float32, Stats, int) {
		path := filepath.Join(t.TempDir(), "x."+format)
		b := raw
		if format == "cs8" || format == "cu8" {
			b = raw[:len(raw)-1] // 2 bytes a sample: a partial one still
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := capture.OpenFile(path, format, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		cb := &convertBackend{take: region != ""}
		var be Backend = &scaleBackend{}
		switch region {
		case "views":
			be = cb
		case "shared":
			be = &shareConvertBackend{convertBackend: cb, window: 20000}
		}
		snk := &sliceSink{}
		st, err := Run(context.Background(), src, be, snk, Config{BlockSize: 997, Complex: true, Slots: 8, Readers: readers}, Options{})
		if !errors.Is(err, capture.ErrTruncated) {
			t.Fatalf("err %v, want the partial sample reported", err)
		}
		return snk.got, st, cb.inPlace
	}
	for _, tc := range []struct{ format, region string }{
		{"ci16_le", ""}, {"cs8", ""}, {"cu8", ""}, {"ci16_le", "views"}, {"ci16_le", "shared"},
	} {
		t.Run(tc.format+" "+tc.region, func(t *testing.T) {
			want, wst, _ := run(t, tc.format, tc.region, 1)
			got, st, inPlace := run(t, tc.format, tc.region, 4)
			if st.SamplesIn != wst.SamplesIn || st.SamplesOut != st.SamplesIn || st.Gaps != 0 || len(got) != len(want) {
				t.Fatalf("stats %+v, one at a time %+v", st, wst)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("value %d = %v, one at a time %v", i, got[i], want[i])
				}
			}
			if int(st.BlocksInPlace) != inPlace {
				t.Fatalf("stats count %d blocks in place, the backend %d", st.BlocksInPlace, inPlace)
			}
			switch blocks := int(st.Blocks); {
			case tc.region == "views" && inPlace != blocks,
				tc.region == "shared" && (inPlace == 0 || inPlace == blocks):
				t.Fatalf("%d of %d blocks in place", inPlace, blocks)
			}
		})
	}
}

// shareConvertBackend is convertBackend taking its region in place but
// for every other window of window bytes.
type shareConvertBackend struct {
	*convertBackend
	window int64
}

func (b *shareConvertBackend) InPlace(off, n int64) bool { return inEvenWindows(off, n, b.window) }

func (b *shareConvertBackend) Next(ctx context.Context) (Output, error) {
	if blk, err := b.ring.Next(ctx); err == nil && len(blk.Raw) > 0 {
		if err := checkInPlace(b.region, unsafe.Pointer(&blk.Raw[0]), len(blk.Raw), b.window); err != nil {
			return Output{}, err
		}
	}
	return b.convertBackend.Next(ctx)
}

// A source that hands out views one at a time, to a backend that takes
// only part of its region in place: the other views are copied into the
// ring, values or stored bytes.
func TestRunSharesViewsOneAtATime(t *testing.T) {
	const block, ch = 100, 2
	x := make([]float32, ch*(block*30+7))
	for i := range x {
		x[i] = float32(i)
	}
	rb := &regionBackend{take: true}
	snk := &sliceSink{}
	st, err := Run(context.Background(), &viewSource{x: x}, &shareBackend{regionBackend: rb, window: 4000}, snk,
		Config{BlockSize: block, Complex: true, Slots: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.SamplesOut != uint64(len(x)/ch) || rb.inPlace == 0 || rb.inPlace == int(st.Blocks) || int(st.BlocksInPlace) != rb.inPlace {
		t.Fatalf("stats %+v, %d blocks in place", st, rb.inPlace)
	}
	for i, v := range snk.got {
		if v != 2*x[i] {
			t.Fatalf("value %d = %v, want %v", i, v, 2*x[i])
		}
	}

	raw := make([]byte, 2*ch*(block*30+7))
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	cb := &convertBackend{take: true}
	snk = &sliceSink{}
	st, err = Run(context.Background(), &encodedSource{raw: raw}, &shareConvertBackend{convertBackend: cb, window: 2000}, snk,
		Config{BlockSize: block, Complex: true, Slots: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.SamplesOut != uint64(len(raw)/2/ch) || cb.inPlace == 0 || cb.inPlace == int(st.Blocks) || int(st.BlocksInPlace) != cb.inPlace {
		t.Fatalf("encoded: stats %+v, %d blocks in place", st, cb.inPlace)
	}
	for i, v := range snk.got {
		if want := 2 * decodeInt16(raw[2*i:]); v != want {
			t.Fatalf("encoded: value %d = %v, want %v", i, v, want)
		}
	}
}

// shortSource is a ParallelSource whose third reservation comes back
// short, with no error: the run fails rather than lose samples.
type shortSource struct {
	countSource
	next int64
}

func (s *shortSource) Reserve(n int) (int64, int, bool) {
	at := s.next
	s.next += int64(n)
	return at, n, true
}

func (s *shortSource) ReadReserved(dst []float32, at int64) (int, error) {
	if at == 2*int64(len(dst)) {
		return len(dst) / 2, nil
	}
	return len(dst), nil
}

func TestRunRefusesAShortReservation(t *testing.T) {
	_, err := Run(context.Background(), &shortSource{}, &scaleBackend{}, &sliceSink{},
		Config{BlockSize: 100, Slots: 8, Readers: 2, MaxSamples: 1000}, Options{})
	if err == nil || !strings.Contains(err.Error(), "reserved came back") {
		t.Fatalf("err %v, want the short read reported", err)
	}
}

// A WAV recording whose data ends in a partial sample gives the same
// output and reports it alike, read one block at a time or several at
// once, decoded or taken as stored.
func TestRunReportsAPartialSampleAlike(t *testing.T) {
	data := make([]byte, 4*5000+2) // 16-bit stereo, and half a sample
	for i := range data {
		data[i] = byte(i * 13)
	}
	h := wavtest.Header(2, 16, 48000, len(data))
	path := filepath.Join(t.TempDir(), "x.wav")
	if err := os.WriteFile(path, append(h, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	// Read and decoded, or taken as stored in place, or shared (the data
	// starts 44 bytes into the mapping), one block at a time or several.
	var msgs []string
	var outs [][]float32
	for _, region := range []string{"", "views", "shared"} {
		for _, readers := range []int{1, 4} {
			src, err := capture.OpenFile(path, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			cb := &convertBackend{take: region != ""}
			var be Backend = cb
			if region == "shared" {
				be = &shareConvertBackend{convertBackend: cb, window: 4096}
			}
			snk := &sliceSink{}
			st, err := Run(context.Background(), src, be, snk,
				Config{BlockSize: 512, Channels: 2, Slots: 8, Readers: readers}, Options{})
			src.Close()
			if !errors.Is(err, capture.ErrTruncated) || st.SamplesIn != 5000 {
				t.Fatalf("%q, readers %d: err %v, %d samples", region, readers, err, st.SamplesIn)
			}
			if region != "" && cb.inPlace == 0 {
				t.Fatalf("%q, readers %d: no block in place", region, readers)
			}
			msgs, outs = append(msgs, err.Error()), append(outs, snk.got)
		}
	}
	for i := range msgs {
		if msgs[i] != msgs[0] {
			t.Fatalf("run %d: %s\nthe first: %s", i, msgs[i], msgs[0])
		}
		if !slices.Equal(outs[i], outs[0]) {
			t.Fatalf("run %d: its output differs from the first's", i)
		}
	}
}

// BenchmarkRunSeveralBlocksAtOnce runs a page-cached cf32 file of 16 or
// 256 blocks of 64 Ki samples through a null backend, 4 blocks at once,
// read or viewed: allocs/op is the run's, the same for both sizes, so the
// blocks allocate nothing.
func BenchmarkRunSeveralBlocksAtOnce(b *testing.B) {
	const block = 1 << 16
	for _, blocks := range []int{16, 256} {
		path := filepath.Join(b.TempDir(), "x.cf32")
		if err := os.WriteFile(path, make([]byte, 8*block*blocks), 0o644); err != nil {
			b.Fatal(err)
		}
		for _, region := range []string{"read", "views"} {
			b.Run(fmt.Sprintf("%s/%d blocks", region, blocks), func(b *testing.B) {
				b.SetBytes(int64(8 * block * blocks))
				b.ReportAllocs()
				for b.Loop() {
					src, err := capture.OpenFile(path, "cf32_le", 1e6)
					if err != nil {
						b.Fatal(err)
					}
					var be Backend = &nullBackend{}
					if region == "views" {
						be = &nullRegionBackend{}
					}
					if _, err := Run(context.Background(), src, be, discard{}, Config{BlockSize: block, Complex: true, Slots: 8, Readers: 4}, Options{}); err != nil {
						b.Fatal(err)
					}
					src.Close()
				}
			})
		}
	}
}

// nullBackend releases every block unread, with an empty output.
type nullBackend struct{ ring *Ring }

func (b *nullBackend) Name() string { return "null" }
func (b *nullBackend) Start(_ context.Context, l Layout) (*Ring, error) {
	r, err := NewRing(AlignedBytes(l.Size()), l)
	b.ring = r
	return r, err
}
func (b *nullBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	b.ring.Release()
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, In: len(blk.Samples) / b.ring.Layout().Channels}, nil
}
func (b *nullBackend) Close() error { return nil }

// nullRegionBackend is nullBackend taking its region in place.
type nullRegionBackend struct{ nullBackend }

func (b *nullRegionBackend) UseRegion([]byte, string) (bool, error) { return true, nil }

type discard struct{}

func (discard) Write([]float32) error { return nil }

// parallelViewSource is a shortSource that also hands out views in place
// (ParallelViewer), for parallelSource's choice.
type parallelViewSource struct {
	shortSource
	viewSource
}

func (s *parallelViewSource) Read(ctx context.Context, dst []float32) (int, error) {
	return s.shortSource.Read(ctx, dst)
}

func (s *parallelViewSource) ViewReserved(int64, int) ([]float32, error) { return nil, nil }

// TestDefaultReaders: how many blocks a ParallelSource is read at once by
// default. On many CPUs the CPUs but two; on 2 or 3, two for a source
// read into the ring, and one at a time for views (their first touch is
// spread over the backend's cores instead). It sets GOMAXPROCS: no test of
// this package runs in parallel.
func TestDefaultReaders(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	l := Layout{BlockSize: 1024, Channels: 2, Slots: 64}
	for _, tc := range []struct {
		procs int
		view  bool
		want  int
	}{
		{1, false, 0}, {2, false, 2}, {3, false, 2}, {4, false, 2}, {16, false, 14}, {64, false, 0}, // 14 of 62: fewer than half
		{2, true, 0}, {3, true, 0}, {16, true, 14},
	} {
		runtime.GOMAXPROCS(tc.procs)
		src := &parallelViewSource{}
		var v Viewer
		if tc.view {
			v = src
		}
		p, n := parallelSource(src, v, nil, Config{Policy: PolicyBlock}, l)
		if n != tc.want || (p != nil) != (tc.want > 0) {
			t.Errorf("%d CPUs, views %v: %d readers, want %d", tc.procs, tc.view, n, tc.want)
		}
	}
}
