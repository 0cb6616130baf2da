package pipeline

import (
	"context"
	"strings"
	"testing"
)

// keepBackend keeps every m-th input sample of the stream (phase kept
// across blocks) and outputs it as a complex sample (v, −v): a decimating,
// real-to-complex backend, to check the rate-changing accounting.
type keepBackend struct {
	m    int
	noIn bool // leave Output.In unset, as a backend that forgets it
	pos  int  // stream index of the next input sample
	ring *Ring
	out  []float32
}

func (b *keepBackend) Name() string { return "keep" }
func (b *keepBackend) Start(_ context.Context, l Layout) (*Ring, error) {
	r, err := NewRing(AlignedBytes(l.Size()), l)
	b.ring, b.out = r, make([]float32, 2*l.BlockSize)
	return r, err
}
func (b *keepBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	out := b.out[:0]
	for _, v := range blk.Samples {
		if b.pos%b.m == 0 {
			out = append(out, v, -v)
		}
		b.pos++
	}
	b.ring.Release()
	in := len(blk.Samples)
	if b.noIn {
		in = 0
	}
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out, In: in}, nil
}
func (b *keepBackend) Close() error { return nil }

// TestRunCountsRateChanges: with a backend that decimates by m and makes a
// real stream complex, input and output samples are counted apart, every
// input sample is accounted for, and the sink gets exactly the kept ones.
func TestRunCountsRateChanges(t *testing.T) {
	tests := []struct{ total, block, m int }{
		{1000, 64, 8}, {1001, 7, 8}, {5, 256, 8}, {999, 10, 3}, {100, 100, 1},
	}
	for _, tt := range tests {
		src := &countSource{total: tt.total, ch: 1}
		snk := &sliceSink{}
		st, err := Run(context.Background(), src, &keepBackend{m: tt.m}, snk,
			Config{BlockSize: tt.block, OutComplex: true, Slots: 4}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		kept := uint64((tt.total + tt.m - 1) / tt.m)
		if st.SamplesIn != uint64(tt.total) || st.SamplesFiltered != uint64(tt.total) ||
			st.SamplesProduced != kept || st.SamplesWritten != kept || st.SamplesOut != kept {
			t.Errorf("%+v: in %d filtered %d produced %d written %d; want in = filtered = %d, produced = written = %d",
				tt, st.SamplesIn, st.SamplesFiltered, st.SamplesProduced, st.SamplesWritten, tt.total, kept)
		}
		if st.DroppedSamples+st.DroppedFilterSamples+st.SamplesFiltered != st.SamplesIn || st.DroppedFilterBlocks != 0 {
			t.Errorf("%+v: accounting broken: %+v", tt, st)
		}
		if len(snk.got) != int(2*kept) {
			t.Fatalf("%+v: sink got %d values, want %d", tt, len(snk.got), 2*kept)
		}
		for i := 0; i < len(snk.got); i += 2 {
			if want := float32(i / 2 * tt.m); snk.got[i] != want || snk.got[i+1] != -want {
				t.Fatalf("%+v: output %d = (%v, %v), want (%v, %v)", tt, i/2, snk.got[i], snk.got[i+1], want, -want)
			}
		}
	}
}

// TestRunRefusesUnreportedRateChange: a backend that decimates without
// setting Output.In (the cuda backend before it did) makes the pipeline
// count the missing input as lost at the filter although every block came
// out; Run says so rather than printing wrong counters.
func TestRunRefusesUnreportedRateChange(t *testing.T) {
	for _, m := range []int{8, 3, 1} { // 1: the real input becomes complex
		src := &countSource{total: 1000, ch: 1}
		_, err := Run(context.Background(), src, &keepBackend{m: m, noIn: true}, &sliceSink{},
			Config{BlockSize: 64, OutComplex: true, Slots: 4}, Options{})
		if err == nil || !strings.Contains(err.Error(), "Output.In") {
			t.Errorf("m=%d: err = %v, want the unreported input named", m, err)
		}
	}
}
