package pipeline

import (
	"context"
	"testing"
)

// TestBackoffParksAfter: a waiting side looks 63 times, then a plain
// backoff yields until its 256th wait before it parks, and an eager one
// (a producer on a full ring) parks at its 64th.
func TestBackoffParksAfter(t *testing.T) {
	for _, tc := range []struct {
		eager bool
		want  int
	}{{false, 256}, {true, 64}} {
		b := backoff{eager: tc.eager}
		w := waker{ch: make(chan struct{}, 1)}
		parkedAt := 0
		for i := 1; i <= 300 && parkedAt == 0; i++ {
			// park asks waiting first; false returns at once.
			err := b.wait(context.Background(), &w, func() bool { parkedAt = i; return false })
			if err != nil {
				t.Fatal(err)
			}
		}
		if parkedAt != tc.want {
			t.Errorf("eager %v: parked at wait %d, want %d", tc.eager, parkedAt, tc.want)
		}
	}
}
