package pipeline

import (
	"context"
	"errors"
	"io"
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
