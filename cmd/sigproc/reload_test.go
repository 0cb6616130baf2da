package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sigproc/sigproc/stage"
)

// TestReloadsInOrder drives reloads with a fake config file whose reads can
// be held: reloads apply one at a time, in order, and one overtaken by a
// newer request while reading is dropped, never applied after it.
func TestReloadsInOrder(t *testing.T) {
	type step struct {
		write   int  // the file's version from now on (0: unchanged)
		request bool // a SIGHUP or a file change
		hold    bool // the next read of the file blocks until release
		release bool
		settle  bool // wait until the reloads are idle
	}
	tests := []struct {
		name  string
		steps []step
		want  []int // versions applied, in order
	}{
		{"one after another", []step{
			{write: 1, request: true, settle: true},
			{write: 2, request: true, settle: true},
			{write: 3, request: true, settle: true},
		}, []int{1, 2, 3}},
		{"newer requests during a slow read supersede it", []step{
			{write: 1, hold: true, request: true},
			{write: 2, request: true},
			{write: 3, request: true},
			{release: true, settle: true},
		}, []int{3}},
		{"a burst is served by one read of the newest file", []step{
			{write: 1, request: true, settle: true},
			{write: 2, hold: true, request: true},
			{write: 3, request: true}, {request: true}, {request: true},
			{write: 4, request: true},
			{release: true, settle: true},
		}, []int{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			version, reads, applied := 0, 0, []int(nil)
			var held chan struct{}
			idle := make(chan struct{}, 64)
			load := func() (stage.Chain, error) {
				mu.Lock()
				v, h := version, held
				held = nil
				reads++
				mu.Unlock()
				if h != nil {
					<-h
				}
				return stage.Chain{SampleRate: float64(v)}, nil
			}
			r := newReloads()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.run(ctx, load, func(seq uint64, why string, ch stage.Chain, err error) {
					mu.Lock()
					applied = append(applied, int(ch.SampleRate))
					mu.Unlock()
					idle <- struct{}{}
				}, func(seq, by uint64) {
					if by <= seq {
						t.Errorf("reload %d superseded by %d", seq, by)
					}
				})
			}()
			var release chan struct{}
			for _, s := range tt.steps {
				mu.Lock()
				if s.write != 0 {
					version = s.write
				}
				if s.hold {
					release = make(chan struct{})
					held = release
				}
				mu.Unlock()
				if s.request {
					r.request("test")
				}
				if s.hold { // wait until the held read has begun
					waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return held == nil })
				}
				if s.release {
					close(release)
				}
				if s.settle {
					select {
					case <-idle:
					case <-time.After(10 * time.Second):
						t.Fatal("no reload applied")
					}
				}
			}
			cancel()
			<-done
			if !slices.Equal(applied, tt.want) {
				t.Errorf("applied versions %v, want %v (%d reads)", applied, tt.want, reads)
			}
		})
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestWatchFileFromTheLoad checks the watch against the file as it was
// loaded: a change saved before the watch starts (while the run is still
// starting), in place or by a rename over it, is reported, as is one
// saved while it watches, and a file left alone is not.
func TestWatchFileFromTheLoad(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T, path string) // between the load and the watch
		later func(t *testing.T, path string) // once the watch runs
		want  bool
	}{
		{"saved in place before the watch", func(t *testing.T, p string) { writeInPlace(t, p, "stages: [2]\n") }, nil, true},
		{"renamed over before the watch", func(t *testing.T, p string) { writeFile(t, p, "stages: [3]\n") }, nil, true},
		{"saved while watched", nil, func(t *testing.T, p string) { writeInPlace(t, p, "stages: [2]\n") }, true},
		{"left alone", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			writeInPlace(t, p, "stages: [1]\n")
			old := time.Now().Add(-time.Hour) // so that a rewrite's mtime differs
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			file := statConfig(p)
			if tt.edit != nil {
				tt.edit(t, p)
			}
			ctx, cancel := context.WithCancel(context.Background())
			changed := make(chan struct{}, 8)
			done := make(chan struct{})
			go func() {
				defer close(done)
				watchFile(ctx, file, 5*time.Millisecond, func() { changed <- struct{}{} })
			}()
			if tt.later != nil {
				time.Sleep(20 * time.Millisecond)
				tt.later(t, p)
			}
			var got bool
			select {
			case <-changed:
				got = true
			case <-time.After(300 * time.Millisecond):
			}
			cancel()
			<-done
			if got != tt.want {
				t.Fatalf("change reported %v, want %v", got, tt.want)
			}
		})
	}
}

// writeInPlace rewrites path's content in place, as some editors save.
func writeInPlace(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
