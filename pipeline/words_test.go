package pipeline

import (
	"context"
	"testing"

	"github.com/sigproc/sigproc/internal/tagged"
)

// wordSource is a countSource that can also write tagged words.
type wordSource struct {
	countSource
	buf       []float32
	wordReads int
	wrongTags int
	lastTag   uint32 // blocks read as words
}

func (s *wordSource) ReadWords(ctx context.Context, dst []uint64, tag func() uint32) (int, error) {
	s.wordReads++
	if cap(s.buf) < len(dst) {
		s.buf = make([]float32, len(dst))
	}
	n, err := s.Read(ctx, s.buf[:len(dst)])
	if n == 0 {
		return n, err // no word written: no tag asked for
	}
	t := tag()
	if t != wordTag(uint64(s.lastTag)) { // the backend's tag for the next block
		s.wrongTags++
	}
	s.lastTag++
	tagged.Write(dst[:n], s.buf[:n], t)
	return n, err
}

// wordTag is the test backend's tag for block i: not i+1 alone, so that a
// source writing i+1 itself instead of the tag WordSlot gives is caught
// (the zero-copy kernel's tags carry the taps' parity in the top bit).
func wordTag(i uint64) uint32 { return uint32(i+1) | 1<<31 }

// wordBackend is scaleBackend whose kernel reads tagged words: a
// WordSource writes them itself, any other source's blocks are copied in
// by the publish hook.
type wordBackend struct {
	scaleBackend
	words     []uint64
	stride    int
	hooked    int
	published int
	asked     int // Tag calls: each decides a block's tag
}

func (b *wordBackend) Start(ctx context.Context, l Layout) (*Ring, error) {
	r, err := b.scaleBackend.Start(ctx, l)
	if err != nil {
		return nil, err
	}
	b.stride = l.BlockValues() + 1 // odd, like the zero-copy slots' padding
	b.words = make([]uint64, l.Slots*b.stride)
	slot := func(i uint64) []uint64 {
		s := int(i%uint64(l.Slots)) * b.stride
		return b.words[s : s+b.stride]
	}
	r.SetPublishHook(func(i uint64, blk Block) {
		b.hooked++
		tagged.Write(slot(i), blk.Samples, wordTag(i))
	})
	err = r.SetWordSlots(WordSlots{
		Slot: slot,
		Tag: func(i uint64) uint32 {
			b.asked++
			return wordTag(i)
		},
		Published: func(i uint64, n int) {
			b.published++
			tagged.Write(slot(i)[n:], nil, wordTag(i)) // pad
		}})
	return r, err
}

func (b *wordBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	i := b.ring.ReadCount()
	s := int(i%uint64(b.ring.Layout().Slots)) * b.stride
	out := b.out[:len(blk.Samples)]
	if err := tagged.Read(out, b.words[s:s+len(out)], wordTag(i), nil); err != nil {
		return Output{}, err
	}
	for k := range out {
		out[k] *= 2
	}
	b.ring.Release()
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

// TestRunWritesWordsDirectly checks that a WordSource writes the backend's
// word slots itself, with the tags the hook would have written, and that
// every other pairing still works: the output is the same in each. A tag
// is asked for only for a block the source writes into its slot: asking
// decides the block's tag, so a block the hook publishes must not be asked
// for (the zero-copy backend counted such a block twice, and reported its
// retunes at twice the frame plus a block).
func TestRunWritesWordsDirectly(t *testing.T) {
	const block, ch, total = 16, 2, 16*20 + 5 // a short last block
	for _, tc := range []struct {
		name              string
		words, wordSource bool
	}{
		{"word source, word slots", true, true},
		{"plain source, word slots (hook copies)", true, false},
		{"word source, plain backend", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := &wordSource{countSource: countSource{total: total, ch: ch}}
			var src Source = &ws.countSource
			if tc.wordSource {
				src = ws
			}
			var be Backend = &scaleBackend{}
			wb := &wordBackend{}
			if tc.words {
				be = wb
			}
			snk := &sliceSink{}
			st, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Channels: ch, Slots: 4, Policy: PolicyBlock}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.SamplesOut != total || len(snk.got) != total*ch {
				t.Fatalf("out %d samples, %d values; want %d", st.SamplesOut, len(snk.got), total)
			}
			for i, v := range snk.got {
				if v != 2*float32(i) {
					t.Fatalf("value %d = %v, want %v", i, v, 2*float32(i))
				}
			}
			blocks := (total + block - 1) / block
			wantDirect := 0
			if tc.words && tc.wordSource {
				wantDirect = blocks
			}
			if ws.wordReads < wantDirect || (wantDirect == 0 && ws.wordReads != 0) || ws.wrongTags != 0 {
				t.Fatalf("%d word reads (%d with a wrong tag), want %d", ws.wordReads, ws.wrongTags, wantDirect)
			}
			if tc.words && (wb.published != wantDirect || wb.hooked != blocks-wantDirect) {
				t.Fatalf("published %d in place and %d through the hook, want %d and %d", wb.published, wb.hooked, wantDirect, blocks-wantDirect)
			}
			// A word source asks for a tag once per block it writes (not for
			// the read that finds the end); any other source never.
			if tc.words && wb.asked != wantDirect {
				t.Fatalf("tags asked for %d times, want %d", wb.asked, wantDirect)
			}
		})
	}
}

func TestPublishWordsErrors(t *testing.T) {
	l := Layout{BlockSize: 4, Channels: 1, Slots: 2}
	r, err := NewRing(AlignedBytes(l.Size()), l)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.WordSlot(); ok {
		t.Fatal("WordSlot without word slots")
	}
	if _, err := r.Acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if err := r.PublishWords(4, 0, 0); err == nil {
		t.Fatal("PublishWords without word slots succeeded")
	}
}
