package pipeline

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestRing(t *testing.T, l Layout) *Ring {
	t.Helper()
	r, err := NewRing(AlignedBytes(l.Size()), l)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLayoutValidate(t *testing.T) {
	tests := []struct {
		name string
		l    Layout
		want string
	}{
		{"ok", Layout{BlockSize: 256, Channels: 1, Slots: 8}, ""},
		{"zero block", Layout{BlockSize: 0, Channels: 1, Slots: 8}, "block size must be > 0"},
		{"negative block", Layout{BlockSize: -1, Channels: 1, Slots: 8}, "block size must be > 0"},
		{"too many values per frame", Layout{BlockSize: 4, Channels: 8193, Slots: 8}, "values per frame must be in 1..8192"},
		{"no values per frame", Layout{BlockSize: 4, Channels: 0, Slots: 8}, "values per frame must be in 1..8192"},
		{"one slot", Layout{BlockSize: 4, Channels: 1, Slots: 1}, "at least 2 slots"},
		{"not pow2", Layout{BlockSize: 4, Channels: 1, Slots: 6}, "power of two"},
		{"huge", Layout{BlockSize: 1 << 29, Channels: 2, Slots: 2}, "larger than 1 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLayoutGeometry(t *testing.T) {
	l := Layout{BlockSize: 100, Channels: 2, Slots: 4}
	// 100 complex samples = 800 bytes, rounded up to 896, plus a 128-byte header.
	if got := l.SlotStride(); got != 128+896 {
		t.Fatalf("stride %d", got)
	}
	if got := l.Size(); got != headerSize+4*(128+896) {
		t.Fatalf("size %d", got)
	}
}

func TestNewRingRejectsBadRegions(t *testing.T) {
	l := Layout{BlockSize: 16, Channels: 1, Slots: 4}
	if _, err := NewRing(AlignedBytes(l.Size()-1), l); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Fatalf("short region: %v", err)
	}
	mem := AlignedBytes(l.Size() + 8)
	if _, err := NewRing(mem[8:], l); err == nil || !strings.Contains(err.Error(), "aligned") {
		t.Fatalf("misaligned region: %v", err)
	}
}

func TestRingPublishNextRelease(t *testing.T) {
	ctx := context.Background()
	l := Layout{BlockSize: 4, Channels: 2, Slots: 2}
	r := newTestRing(t, l)
	for i := 0; i < 5; i++ {
		buf, err := r.Acquire(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) != 8 {
			t.Fatalf("slot has %d values", len(buf))
		}
		for j := range buf {
			buf[j] = float32(i*100 + j)
		}
		if err := r.Publish(3, uint64(10+i), int64(1000+i)); err != nil {
			t.Fatal(err)
		}
		b, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b.Seq != uint64(10+i) || b.Timestamp != int64(1000+i) || len(b.Samples) != 6 {
			t.Fatalf("block %d: %+v", i, b)
		}
		for j, v := range b.Samples {
			if v != float32(i*100+j) {
				t.Fatalf("block %d value %d = %v", i, j, v)
			}
		}
		r.Release()
	}
	if r.Written() != 5 || r.ReadCount() != 5 {
		t.Fatalf("written %d read %d", r.Written(), r.ReadCount())
	}
}

func TestRingFullAndClose(t *testing.T) {
	ctx := context.Background()
	r := newTestRing(t, Layout{BlockSize: 1, Channels: 1, Slots: 2})
	for i := 0; i < 2; i++ {
		if _, err := r.Acquire(ctx, false); err != nil {
			t.Fatal(err)
		}
		if err := r.Publish(1, uint64(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Acquire(ctx, false); !errors.Is(err, ErrFull) {
		t.Fatalf("full ring: %v", err)
	}
	// A waiting Acquire gives up when its context ends.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := r.Acquire(cctx, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting acquire: %v", err)
	}
	r.Close()
	if _, err := r.Acquire(ctx, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := r.Next(ctx); err != nil {
			t.Fatalf("drain %d: %v", i, err)
		}
		r.Release()
	}
	if _, err := r.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after drain: %v", err)
	}
}

func TestRingPublishErrors(t *testing.T) {
	r := newTestRing(t, Layout{BlockSize: 4, Channels: 1, Slots: 2})
	if err := r.Publish(1, 0, 0); err == nil {
		t.Fatal("Publish without Acquire succeeded")
	}
	if _, err := r.Acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(5, 0, 0); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("oversized count: %v", err)
	}
}

func TestRingNextCancel(t *testing.T) {
	r := newTestRing(t, Layout{BlockSize: 1, Channels: 1, Slots: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on empty ring: %v", err)
	}
}

// TestRingConcurrent streams blocks between two goroutines and checks every
// value and sequence number arrives in order; run it with -race.
func TestRingConcurrent(t *testing.T) {
	ctx := context.Background()
	l := Layout{BlockSize: 64, Channels: 1, Slots: 4}
	r := newTestRing(t, l)
	const blocks = 5000
	go func() {
		defer r.Close()
		for i := 0; i < blocks; i++ {
			buf, err := r.Acquire(ctx, true)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range buf {
				buf[j] = float32(i + j)
			}
			if err := r.Publish(l.BlockSize, uint64(i), int64(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	n := 0
	for {
		b, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Seq != uint64(n) {
			t.Fatalf("seq %d, want %d", b.Seq, n)
		}
		for j, v := range b.Samples {
			if v != float32(n+j) {
				t.Fatalf("block %d value %d = %v", n, j, v)
			}
		}
		r.Release()
		n++
	}
	if n != blocks {
		t.Fatalf("received %d blocks, want %d", n, blocks)
	}
}

func BenchmarkRingPushPop(b *testing.B) {
	for _, bs := range []int{256, 4096} {
		b.Run("block="+strconv.Itoa(bs), func(b *testing.B) {
			ctx := context.Background()
			l := Layout{BlockSize: bs, Channels: 1, Slots: 64}
			r, err := NewRing(AlignedBytes(l.Size()), l)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(bs * 4))
			for i := 0; b.Loop(); i++ {
				if _, err := r.Acquire(ctx, false); err != nil {
					b.Fatal(err)
				}
				if err := r.Publish(bs, uint64(i), 0); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Next(ctx); err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
	}
}

// BenchmarkRingSPSC measures hand-off between a producer and a consumer
// goroutine, the pipeline's real use.
func BenchmarkRingSPSC(b *testing.B) {
	ctx := context.Background()
	l := Layout{BlockSize: 256, Channels: 1, Slots: 64}
	r, err := NewRing(AlignedBytes(l.Size()), l)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(256 * 4)
	n := b.N
	go func() {
		defer r.Close()
		for i := 0; i < n; i++ {
			if _, err := r.Acquire(ctx, true); err != nil {
				return
			}
			_ = r.Publish(256, uint64(i), 0)
		}
	}()
	b.ResetTimer()
	for i := 0; i < n; i++ {
		if _, err := r.Next(ctx); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}

// AcquireAhead hands out the slot k after the next free one, waits for the
// consumer to free it, and refuses slots beyond the ring or after Close.
func TestRingAcquireAhead(t *testing.T) {
	ctx := context.Background()
	r := newTestRing(t, Layout{BlockSize: 1, Channels: 1, Slots: 4})
	for k := range 4 {
		buf, err := r.AcquireAhead(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		buf[0] = float32(k)
	}
	if _, err := r.AcquireAhead(ctx, 4); err == nil {
		t.Fatal("a slot beyond the ring was handed out")
	}
	for k := range 4 { // published in order, each acquired again at once
		if _, err := r.Acquire(ctx, false); err != nil {
			t.Fatal(err)
		}
		if err := r.Publish(1, uint64(k), 0); err != nil {
			t.Fatal(err)
		}
	}
	// The ring is full: the next slot waits for the consumer.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := r.AcquireAhead(cctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting acquire: %v", err)
	}
	for k := range 4 {
		b, err := r.Next(ctx)
		if err != nil || b.Samples[0] != float32(k) {
			t.Fatalf("block %d: %v, %v", k, b.Samples, err)
		}
		r.Release()
	}
	if _, err := r.AcquireAhead(ctx, 3); err != nil {
		t.Fatalf("after the consumer freed the ring: %v", err)
	}
	r.Close()
	if _, err := r.AcquireAhead(ctx, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// TestRingParkedSidesWake parks each side of the ring, with no deadline
// that would end the wait, and checks that the other side's call wakes
// it: Publish and Close the consumer's Next, Release the producer's
// Acquire. A lost wake hangs the test until its timeout.
func TestRingParkedSidesWake(t *testing.T) {
	l := Layout{BlockSize: 4, Channels: 1, Slots: 2}
	tests := []struct {
		name  string
		setup func(r *Ring)                 // before the waiting call
		wait  func(r *Ring) error           // the call that parks
		w     func(r *Ring) *waker          // the waker it parks on
		wake  func(t *testing.T, r *Ring)   // the other side's call
		check func(t *testing.T, err error) // the waiting call's result
	}{
		{"publish wakes Next", func(*Ring) {},
			func(r *Ring) error { _, err := r.Next(context.Background()); return err },
			func(r *Ring) *waker { return &r.filled },
			func(t *testing.T, r *Ring) {
				if _, err := r.Acquire(context.Background(), true); err != nil {
					t.Fatal(err)
				}
				if err := r.Publish(4, 0, 0); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
			}},
		{"close wakes Next", func(*Ring) {},
			func(r *Ring) error { _, err := r.Next(context.Background()); return err },
			func(r *Ring) *waker { return &r.filled },
			func(_ *testing.T, r *Ring) { r.Close() },
			func(t *testing.T, err error) {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("Next after Close: %v, want io.EOF", err)
				}
			}},
		{"release wakes Acquire",
			func(r *Ring) {
				for i := range 2 {
					if _, err := r.Acquire(context.Background(), true); err != nil {
						t.Fatal(err)
					}
					if err := r.Publish(4, uint64(i), 0); err != nil {
						t.Fatal(err)
					}
				}
			},
			func(r *Ring) error { _, err := r.Acquire(context.Background(), true); return err },
			func(r *Ring) *waker { return &r.freed },
			func(t *testing.T, r *Ring) {
				if _, err := r.Next(context.Background()); err != nil {
					t.Fatal(err)
				}
				r.Release()
			},
			func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("Acquire: %v", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRing(t, l)
			tt.setup(r)
			done := make(chan error, 1)
			go func() { done <- tt.wait(r) }()
			for !tt.w(r).parked.Load() {
				select {
				case err := <-done:
					t.Fatalf("returned before it parked: %v", err)
				default:
					time.Sleep(100 * time.Microsecond)
				}
			}
			tt.wake(t, r)
			tt.check(t, <-done)
		})
	}
}

// TestRingParkCancel ends a parked Next with its context.
func TestRingParkCancel(t *testing.T) {
	r := newTestRing(t, Layout{BlockSize: 4, Channels: 1, Slots: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Next(ctx); done <- err }()
	for !r.filled.parked.Load() {
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, want context.Canceled", err)
	}
}

// TestRingNoLostWake passes blocks one at a time through a two-slot ring
// with pauses on both sides, so that each side often parks just as the
// other wakes it; any lost wake hangs the run (no deadline ends a park).
func TestRingNoLostWake(t *testing.T) {
	ctx := context.Background()
	r := newTestRing(t, Layout{BlockSize: 4, Channels: 1, Slots: 2})
	const blocks = 3000
	pause := func(i int) {
		switch i % 7 {
		case 0:
			time.Sleep(20 * time.Microsecond)
		case 3:
			runtime.Gosched()
		}
	}
	go func() {
		defer r.Close()
		for i := range blocks {
			if _, err := r.Acquire(ctx, true); err != nil {
				t.Error(err)
				return
			}
			pause(i)
			if err := r.Publish(4, uint64(i), 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for n := 0; ; n++ {
		b, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			if n != blocks {
				t.Fatalf("received %d blocks, want %d", n, blocks)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Seq != uint64(n) {
			t.Fatalf("seq %d, want %d", b.Seq, n)
		}
		pause(n + 3)
		r.Release()
	}
}
