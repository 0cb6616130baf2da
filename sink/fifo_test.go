//go:build unix

package sink_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sigproc/sigproc/sink"
)

// TestFIFOOutput: a FIFO output waits for its reader, says so once, and
// gives up when the context ends; once a reader comes, what is written
// reaches it whole, however slowly it reads.
func TestFIFOOutput(t *testing.T) {
	plan := func(t *testing.T, waits *atomic.Int32) (*sink.Plan, string) {
		fifo := filepath.Join(t.TempDir(), "out.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: fifo, Format: "rf32_le",
			OnWaitReader: func(string) { waits.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		return p, fifo
	}
	t.Run("no reader", func(t *testing.T) {
		var waits atomic.Int32
		p, _ := plan(t, &waits)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		s, err := p.Create(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Create = %v, %v; want the context's error", s, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Create returned %v after its context ended", took)
		}
		if n := waits.Load(); n != 1 {
			t.Errorf("OnWaitReader called %d times, want 1", n)
		}
	})
	t.Run("reader comes late and reads slowly", func(t *testing.T) {
		var waits atomic.Int32
		p, fifo := plan(t, &waits)
		const n = 1 << 18 // 1 MiB: more than a pipe holds
		got := make(chan []byte, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			r, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			defer r.Close()
			time.Sleep(100 * time.Millisecond) // the pipe fills meanwhile
			b, _ := io.ReadAll(r)
			got <- b
		}()
		s, err := p.Create(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(i)
		}
		if err := s.Write(in); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		b := <-got
		if len(b) != 4*n {
			t.Fatalf("reader got %d bytes, want %d", len(b), 4*n)
		}
		for i := range n {
			if v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); v != in[i] {
				t.Fatalf("sample %d = %v, want %v", i, v, in[i])
			}
		}
		if waits.Load() != 1 {
			t.Errorf("OnWaitReader called %d times, want 1", waits.Load())
		}
	})
}
