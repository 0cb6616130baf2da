package capture

import (
	"context"
	"sync"
	"testing"
	"time"
)

// slowDeadline is a deadliner whose non-zero deadlines take until release
// to land, like a deadline func the scheduler runs late.
type slowDeadline struct {
	entered, release chan struct{}
	mu               sync.Mutex
	last             time.Time
}

func (s *slowDeadline) SetReadDeadline(t time.Time) error {
	if !t.IsZero() {
		s.entered <- struct{}{}
		<-s.release
	}
	s.mu.Lock()
	s.last = t
	s.mu.Unlock()
	return nil
}

// TestReadWatchWaitsForLateDeadline: a watch of a new context waits for a
// cancelled context's deadline func still running, so that its deadline
// cannot land after the clear and time out the next read (the CI flake of
// TestIIOReadCancel under -race).
func TestReadWatchWaitsForLateDeadline(t *testing.T) {
	s := &slowDeadline{entered: make(chan struct{}), release: make(chan struct{})}
	var w readWatch
	ctx, cancel := context.WithCancel(context.Background())
	w.watch(ctx, s)
	cancel()
	<-s.entered // the deadline func is running, and held
	done := make(chan struct{})
	go func() {
		w.watch(context.Background(), s)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("watch returned while the cancelled context's deadline func was still running")
	case <-time.After(20 * time.Millisecond):
	}
	close(s.release)
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		t.Errorf("deadline after the new watch = %v, want none", s.last)
	}
}
