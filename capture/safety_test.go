//go:build unix

package capture_test

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
)

// TestSigMFDatasetSymlinkEscape (issue item 10): a core:dataset that is a
// symlink out of the recording's directory is refused; one inside it is
// read.
func TestSigMFDatasetSymlinkEscape(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, le32f(1, 2), 0o600)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rec.sigmf-meta"), []byte(`{"global":{"core:datatype":"rf32_le","core:sample_rate":1,"core:dataset":"data.bin"}}`), 0o644)
	os.Symlink(outside, filepath.Join(dir, "data.bin"))
	if _, err := capture.OpenSigMF(filepath.Join(dir, "rec.sigmf-meta")); err == nil || !strings.Contains(err.Error(), "outside the recording's directory") {
		t.Fatalf("dataset linked out of the directory: %v", err)
	}
	os.Remove(filepath.Join(dir, "data.bin"))
	os.WriteFile(filepath.Join(dir, "real.bin"), le32f(3), 0o644)
	os.Symlink("real.bin", filepath.Join(dir, "data.bin"))
	src, err := capture.OpenSigMF(filepath.Join(dir, "rec.sigmf-meta"))
	if err != nil {
		t.Fatalf("dataset linked within the directory: %v", err)
	}
	src.Close()
}

// TestSigMFMetaSizeCap (issue item 9): a metadata path that is a device
// with no end fails with a size error instead of exhausting memory.
func TestSigMFMetaSizeCap(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.sigmf-meta")); err != nil {
		t.Skip(err)
	}
	if _, err := capture.OpenSigMF(filepath.Join(dir, "z.sigmf-meta")); !errors.Is(err, capture.ErrFormat) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("meta linked to /dev/zero: %v", err)
	}
}

// TestStdinReadCancels (issue item 3): a read waiting on a silent pipe
// returns when its context is cancelled, and the pipe's own file
// description stays blocking (it is shared with the shell).
func TestStdinReadCancels(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	src, err := capture.NewStdin(r, "rf32_le", capture.Info{SampleRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w.Write(le32f(7)) // one sample, then silence
	ctx, cancel := context.WithCancel(context.Background())
	buf := make([]float32, 4)
	type result struct {
		n   int
		err error
	}
	done, reading := make(chan result, 1), make(chan struct{})
	go func() {
		close(reading)
		n, err := src.Read(ctx, buf) // decodes the 7, then waits on the silence
		done <- result{n, err}
	}()
	<-reading
	cancel() // usually wakes the waiting read; if it came first, Read sees it at once
	first := <-done
	if !errors.Is(first.err, context.Canceled) || first.n > 1 {
		t.Fatalf("Read after cancel: %d values, %v", first.n, first.err)
	}
	flags, _, _ := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_GETFL, 0)
	if flags&syscall.O_NONBLOCK != 0 {
		t.Error("the caller's pipe was left non-blocking")
	}
	// The data after the silence is still read.
	// Nothing is lost: what the cancelled read did not return comes next.
	w.Write(le32f(8))
	w.Close()
	got := append([]float32{}, buf[:first.n]...)
	n, err := src.Read(context.Background(), buf)
	got = append(got, buf[:n]...)
	if len(got) != 2 || got[0] != 7 || got[1] != 8 || err != io.EOF {
		t.Fatalf("samples %v then %v, want [7 8] then EOF", got, err)
	}
}

// TestStdinSniffHoldsNoSamples: the check of a stream's first bytes for a
// WAV or SigMF header neither delays a live stream's first samples until
// it has 512 bytes, nor drops those it held when the run stops before.
func TestStdinSniffHoldsNoSamples(t *testing.T) {
	open := func() (*os.File, *os.File, capture.Source) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		src, err := capture.NewStdin(r, "rf32_le", capture.Info{SampleRate: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close(); r.Close(); w.Close() })
		return r, w, src
	}
	// One sample that cannot start a header comes at once.
	_, w, src := open()
	w.Write(le32f(0.5))
	got := make(chan int, 1)
	go func() {
		buf := make([]float32, 1)
		n, _ := src.Read(context.Background(), buf)
		got <- n
	}()
	select {
	case n := <-got:
		if n != 1 {
			t.Fatalf("read %d samples", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first sample waits for 512 bytes")
	}
	// Bytes that may start a JSON document wait for more; a stop then
	// delivers their whole samples rather than dropping them.
	_, w, src = open()
	brace := math.Float32frombits(0x3f80007b) // first byte '{'
	w.Write(le32f(brace, 2, 3))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	buf := make([]float32, 8)
	n, err := src.Read(ctx, buf)
	if n != 3 || buf[0] != brace || buf[2] != 3 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stopped read: %d samples %v, %v; want the 3 held", n, buf[:n], err)
	}
}

// TestFIFOOpenCancels (issue item 3): opening a FIFO no writer has opened
// is abandoned when the context is cancelled.
func TestFIFOOpenCancels(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := capture.OpenFileContext(ctx, fifo, "rf32_le", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("open of a FIFO without a writer, cancelled: %v", err)
	}
}
