//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/pipeline"
)

// wordSliceSource is sliceSource writing the zero-copy ring's tagged words
// itself (pipeline.WordSource).
type wordSliceSource struct {
	sliceSource
	wordReads int
}

func (s *wordSliceSource) ReadWords(ctx context.Context, dst []uint64, tag func() uint32) (int, error) {
	s.wordReads++
	n := min(len(dst), len(s.x)-s.pos)
	if n > 0 {
		tagged.Write(dst[:n], s.x[s.pos:s.pos+n], tag())
	}
	s.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

// TestZeroCopySourceWritesMappedSlots runs the zero-copy transport with a
// source that writes the mapped slots itself: short last blocks (padded at
// publish), odd values per block (the slot's even padding word), complex;
// the output must match the float64 convolution, and every block must
// have taken the direct path.
func TestZeroCopySourceWritesMappedSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		taps, block int
		complex     bool
		samples     int
	}{
		{64, 256, false, 256*40 + 100},
		{3, 37, false, 37*20 + 5},
		{129, 256, true, 256*30 + 1},
		{64, 1024, false, 1024 * 8},
	} {
		t.Run(fmt.Sprintf("taps=%d/block=%d/complex=%v", tc.taps, tc.block, tc.complex), func(t *testing.T) {
			ch := 1
			if tc.complex {
				ch = 2
			}
			taps := randSignal(r, tc.taps)
			x := randSignal(r, tc.samples*ch)
			be, err := NewBackend(taps, tc.complex, testOptions(TransportZeroCopy))
			if err != nil {
				t.Fatal(err)
			}
			src := &wordSliceSource{sliceSource: sliceSource{x: x}}
			snk := &collect{}
			st, err := pipeline.Run(context.Background(), src, be, snk,
				pipeline.Config{BlockSize: tc.block, Complex: tc.complex, Slots: 8}, pipeline.Options{})
			if cerr := be.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			blocks := (tc.samples + tc.block - 1) / tc.block
			if st.SamplesOut != uint64(tc.samples) || st.DroppedBlocks != 0 || st.Gaps != 0 {
				t.Fatalf("stats %+v", st)
			}
			if src.wordReads < blocks {
				t.Fatalf("%d of %d blocks written into the mapped slots", src.wordReads, blocks)
			}
			want := filter.Convolve(taps, x, tc.complex)
			if e := filter.MaxErrRMS(snk.got, want); e > 1e-5 {
				for i := range min(8, len(want)) {
					t.Logf("out[%d] = %v, want %v", i, snk.got[i], want[i])
				}
				t.Fatalf("max relative error %g > 1e-5", e)
			}
		})
	}
}
