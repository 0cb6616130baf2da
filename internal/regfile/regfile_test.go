//go:build unix

package regfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "taps.txt")
	if err := os.WriteFile(reg, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name, path string
		want       error // nil: opens and reads
	}{
		{"regular", reg, nil},
		{"symlink to a regular file", link, nil},
		{"FIFO without a writer", fifo, ErrNotRegular},
		{"character device", "/dev/zero", ErrNotRegular},
		{"directory", dir, ErrNotRegular},
		{"unix socket", sock, ErrNotRegular},
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			f, err := Open(tt.path)
			if took := time.Since(start); took > time.Second {
				t.Errorf("Open took %v", took)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				b := make([]byte, 8)
				if n, err := f.Read(b); err != nil || string(b[:n]) != "1\n" {
					t.Fatalf("read %q, %v", b[:n], err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			t.Log(err)
		})
	}
}
