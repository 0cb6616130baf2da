package zmq

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBindIPC: an ipc endpoint's path is bound only when it is free or a
// stale socket file; a live one is refused (not hijacked), and a file that
// is not a socket is left alone.
func TestBindIPC(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string) (check func())
		want  string // "" binds; else in the error
	}{
		{"free path", func(*testing.T, string) func() { return nil }, ""},
		{"stale socket file", func(t *testing.T, path string) func() {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close() // the file stays, nobody listens: a dead sender's
			return nil
		}, ""},
		{"live sender", func(t *testing.T, path string) func() {
			s, err := Bind("ipc://"+path, Push, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return func() { checkDelivers(t, s) }
		}, "address in use"},
		{"live foreign listener", func(t *testing.T, path string) func() {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return nil
		}, "address in use"},
		{"regular file", func(t *testing.T, path string) func() {
			if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func() { checkContent(t, path) }
		}, "not a socket"},
		{"symlink to a regular file", func(t *testing.T, path string) func() {
			target := path + ".target"
			if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return func() { checkContent(t, target); checkContent(t, path) }
		}, "not a socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s")
			check := tt.setup(t, path)
			s, err := Bind("ipc://"+path, Push, 0, 0)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkDelivers(t, s)
				s.Close()
				if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("socket file left after Close: %v", err)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("bound %s, want an error with %q", path, tt.want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if check != nil {
				check()
			}
		})
	}
}

// checkDelivers sends one message through s to a new pull receiver.
func checkDelivers(t *testing.T, s *Sender) {
	t.Helper()
	r, err := Connect(s.Endpoint(), Pull, ReceiverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan []byte, 1)
	go func() {
		msg, _, err := r.Recv(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- append([]byte(nil), msg...)
	}()
	if _, _, err := s.Send(ctx, append(make([]byte, HeadRoom), "hello"...)); err != nil {
		t.Fatal(err)
	}
	if m := <-got; string(m) != "hello" {
		t.Fatalf("received %q", m)
	}
}

func checkContent(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != "precious" {
		t.Errorf("%s: %q, %v: the refused bind changed it", path, b, err)
	}
}
