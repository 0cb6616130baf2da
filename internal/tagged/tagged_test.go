package tagged

import (
	"errors"
	"math"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 256} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i)*0.5 - 3
		}
		src = append(src, float32(math.Inf(-1)))
		dst := make([]uint64, len(src)+3) // padded words
		Write(dst, src, 0xdeadbeef)
		for i, w := range dst {
			if uint32(w>>32) != 0xdeadbeef {
				t.Fatalf("n=%d word %d tag %#x", n, i, w>>32)
			}
			want := float32(0)
			if i < len(src) {
				want = src[i]
			}
			if got := math.Float32frombits(uint32(w)); got != want {
				t.Fatalf("n=%d word %d value %v, want %v", n, i, got, want)
			}
			if w != Pack(want, 0xdeadbeef) {
				t.Fatalf("Pack disagrees with Write at %d", i)
			}
		}
		got := make([]float32, len(src))
		if err := Read(got, dst, 0xdeadbeef, func() error { return errors.New("not ready") }); err != nil {
			t.Fatal(err)
		}
		for i := range src {
			if got[i] != src[i] {
				t.Fatalf("read back %v, want %v", got[i], src[i])
			}
		}
	}
}

func TestReadWaitsForTag(t *testing.T) {
	words := []uint64{Pack(1, 5), Pack(2, 4)} // second word still has the old tag
	polls := 0
	err := Read(make([]float32, 2), words, 5, func() error {
		polls++
		if polls == 3 {
			words[1] = Pack(2, 5) // the "GPU" delivers it
		}
		return nil
	})
	if err != nil || polls != 3 {
		t.Fatalf("err %v after %d polls", err, polls)
	}
	// The last word first, then the others: an early word still old is
	// waited for too.
	words = []uint64{Pack(1, 4), Pack(2, 5), Pack(3, 5)}
	polls = 0
	got := make([]float32, 3)
	if err := Read(got, words, 5, func() error {
		if polls++; polls == 2 {
			words[0] = Pack(1, 5)
		}
		return nil
	}); err != nil || polls != 2 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("err %v after %d polls, got %v", err, polls, got)
	}
	stop := errors.New("watchdog")
	words[1] = Pack(2, 4)
	if err := Read(make([]float32, 2), words, 5, func() error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("spin error not returned: %v", err)
	}
}

// BenchmarkWrite256 times the producer's publish path for a 256-word block:
// Write alone, and Write then Demote (what the zero-copy hook does).
func BenchmarkWrite256(b *testing.B) {
	for _, demote := range []bool{false, true} {
		name := "Write"
		if demote {
			name = "WriteDemote"
		}
		b.Run(name, func(b *testing.B) {
			src := make([]float32, 256)
			dst := make([]uint64, 256)
			b.ReportAllocs()
			b.SetBytes(256 * 8)
			for i := 0; b.Loop(); i++ {
				Write(dst, src, uint32(i))
				if demote {
					Demote(dst)
				}
			}
		})
	}
}

func TestDemoteKeepsData(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 300} {
		w := make([]uint64, n)
		for i := range w {
			w[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		for _, s := range [][]uint64{w, w[min(1, n):]} { // line-aligned or not
			Demote(s)
		}
		for i := range w {
			if w[i] != uint64(i)*0x9e3779b97f4a7c15 {
				t.Fatalf("n=%d: word %d changed", n, i)
			}
		}
	}
}
