package par

import (
	"errors"
	"sync"
	"testing"
)

func TestDoCoversTheRangeOnce(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	for _, tc := range []struct{ n, minPart, align int }{
		{0, 1, 1}, {1, 1, 1}, {10, 100, 1}, {1000, 10, 1}, {1 << 20, 4096, 4096}, {1<<20 + 3, 1000, 64},
	} {
		seen := make([]int, tc.n)
		var mu sync.Mutex
		parts := 0
		err := p.Do(tc.n, tc.minPart, tc.align, func(lo, hi int) error {
			mu.Lock()
			parts++
			mu.Unlock()
			if lo%tc.align != 0 {
				t.Errorf("part at %d not aligned to %d", lo, tc.align)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d covered %d times", tc.n, i, c)
			}
		}
		if parts > 4 || (tc.n >= 4*tc.minPart && parts < 2) {
			t.Errorf("n=%d minPart=%d: %d parts", tc.n, tc.minPart, parts)
		}
	}
}

func TestDoJoinsErrors(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	e := errors.New("part failed")
	err := p.Do(100, 10, 1, func(lo, hi int) error {
		if lo > 0 {
			return e
		}
		return nil
	})
	if !errors.Is(err, e) {
		t.Fatalf("got %v, want %v", err, e)
	}
}

func TestDoAllocatesNothing(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	f := func(lo, hi int) error { return nil }
	p.Do(1<<20, 1024, 1, f)
	if a := testing.AllocsPerRun(100, func() { p.Do(1<<20, 1024, 1, f) }); a != 0 {
		t.Fatalf("%v allocs per Do", a)
	}
}

// TestShareRunsEveryPart: Share runs part 0 on the caller and each other
// part once, returns their errors, and refuses more parts than it has
// goroutines for.
func TestShareRunsEveryPart(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	for n := 0; n <= 4; n++ {
		seen := make([]int, n)
		err := p.Share(n, func(lo, hi int) error {
			if hi != lo+1 {
				t.Errorf("part [%d, %d)", lo, hi)
			}
			seen[lo]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: part %d ran %d times", n, i, c)
			}
		}
	}
	want := errors.New("part 2")
	if err := p.Share(3, func(lo, _ int) error {
		if lo == 2 {
			return want
		}
		return nil
	}); !errors.Is(err, want) {
		t.Errorf("err %v, want %v", err, want)
	}
	if err := p.Share(5, func(int, int) error { return nil }); err == nil {
		t.Error("5 parts on 3 goroutines and the caller: no error")
	}
}
