package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countSource yields values 0,1,2,... up to total samples, then io.EOF.
type countSource struct {
	total, pos int
	ch         int
	failAt     int // if > 0, fail once pos reaches it
	onEOF      func()
	reads      int
	beforeRead func(n int) // called before read n (0-based)
}

func (s *countSource) Read(ctx context.Context, dst []float32) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.failAt > 0 && s.pos >= s.failAt {
		return 0, errors.New("device vanished")
	}
	if s.beforeRead != nil {
		s.beforeRead(s.reads)
	}
	s.reads++
	n := 0
	for n+s.ch <= len(dst) && s.pos < s.total {
		for c := 0; c < s.ch; c++ {
			dst[n] = float32(s.pos*s.ch + c)
			n++
		}
		s.pos++
	}
	if n < len(dst) {
		if s.onEOF != nil {
			s.onEOF()
		}
		return n, io.EOF
	}
	return n, nil
}

// scaleBackend multiplies by 2 so the test sees that the backend ran.
type scaleBackend struct {
	ring *Ring
	out  []float32
}

func (b *scaleBackend) Name() string { return "scale" }
func (b *scaleBackend) Start(_ context.Context, l Layout) (*Ring, error) {
	r, err := NewRing(AlignedBytes(l.Size()), l)
	b.ring, b.out = r, make([]float32, l.BlockValues())
	return r, err
}
func (b *scaleBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	out := b.out[:len(blk.Samples)]
	for i, v := range blk.Samples {
		out[i] = 2 * v
	}
	b.ring.Release()
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}
func (b *scaleBackend) Close() error { return nil }

type sliceSink struct {
	mu      sync.Mutex
	got     []float32
	writes  int
	gate    chan struct{} // if set, the first Write waits for it
	entered chan struct{} // if set, closed when the first Write starts
	failAt  int           // fail on this write (1-based)
}

func (s *sliceSink) Write(v []float32) error {
	s.mu.Lock()
	s.writes++
	w := s.writes
	s.mu.Unlock()
	if w == 1 && s.entered != nil {
		close(s.entered)
	}
	if w == 1 && s.gate != nil {
		<-s.gate
	}
	if s.failAt > 0 && w == s.failAt {
		return errors.New("disk full")
	}
	s.mu.Lock()
	s.got = append(s.got, v...)
	s.mu.Unlock()
	return nil
}

func TestRunDeliversEverySampleInOrder(t *testing.T) {
	tests := []struct {
		name               string
		total, block, ch   int
		max                int64
		wantOut, wantBlock int
	}{
		{"exact blocks", 1024, 256, 1, 0, 1024, 4},
		{"partial last block", 1000, 256, 1, 0, 1000, 4},
		{"complex", 777, 64, 2, 0, 777, 13},
		{"max samples mid-block", 1000, 256, 1, 300, 300, 2},
		{"max samples on boundary", 1000, 100, 1, 500, 500, 5},
		{"empty source", 0, 16, 1, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &countSource{total: tt.total, ch: tt.ch}
			snk := &sliceSink{}
			st, err := Run(context.Background(), src, &scaleBackend{}, snk,
				Config{BlockSize: tt.block, Complex: tt.ch == 2, Slots: 4, MaxSamples: tt.max}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.SamplesIn != uint64(tt.wantOut) || st.SamplesOut != uint64(tt.wantOut) || st.Blocks != uint64(tt.wantBlock) {
				t.Fatalf("stats %+v, want %d samples in %d blocks", st, tt.wantOut, tt.wantBlock)
			}
			if st.DroppedBlocks != 0 || st.Gaps != 0 {
				t.Fatalf("unexpected loss: %+v", st)
			}
			if len(snk.got) != tt.wantOut*tt.ch {
				t.Fatalf("sink got %d values", len(snk.got))
			}
			for i, v := range snk.got {
				if v != float32(2*i) {
					t.Fatalf("value %d = %v, want %v", i, v, 2*i)
				}
			}
		})
	}
}

// TestRunDropPolicyCountsExactly holds the sink on its first block while the
// source runs to its end: the ring absorbs Slots blocks and every other block
// must be counted as dropped, and as gaps, exactly.
func TestRunDropPolicyCountsExactly(t *testing.T) {
	const block, blocks, slots = 16, 40, 4
	gate, entered := make(chan struct{}), make(chan struct{})
	src := &countSource{total: block * blocks, ch: 1, onEOF: func() { close(gate) }}
	// Block 1 is read only once the consumer holds block 0 in the sink,
	// which has released its slot, so the count below is exact.
	src.beforeRead = func(n int) {
		if n == 1 {
			<-entered
		}
	}
	snk := &sliceSink{gate: gate, entered: entered}
	st, err := Run(context.Background(), src, &scaleBackend{}, snk,
		Config{BlockSize: block, Slots: slots, Policy: PolicyDrop}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Block 0 is taken by the consumer (its slot released), blocks 1..4 fill
	// the ring, blocks 5..39 find it full.
	wantDropped := uint64(blocks - 1 - slots)
	if st.DroppedBlocks != wantDropped || st.DroppedSamples != wantDropped*block {
		t.Fatalf("dropped %d blocks (%d samples), want %d", st.DroppedBlocks, st.DroppedSamples, wantDropped)
	}
	if st.Gaps != wantDropped {
		t.Fatalf("gaps %d, want %d", st.Gaps, wantDropped)
	}
	if st.SamplesIn != block*blocks || st.SamplesOut != (blocks-wantDropped)*block {
		t.Fatalf("stats %+v", st)
	}
}

func TestRunBlockPolicyLosesNothingWithSlowSink(t *testing.T) {
	const block, blocks = 16, 40
	gate := make(chan struct{})
	src := &countSource{total: block * blocks, ch: 1}
	snk := &sliceSink{gate: gate}
	go func() { time.Sleep(20 * time.Millisecond); close(gate) }()
	st, err := Run(context.Background(), src, &scaleBackend{}, snk,
		Config{BlockSize: block, Slots: 4, Policy: PolicyBlock}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.DroppedBlocks != 0 || st.Gaps != 0 || st.SamplesOut != block*blocks {
		t.Fatalf("stats %+v", st)
	}
}

// pacedSource never ends; it delivers a block every millisecond.
type pacedSource struct{ n int }

func (s *pacedSource) Read(ctx context.Context, dst []float32) (int, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	for i := range dst {
		dst[i] = float32(s.n)
		s.n++
	}
	return len(dst), nil
}

func TestRunCancelDrainsAndReportsInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	snk := &sliceSink{}
	var progress atomic.Int64
	st, err := Run(ctx, &pacedSource{}, &scaleBackend{}, snk, Config{BlockSize: 8, Slots: 4},
		Options{Progress: func(Stats) { progress.Add(1) }, ProgressEvery: time.Millisecond})
	if err != nil {
		t.Fatalf("cancelled run returned %v", err)
	}
	if !st.Interrupted {
		t.Fatal("Interrupted not set")
	}
	if st.SamplesOut == 0 || st.SamplesOut != st.SamplesIn || uint64(len(snk.got)) != st.SamplesOut {
		t.Fatalf("stats %+v, sink %d", st, len(snk.got))
	}
	if progress.Load() == 0 {
		t.Fatal("progress never called")
	}
}

func TestRunErrors(t *testing.T) {
	t.Run("source fails", func(t *testing.T) {
		st, err := Run(context.Background(), &countSource{total: 1000, ch: 1, failAt: 64}, &scaleBackend{}, &sliceSink{},
			Config{BlockSize: 16, Slots: 4}, Options{})
		if err == nil || !strings.Contains(err.Error(), "device vanished") {
			t.Fatalf("err %v", err)
		}
		if st.SamplesOut != 64 {
			t.Fatalf("samples before the failure must still be written: %+v", st)
		}
	})
	t.Run("source and backend fail", func(t *testing.T) {
		// A backend failing because its source went away (a file
		// truncated under a GPU copying it in place) names both.
		_, err := Run(context.Background(), &countSource{total: 1000, ch: 1, failAt: 64}, &eofFailsBackend{}, &sliceSink{},
			Config{BlockSize: 16, Slots: 4}, Options{})
		if err == nil || !strings.Contains(err.Error(), "device vanished") || !strings.Contains(err.Error(), "copy failed") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("sink fails", func(t *testing.T) {
		_, err := Run(context.Background(), &countSource{total: 1000, ch: 1}, &scaleBackend{}, &sliceSink{failAt: 3},
			Config{BlockSize: 16, Slots: 4}, Options{})
		if err == nil || !strings.Contains(err.Error(), "write sink: disk full") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bad config", func(t *testing.T) {
		for _, cfg := range []Config{{BlockSize: 0}, {BlockSize: 16, Slots: 3}, {BlockSize: 16, MaxSamples: -1}} {
			if _, err := Run(context.Background(), &countSource{}, &scaleBackend{}, &sliceSink{}, cfg, Options{}); err == nil {
				t.Fatalf("config %+v accepted", cfg)
			}
		}
	})
	t.Run("odd complex source", func(t *testing.T) {
		_, err := Run(context.Background(), oddSource{}, &scaleBackend{}, &sliceSink{},
			Config{BlockSize: 16, Complex: true, Slots: 4}, Options{})
		if err == nil || !strings.Contains(err.Error(), "multiple of 2") {
			t.Fatalf("err %v", err)
		}
	})
}

// eofFailsBackend is scaleBackend failing where the stream ends.
type eofFailsBackend struct{ scaleBackend }

func (b *eofFailsBackend) Next(ctx context.Context) (Output, error) {
	out, err := b.scaleBackend.Next(ctx)
	if errors.Is(err, io.EOF) {
		return out, errors.New("copy failed")
	}
	return out, err
}

type oddSource struct{}

func (oddSource) Read(context.Context, []float32) (int, error) { return 3, nil }

func ExampleRun() {
	src := &countSource{total: 1000, ch: 1}
	snk := &sliceSink{}
	st, err := Run(context.Background(), src, &scaleBackend{}, snk, Config{BlockSize: 256}, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.SamplesIn, st.SamplesOut, st.Blocks, st.DroppedBlocks, snk.got[999])
	// Output: 1000 1000 4 0 1998
}

// timedBackend is scaleBackend measuring its device time (DeviceTimer).
type timedBackend struct {
	scaleBackend
	busy DeviceBusy
	ok   bool
}

func (b *timedBackend) DeviceBusy() (DeviceBusy, bool) { return b.busy, b.ok }

// TestRunReportsDeviceBusy: the stats carry a DeviceTimer's times when it
// measured them, and none otherwise.
func TestRunReportsDeviceBusy(t *testing.T) {
	busy := DeviceBusy{CopyIn: 3 * time.Millisecond, Kernel: time.Millisecond, CopyOut: 2 * time.Millisecond}
	for _, measured := range []bool{true, false} {
		st, err := Run(context.Background(), &countSource{total: 1000, ch: 1}, &timedBackend{busy: busy, ok: measured}, &sliceSink{},
			Config{BlockSize: 16, Slots: 4}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (st.Device != nil) != measured || (measured && *st.Device != busy) {
			t.Fatalf("measured %v: device %+v", measured, st.Device)
		}
		in, kernel, out, ok := st.DeviceShares()
		if ok != measured || (ok && (in <= kernel || out <= kernel || in <= 0)) {
			t.Fatalf("measured %v: shares %g %g %g %v over %v", measured, in, kernel, out, ok, st.Wall)
		}
	}
}
