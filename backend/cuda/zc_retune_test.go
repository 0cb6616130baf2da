package cuda

import (
	"testing"
	"unsafe"
)

// TestZeroCopyRetuneTags walks the host side of the zero-copy retune
// through both ways a block reaches the mapped ring: the publish hook
// (tag decided as the block is published) and a source writing the slot
// itself (tag decided when the slot is handed out, before any word). The
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

	check("block 0 (hook)", z.publish(0, full), 1)
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
	check("block 1 (hook), new parity", z.publish(1, full), 2|1<<31)

	// A source writing the slot: the tag is decided when it is handed out.
	check("block 2 (slot)", z.wordSlot(2, full), 3|1<<31)
	// A retune while block 2 is being written starts after it.
	if _, sw, done := z.replaceUnused(nil); done || sw != 1 {
		t.Fatalf("the last flip reached block 1: done %v switchAt %d", done, sw)
	}
	if at := z.flip([]float32{7}); at != 3*full {
		t.Fatalf("flip while block 2 is written: at %d, want %d", at, 3*full)
	}
	check("block 2 asked again", z.wordSlot(2, full), 3|1<<31)
	check("block 2 published", z.wordsPublished(2, full, full), 3|1<<31)
	check("block 3 (slot), the flip's parity", z.wordSlot(3, full), 4)
	// A short last block corrects the count.
	check("block 3 short", z.wordsPublished(3, 100, full), 4)
	if z.frames != 3*full+100 {
		t.Fatalf("frames %d, want %d", z.frames, 3*full+100)
	}
	// The index wraps inside the tag's 31 bits; the parity stays apart.
	check("block 2^31-1", z.publish(1<<31-1, full), 0)
	z.flip([]float32{8})
	check("block 2^31", z.publish(1<<31, full), 1|1<<31)
	if par(z.publish(1<<31+1, full)) != 1 {
		t.Fatal("parity lost after the wrap")
	}
}
