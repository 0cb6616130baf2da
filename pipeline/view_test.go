package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
	"unsafe"
)

// viewSource is a countSource whose samples also lie in one slice that it
// hands out in place.
type viewSource struct {
	x         []float32
	pos       int
	regionErr error
	views     int
}

func (s *viewSource) Read(ctx context.Context, dst []float32) (int, error) {
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

func (s *viewSource) Region() ([]byte, error) {
	if s.regionErr != nil {
		return nil, s.regionErr
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s.x[0])), 4*len(s.x)), nil
}

func (s *viewSource) View(_ context.Context, n int) ([]float32, error) {
	s.views++
	k := min(n, len(s.x)-s.pos)
	v := s.x[s.pos : s.pos+k]
	s.pos += k
	if k < n {
		return v, io.EOF
	}
	return v, nil
}

// regionBackend is scaleBackend taking views when take is set, and
// checking that every block it is handed lies where it says.
type regionBackend struct {
	scaleBackend
	take    bool
	region  []byte
	inPlace int
}

func (b *regionBackend) UseRegion(region []byte, encoding string) (bool, error) {
	b.region = region
	return b.take && encoding == "", nil
}

func (b *regionBackend) Next(ctx context.Context) (Output, error) {
	if blk, err := b.ring.Next(ctx); err == nil && len(blk.Samples) > 0 && b.region != nil {
		p := uintptr(unsafe.Pointer(&blk.Samples[0]))
		lo := uintptr(unsafe.Pointer(&b.region[0]))
		if p >= lo && p < lo+uintptr(len(b.region)) {
			b.inPlace++
		}
	}
	return b.scaleBackend.Next(ctx)
}

func TestRunTakesViewsWhenTheBackendDoes(t *testing.T) {
	const block, ch = 100, 2
	x := make([]float32, ch*(block*30+7))
	for i := range x {
		x[i] = float32(i)
	}
	for _, tc := range []struct {
		name      string
		take      bool
		regionErr error
		inPlace   bool
	}{
		{"views", true, nil, true},
		{"backend copies", false, nil, false},
		{"source cannot map", true, errors.New("not mappable"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &viewSource{x: x, regionErr: tc.regionErr}
			be := &regionBackend{take: tc.take}
			snk := &sliceSink{}
			st, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Complex: true, Slots: 4}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.SamplesIn != uint64(len(x)/ch) || st.SamplesOut != st.SamplesIn || st.Gaps != 0 {
				t.Fatalf("stats %+v", st)
			}
			for i, v := range snk.got {
				if v != 2*x[i] {
					t.Fatalf("value %d = %v, want %v", i, v, 2*x[i])
				}
			}
			if (be.inPlace > 0) != tc.inPlace || (src.views > 0) != tc.inPlace {
				t.Fatalf("blocks in place %d, views %d; want in place %v", be.inPlace, src.views, tc.inPlace)
			}
		})
	}
}

// Under the drop policy a view that finds the ring full is skipped and
// counted, exactly as a copied block is.
func TestRunDropsViewsExactly(t *testing.T) {
	const block, blocks, slots = 16, 40, 4
	x := make([]float32, block*blocks)
	gate, entered := make(chan struct{}), make(chan struct{})
	src := &gatedViewSource{viewSource: viewSource{x: x}, entered: entered, gate: gate}
	be := &regionBackend{take: true}
	snk := &sliceSink{gate: gate, entered: entered}
	st, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Slots: slots, Policy: PolicyDrop}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantDropped := uint64(blocks - 1 - slots)
	if st.DroppedBlocks != wantDropped || st.Gaps != wantDropped || st.SamplesOut != (blocks-wantDropped)*block {
		t.Fatalf("stats %+v, want %d dropped", st, wantDropped)
	}
}

// gatedViewSource hands out view 1 only once the sink holds block 0, and
// opens the sink's gate at the end, as countSource does for the copy path.
type gatedViewSource struct {
	viewSource
	entered, gate chan struct{}
}

func (s *gatedViewSource) View(ctx context.Context, n int) ([]float32, error) {
	if s.views == 1 {
		<-s.entered
	}
	v, err := s.viewSource.View(ctx, n)
	if err == io.EOF {
		close(s.gate)
	}
	return v, err
}

// encodedSource holds int16 samples, read decoded or viewed as stored.
type encodedSource struct {
	raw   []byte
	pos   int // bytes
	views int
}

func (s *encodedSource) Read(_ context.Context, dst []float32) (int, error) {
	n := min(len(dst), (len(s.raw)-s.pos)/2)
	for i := range n {
		dst[i] = decodeInt16(s.raw[s.pos+2*i:])
	}
	s.pos += 2 * n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

func decodeInt16(b []byte) float32 { return float32(int16(uint16(b[0])|uint16(b[1])<<8)) / 32768 }

func (s *encodedSource) Region() ([]byte, error) { return s.raw, nil }
func (s *encodedSource) View(context.Context, int) ([]float32, error) {
	return nil, errors.New("stored as int16")
}
func (s *encodedSource) Encoding() string { return EncInt16 }
func (s *encodedSource) ViewEncoded(_ context.Context, n int) ([]byte, error) {
	s.views++
	k := min(2*n, len(s.raw)-s.pos)
	b := s.raw[s.pos : s.pos+k]
	s.pos += k
	if k < 2*n {
		return b, io.EOF
	}
	return b, nil
}

// convertBackend is scaleBackend taking int16 regions, converting each
// stored block itself, and checking that it lies in the region.
type convertBackend struct {
	scaleBackend
	take     bool
	region   []byte
	inPlace  int
	encoding string
}

func (b *convertBackend) UseRegion(region []byte, encoding string) (bool, error) {
	b.region, b.encoding = region, encoding
	return b.take && encoding == EncInt16, nil
}

func (b *convertBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil || blk.Raw == nil {
		return b.scaleBackend.Next(ctx)
	}
	if blk.Samples != nil {
		return Output{}, errors.New("an encoded block with samples")
	}
	p, lo := uintptr(unsafe.Pointer(&blk.Raw[0])), uintptr(unsafe.Pointer(&b.region[0]))
	if p >= lo && p < lo+uintptr(len(b.region)) {
		b.inPlace++
	}
	out := b.out[:len(blk.Raw)/2]
	for i := range out {
		out[i] = 2 * decodeInt16(blk.Raw[2*i:])
	}
	b.ring.Release()
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

// TestRunTakesEncodedViews: a backend that converts the source's encoding
// gets the stored bytes in place, and the output and counters are the
// read path's; one that does not is handed decoded samples.
func TestRunTakesEncodedViews(t *testing.T) {
	const block, ch = 100, 2
	raw := make([]byte, 2*ch*(block*30+7))
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	for _, take := range []bool{true, false} {
		src := &encodedSource{raw: raw}
		be := &convertBackend{take: take}
		snk := &sliceSink{}
		st, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Complex: true, Slots: 4}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st.SamplesIn != uint64(len(raw)/2/ch) || st.SamplesOut != st.SamplesIn || st.Gaps != 0 || be.encoding != EncInt16 {
			t.Fatalf("take %v: stats %+v, encoding %q", take, st, be.encoding)
		}
		for i, v := range snk.got {
			if want := 2 * decodeInt16(raw[2*i:]); v != want {
				t.Fatalf("take %v: value %d = %v, want %v", take, i, v, want)
			}
		}
		if (be.inPlace > 0) != take || (src.views > 0) != take {
			t.Fatalf("take %v: blocks in place %d, views %d", take, be.inPlace, src.views)
		}
	}
}

// costedSource is a viewSource that times its mapping against a read
// (MapCoster) as told.
type costedSource struct {
	viewSource
	touch, read time.Duration
	err         error
	asked       int
	delay       time.Duration // how long the timing takes
}

func (s *costedSource) MapCost(n int) (time.Duration, time.Duration, error) {
	s.asked++
	time.Sleep(s.delay)
	if n != MapCostBytes {
		return 0, 0, fmt.Errorf("timed %d bytes, want %d", n, MapCostBytes)
	}
	return s.touch, s.read, s.err
}

// choosingBackend is a regionBackend that prefers a read when touching
// costs more than twice reading (ReadChooser).
type choosingBackend struct{ regionBackend }

func (b *choosingBackend) PreferRead(touch, read time.Duration) bool { return touch > 2*read }

// TestRunReadsWhenTheMappingCostsMore: a backend that chooses (ReadChooser)
// gets the source's region only when the source's own timing
// (MapCoster) says touching it is the cheaper way in; a source that cannot
// time it, or fails to, keeps the views; a backend that does not choose
// is never asked. The output is the same either way.
func TestRunReadsWhenTheMappingCostsMore(t *testing.T) {
	const block = 64
	x := make([]float32, block*20)
	for i := range x {
		x[i] = float32(i)
	}
	milli := time.Millisecond
	for _, tc := range []struct {
		name        string
		touch, read time.Duration
		err         error
		choose      bool
		inPlace     bool
	}{
		{"touch cheaper: views", 1 * milli, 4 * milli, nil, true, true},
		{"touch dearer: read", 9 * milli, 4 * milli, nil, true, false},
		{"at the backend's ratio: views", 8 * milli, 4 * milli, nil, true, true},
		{"timing failed: views", 9 * milli, 4 * milli, errors.New("file too short"), true, true},
		{"backend does not choose: views", 9 * milli, 4 * milli, nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &costedSource{viewSource: viewSource{x: x}, touch: tc.touch, read: tc.read, err: tc.err}
			var be Backend = &regionBackend{take: true}
			if tc.choose {
				be = &choosingBackend{regionBackend{take: true}}
			}
			snk := &sliceSink{}
			if _, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Slots: 4}, Options{}); err != nil {
				t.Fatal(err)
			}
			if len(snk.got) != len(x) {
				t.Fatalf("%d values out, want %d", len(snk.got), len(x))
			}
			for i, v := range snk.got {
				if v != 2*x[i] {
					t.Fatalf("value %d = %v, want %v", i, v, 2*x[i])
				}
			}
			if (src.views > 0) != tc.inPlace || (src.asked > 0) != tc.choose {
				t.Fatalf("views %d, timed %d times; want in place %v, asked %v", src.views, src.asked, tc.inPlace, tc.choose)
			}
		})
	}
}

// The mapping's timing is part of the run's startup, not of its wall.
func TestMapCostCountsAsStartup(t *testing.T) {
	const delay = 200 * time.Millisecond
	x := make([]float32, 64*20)
	src := &costedSource{viewSource: viewSource{x: x}, touch: time.Millisecond, read: time.Millisecond, delay: delay}
	st, err := Run(context.Background(), src, &choosingBackend{regionBackend{take: true}}, &sliceSink{}, Config{BlockSize: 64, Slots: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Startup < delay || st.Wall >= delay {
		t.Fatalf("startup %v, wall %v: the timing's %v belongs to the startup", st.Startup, st.Wall, delay)
	}
}
