package cuda

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
)

// TestZeroCopyRetuneTags walks the host side of the zero-copy retune
// through both ways a block reaches the mapped ring: the publish hook
// (tag decided as the block is published) and a source writing the slot
// itself (tag decided when the source asks for it, before any word).
// (TestZeroCopyRetuneThroughPipeline drives the same through the ring.) The
// parity in each tag, the frame a retune reports and the taps in each
// parameter buffer must follow the stage package's semantics: new taps
// from the first block not yet tagged.
func TestZeroCopyRetuneTags(t *testing.T) {
	const hcap, full = 8, 256
	buf := make([]float32, paramFloats(hcap))
	var z zcRetune
	z.init(unsafe.Pointer(&buf[0]), hcap, []float32{1, 2})
	taps := func(b uint32) []float32 {
		p := buf[int(b)*(paramHdr+z.tcap):]
		n := *(*uint32)(unsafe.Pointer(&p[0]))
		return p[paramHdr : paramHdr+int(n)]
	}
	par := func(tag uint32) uint32 { return tag >> 31 }
	check := func(what string, got, want uint32) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: tag %#x, want %#x", what, got, want)
		}
	}

	check("block 0 (hook)", z.published(0, full), 1)
	if at := z.flip([]float32{3, 4, 5}); at != full {
		t.Fatalf("flip after block 0: at %d, want %d", at, full)
	}
	if got := taps(1); len(got) != 3 || got[2] != 5 {
		t.Fatalf("buffer 1 = %v", got)
	}
	// Not yet used: a second retune replaces it in place.
	if at, _, done := z.replaceUnused([]float32{6}); !done || at != full || taps(1)[0] != 6 {
		t.Fatalf("replace unused: at %d done %v taps %v", at, done, taps(1))
	}
	check("block 1 (hook), new parity", z.published(1, full), 2|1<<31)

	// A source writing the slot: the tag is decided when it asks for it.
	check("block 2 (slot)", z.wordSlot(2, full), 3|1<<31)
	// A retune while block 2 is being written starts after it, into
	// buffer 0, which the kernel never loaded (it starts from its taps
	// argument): no block to wait for.
	if _, rd, done := z.replaceUnused(nil); done || rd != -1 {
		t.Fatalf("the last flip reached block 1: done %v, buffer 0 loaded at %d, want -1", done, rd)
	}
	if at := z.flip([]float32{7}); at != 3*full {
		t.Fatalf("flip while block 2 is written: at %d, want %d", at, 3*full)
	}
	check("block 2 asked again", z.wordSlot(2, full), 3|1<<31)
	check("block 2 published", z.published(2, full), 3|1<<31)
	check("block 3 (slot), the flip's parity", z.wordSlot(3, full), 4)
	// A short last block corrects the count.
	check("block 3 short", z.published(3, 100), 4)
	if z.frames != 3*full+100 {
		t.Fatalf("frames %d, want %d", z.frames, 3*full+100)
	}
	// A tag asked for, then its block published through the hook (the
	// source did not write it): counted once, with that tag.
	check("block 4 (slot)", z.wordSlot(4, full), 5)
	check("block 4 (hook)", z.published(4, full), 5)
	if z.frames != 4*full+100 {
		t.Fatalf("frames %d after a slot published by the hook, want %d", z.frames, 4*full+100)
	}
	// The next retune writes buffer 1, which the kernel loaded at block 1
	// (the flip before the last, which block 3 took): it waits for block
	// 1, not 3.
	if _, rd, done := z.replaceUnused(nil); done || rd != 1 {
		t.Fatalf("buffer 1 loaded at block %d (done %v), want 1", rd, done)
	}
	// The index wraps inside the tag's 31 bits; the parity stays apart.
	check("block 2^31-1", z.published(1<<31-1, full), 0)
	z.flip([]float32{8})
	check("block 2^31", z.published(1<<31, full), 1|1<<31)
	if par(z.published(1<<31+1, full)) != 1 {
		t.Fatal("parity lost after the wrap")
	}
}

// zcHostBackend is the zero-copy backend with the kernel replaced by a
// consumer that reads the tagged input words: the real ring hooks
// (zcRetune.attach) and retune steps, no driver. It records the taps
// parity each block's words carry, as the kernel reads it.
type zcHostBackend struct {
	z        zcRetune
	params   []float32
	ring     *pipeline.Ring
	in       []uint64
	words    int
	out      []float32
	finished atomic.Int64 // blocks consumed: the kernel's heartbeat
	parity   []uint32     // per block
	err      error        // a block whose words disagree
}

func (b *zcHostBackend) Name() string { return "zero-copy host model" }

func (b *zcHostBackend) Start(ctx context.Context, l pipeline.Layout) (*pipeline.Ring, error) {
	const hcap = 8
	b.params = make([]float32, paramFloats(hcap))
	b.z.init(unsafe.Pointer(&b.params[0]), hcap, []float32{1})
	b.words = (l.BlockValues() + 1) &^ 1 // as evenWords
	b.in = make([]uint64, l.Slots*b.words)
	b.out = make([]float32, l.BlockValues())
	r, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, err
	}
	b.ring = r
	return r, b.z.attach(r, b.in, b.words, true, nil)
}

func (b *zcHostBackend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	i := uint64(len(b.parity))
	s := int(i%uint64(b.ring.Layout().Slots)) * b.words
	w := b.in[s : s+b.words]
	tag := uint32(w[0] >> 32)
	if tag&tagMask != uint32(i+1) && b.err == nil {
		b.err = fmt.Errorf("block %d carries tag %#x", i, tag)
	}
	for k, v := range w {
		if uint32(v>>32) != tag && b.err == nil {
			b.err = fmt.Errorf("block %d: word %d tag %#x, word 0 %#x", i, k, uint32(v>>32), tag)
		}
	}
	b.parity = append(b.parity, tag>>31)
	out := b.out[:len(blk.Samples)]
	if err := tagged.Read(out, w[:len(out)], tag, nil); err != nil {
		return pipeline.Output{}, err
	}
	b.ring.Release()
	b.finished.Add(1)
	return pipeline.Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

func (b *zcHostBackend) Close() error { return nil }

// zcGate is a source that stops before each frame index in gates until
// told to go on; as a pipeline.WordSource it stops inside ReadWords, after
// the slot was handed out and before it asks for the block's tag.
type zcGate struct {
	x       []float32
	lanes   int
	pos     int // values
	gates   []int64
	reached chan int64
	resume  chan struct{}
}

func (s *zcGate) Read(ctx context.Context, dst []float32) (int, error) {
	if len(s.gates) > 0 && int64(s.pos/s.lanes) == s.gates[0] {
		s.reached <- s.gates[0]
		s.gates = s.gates[1:]
		select {
		case <-s.resume:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	n := len(dst)
	if len(s.gates) > 0 {
		n = min(n, int(s.gates[0])*s.lanes-s.pos)
	}
	n = copy(dst[:n], s.x[s.pos:])
	s.pos += n
	if s.pos == len(s.x) {
		return n, io.EOF
	}
	return n, nil
}

// zcWordGate is zcGate as a pipeline.WordSource. tagFirst makes it ask for
// the block's tag before it stops at a gate, as a source whose words are
// tagged before its values are ready would (and as every WordSource did
// once): the block it holds then carries the parity in force before the
// gate's retune.
type zcWordGate struct {
	*zcGate
	tagFirst bool
}

func (s *zcWordGate) ReadWords(ctx context.Context, dst []uint64, tag func() uint32) (int, error) {
	var t uint32
	if s.tagFirst {
		t = tag()
	}
	buf := make([]float32, len(dst))
	n, err := s.Read(ctx, buf)
	if n > 0 {
		if !s.tagFirst {
			t = tag()
		}
		tagged.Write(dst[:n], buf[:n], t)
	}
	return n, err
}

type discard struct{}

func (discard) Write([]float32) error { return nil }

// TestZeroCopyRetuneThroughPipeline runs the zero-copy host side under
// pipeline.Run, as TestZeroCopyRetuneAtBlock runs the GPU backend: the
// source stops at block boundaries, and a retune there must report the
// frame at which the blocks' taps parity changes: the gate itself, the
// first block not yet published, for a source the ring copies (the
// publish hook) and for a WordSource alike, which was handed the gate's
// slot before it stopped but asks for the tag only once its values are
// ready; a block later for a WordSource that took the tag before it
// stopped (as every one once did). The host once counted a hook-published block twice (the
// pipeline asked for a word slot it then did not use), and reported 2 ×
// the gate + one block.
func TestZeroCopyRetuneThroughPipeline(t *testing.T) {
	for _, tc := range []struct {
		words    bool
		tagFirst bool // the word source asks for the tag before its gate
		channels int
		complex  bool
		block    int
		gates    []int64 // blocks
		twice    bool    // two retunes at each gate: one flip
		blocks   int
	}{
		{false, false, 1, false, 256, []int64{5, 9, 10}, false, 16},
		{false, false, 1, true, 256, []int64{3, 4}, false, 8},
		{false, false, 8, true, 37, []int64{6, 11}, false, 15},
		{false, false, 3, false, 31, []int64{2}, true, 6},
		{true, false, 1, false, 256, []int64{5, 9, 12}, false, 16},
		{true, false, 3, true, 31, []int64{2, 5}, true, 8},
		{true, false, 1, false, 64, []int64{3, 4, 5, 9}, false, 12},
		{true, true, 1, false, 256, []int64{5, 9, 12}, false, 16},
		{true, true, 3, true, 31, []int64{2, 5}, true, 8},
		// Adjacent gates, the tag taken first: the second gate stops in
		// the block that took the first retune, which the retune after it
		// must not wait for.
		{true, true, 1, false, 64, []int64{3, 4, 5, 9}, false, 12},
	} {
		name := fmt.Sprintf("words=%v/tagFirst=%v/ch=%d/complex=%v/block=%d/gates=%v", tc.words, tc.tagFirst, tc.channels, tc.complex, tc.block, tc.gates)
		t.Run(name, func(t *testing.T) {
			lanes := pipeline.FrameValues(tc.channels, tc.complex)
			g := &zcGate{x: make([]float32, tc.blocks*tc.block*lanes), lanes: lanes,
				reached: make(chan int64), resume: make(chan struct{})}
			for _, b := range tc.gates {
				g.gates = append(g.gates, b*int64(tc.block))
			}
			var src pipeline.Source = g
			if tc.words {
				src = &zcWordGate{g, tc.tagFirst}
			}
			be := &zcHostBackend{}
			cfg := pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Channels: tc.channels, Slots: 4}
			done := make(chan error, 1)
			go func() {
				_, err := pipeline.Run(context.Background(), src, be, discard{}, cfg, pipeline.Options{})
				done <- err
			}()
			// The kernel is done with block sw once the consumer is; a
			// retune that waits for a block the stopped source holds would
			// wait for ever (the driver's wait ends at the watchdog).
			finished := func(sw int64) error {
				t0 := time.Now()
				for be.finished.Load() <= sw {
					if time.Since(t0) > 5*time.Second {
						return fmt.Errorf("block %d never finished (%d consumed)", sw, be.finished.Load())
					}
					runtime.Gosched()
				}
				return nil
			}
			var ats []int64
			for i := range tc.gates {
				var gate int64
				select {
				case gate = <-g.reached:
				case err := <-done:
					t.Fatalf("the run ended before gate %d: %v", i, err)
				}
				want := gate
				if tc.tagFirst {
					want += int64(tc.block) // the held block was tagged before the retune
				}
				n := 1
				if tc.twice {
					n = 2
				}
				for k := range n {
					be.z.serial.Lock()
					at, err := be.z.retune([]float32{float32(i + 2), float32(k)}, finished)
					be.z.serial.Unlock()
					if err != nil {
						t.Fatal(err)
					}
					if at != want {
						t.Errorf("gate %d (frame %d), retune %d: at %d, want %d", i, gate, k, at, want)
					}
				}
				ats = append(ats, want)
				g.resume <- struct{}{}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if be.err != nil {
				t.Fatal(be.err)
			}
			if len(be.parity) != tc.blocks {
				t.Fatalf("%d blocks consumed, want %d", len(be.parity), tc.blocks)
			}
			// Block j carries the parity of the retunes at or before its
			// first frame: one flip per gate.
			for j, p := range be.parity {
				var want uint32
				for _, at := range ats {
					if int64(j*tc.block) >= at {
						want ^= 1
					}
				}
				if p != want {
					t.Errorf("block %d (frame %d): taps parity %d, want %d (retunes at %v)", j, j*tc.block, p, want, ats)
				}
			}
			// The last retune's taps are in its parity's buffer.
			last := be.params[int(be.z.parity)*(paramHdr+be.z.tcap):]
			if n := *(*uint32)(unsafe.Pointer(&last[0])); n != 2 || last[paramHdr] != float32(len(tc.gates)+1) {
				t.Errorf("buffer %d holds %d taps %v, want the last retune's", be.z.parity, n, last[paramHdr:paramHdr+2])
			}
		})
	}
}
