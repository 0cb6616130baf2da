package probe

import (
	"context"
	"testing"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
)

// wordsBackend stands in for the zero-copy transport: its "kernel" reads
// the tagged words of a mapped-like slot ring, written by the source
// (pipeline.WordSource) or by the publish hook, and outputs them as they
// are (the probe's taps are {1}).
type wordsBackend struct {
	ring           *pipeline.Ring
	words          []uint64
	stride         int
	out            []float32
	direct, staged int
}

func (b *wordsBackend) Name() string { return "words" }

func (b *wordsBackend) Start(_ context.Context, l pipeline.Layout) (*pipeline.Ring, error) {
	r, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, err
	}
	b.ring, b.stride, b.out = r, l.BlockValues(), make([]float32, l.BlockValues())
	b.words = make([]uint64, l.Slots*b.stride)
	slot := func(i uint64) []uint64 {
		s := int(i%uint64(l.Slots)) * b.stride
		return b.words[s : s+b.stride]
	}
	tag := func(i uint64) uint32 { return uint32(i+1) | 1<<31 } // not i+1: the source must use the backend's
	r.SetPublishHook(func(i uint64, blk pipeline.Block) {
		b.staged++
		tagged.Write(slot(i), blk.Samples, tag(i))
	})
	err = r.SetWordSlots(pipeline.WordSlots{
		Slot: slot,
		Tag:  tag,
		Published: func(i uint64, n int) {
			b.direct++
			tagged.Write(slot(i)[n:], nil, tag(i))
		}})
	return r, err
}

func (b *wordsBackend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	i := b.ring.ReadCount()
	s := int(i%uint64(b.ring.Layout().Slots)) * b.stride
	out := b.out[:len(blk.Samples)]
	if err := tagged.Read(out, b.words[s:s+len(out)], uint32(i+1)|1<<31, nil); err != nil {
		return pipeline.Output{}, err
	}
	b.ring.Release()
	return pipeline.Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

func (b *wordsBackend) Close() error { return nil }

// TestSourceWritesTaggedWords runs the probe through a word-slot backend,
// with the source writing the words itself and, StagedInput, through the
// hook: every block must verify against the source's record either way,
// and each path must have been the one taken.
func TestSourceWritesTaggedWords(t *testing.T) {
	for _, staged := range []bool{false, true} {
		for _, complex := range []bool{false, true} {
			be := &wordsBackend{}
			cfg := Config{BlockSize: 64, Taps: []float32{1}, Complex: complex, Blocks: 300, Warmup: 10, Slots: 512, Seed: 3, StagedInput: staged}
			rs, err := Run(context.Background(), cfg, []Path{{Name: "words", New: func() (pipeline.Backend, error) { return be, nil }}})
			if err != nil {
				t.Fatalf("staged %v complex %v: %v", staged, complex, err)
			}
			r := rs[0]
			if r.Verified != 310 || r.Mismatches != 0 || r.Dropped != 0 {
				t.Fatalf("staged %v complex %v: verified %d, mismatches %d, dropped %d", staged, complex, r.Verified, r.Mismatches, r.Dropped)
			}
			wantDirect, wantStaged := 310, 0
			if staged {
				wantDirect, wantStaged = 0, 310
			}
			if be.direct != wantDirect || be.staged != wantStaged {
				t.Fatalf("staged %v: %d blocks written in place, %d through the hook; want %d, %d", staged, be.direct, be.staged, wantDirect, wantStaged)
			}
		}
	}
}
