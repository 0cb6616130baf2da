package capture

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"
	"time"
)

// TestSyntheticReadWords checks that ReadWords writes the values Read
// gives, each with the tag, never a word beyond the count, and ends the
// same way.
func TestSyntheticReadWords(t *testing.T) {
	for _, c := range []struct {
		name    string
		complex bool
		block   int
	}{{"real", false, 64}, {"complex", true, 64}, {"odd block", false, 37}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := SyntheticConfig{Signal: "sum", SampleRate: 1e6, Complex: c.complex, NumSamples: 1000,
				Components: []SyntheticConfig{{Signal: "tone", FrequencyHz: 1e4}, {Signal: "noise", NoiseStdDev: 0.1, Seed: 7}}}
			ref, err := NewSynthetic(cfg)
			if err != nil {
				t.Fatal(err)
			}
			src, err := NewSynthetic(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ch := ref.Info().Channels()
			want := make([]float32, c.block*ch)
			words := make([]uint64, c.block*ch)
			for tag := uint32(1); ; tag++ {
				for i := range words {
					words[i] = 0xdead // untouched unless written
				}
				n, werr := src.ReadWords(context.Background(), words, func() uint32 { return tag })
				m, rerr := ref.Read(context.Background(), want)
				if n != m || (werr == nil) != (rerr == nil) {
					t.Fatalf("block %d: ReadWords %d, %v; Read %d, %v", tag, n, werr, m, rerr)
				}
				for i := range words {
					switch {
					case i < n && (uint32(words[i]>>32) != tag || math.Float32frombits(uint32(words[i])) != want[i]):
						t.Fatalf("block %d word %d = %#x, want %v tagged %d", tag, i, words[i], want[i], tag)
					case i >= n && words[i] != 0xdead:
						t.Fatalf("block %d: word %d beyond the count written", tag, i)
					}
				}
				if errors.Is(werr, io.EOF) {
					break
				}
			}
		})
	}
}

// TestPacedReadWordsCancel: a paced ReadWords stopped while it waits
// writes a tagged word for each value it returns (the samples already
// due), and none beyond.
func TestPacedReadWordsCancel(t *testing.T) {
	src, err := NewSynthetic(SyntheticConfig{Signal: "tone", SampleRate: 1000, FrequencyHz: 7, Paced: true})
	if err != nil {
		t.Fatal(err)
	}
	words := make([]uint64, 1000) // 1 s of samples
	for i := range words {
		words[i] = 0xdead
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	n, err := src.ReadWords(ctx, words, func() uint32 { return 3 })
	if !errors.Is(err, context.DeadlineExceeded) || n < 50 || n > 400 {
		t.Fatalf("ReadWords stopped after 100 ms = (%d, %v), want about 100 and context.DeadlineExceeded", n, err)
	}
	for i, w := range words {
		if (i < n) != (uint32(w>>32) == 3) || (i >= n && w != 0xdead) {
			t.Fatalf("word %d of %d returned = %#x", i, n, w)
		}
	}
}

// TestPacedReadWordsTagsWhenDue: a paced ReadWords asks for its block's
// tag only once the block is due, so that a retune accepted while it
// waited applies to that block (pipeline.WordSource).
func TestPacedReadWordsTagsWhenDue(t *testing.T) {
	src, err := NewSynthetic(SyntheticConfig{Signal: "tone", SampleRate: 1000, FrequencyHz: 7, Paced: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var asked time.Duration
	words := make([]uint64, 50) // due 50 ms after the start
	n, err := src.ReadWords(context.Background(), words, func() uint32 {
		asked = time.Since(start)
		return 1
	})
	if err != nil || n != len(words) {
		t.Fatalf("ReadWords = (%d, %v)", n, err)
	}
	if asked < 40*time.Millisecond {
		t.Fatalf("tag asked for %v after the start, before the block was due (50 ms)", asked)
	}
}
