package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// failingBackend is scaleBackend that misbehaves on block failSeq: it takes
// the block from the ring and then fails (fail) or reports the end of the
// stream (eof), never releasing it. Before that it waits for ready, so the
// producer has published every block and the loss counts are exact.
type failingBackend struct {
	scaleBackend
	failSeq uint64
	eof     bool
	ready   <-chan struct{}
}

func (b *failingBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	if blk.Seq == b.failSeq {
		<-b.ready
		if b.eof {
			return Output{}, io.EOF
		}
		return Output{}, errors.New("kernel fault")
	}
	out := b.out[:len(blk.Samples)]
	for i, v := range blk.Samples {
		out[i] = 2 * v
	}
	b.ring.Release()
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

// gatedFailSink fails on write failAt (1-based) once ready is closed.
type gatedFailSink struct {
	writes int
	failAt int
	ready  <-chan struct{}
}

func (s *gatedFailSink) Write([]float32) error {
	s.writes++
	if s.writes == s.failAt {
		<-s.ready
		return errors.New("disk full")
	}
	return nil
}

// TestRunCountsDropsAtFilterExactly makes the backend or the sink fail mid
// run after the source has published all its blocks (the ring is deep
// enough to hold them): what never came out of the backend is dropped at the
// filter, to the block and sample.
func TestRunCountsDropsAtFilterExactly(t *testing.T) {
	const block, blocks, slots = 16, 14, 16
	tests := []struct {
		name          string
		failSeq       int  // backend fails on this block; -1 = never
		eof           bool // the backend ends its stream instead of failing
		sinkFailAt    int  // sink fails on this write; 0 = never
		wantErr       string
		filtered      uint64 // blocks out of the backend
		written       uint64 // blocks the sink accepted
		wantDroppedAt uint64 // blocks dropped at the filter
	}{
		{"backend fails", 10, false, 0, "scale backend: kernel fault", 10, 10, 4},
		{"backend fails on first block", 0, false, 0, "kernel fault", 0, 0, 14},
		{"backend stops early", 10, true, 0, "stream ended with 4 of 14 published blocks never filtered", 10, 10, 4},
		{"sink fails", -1, false, 3, "write sink: disk full", 3, 2, 11},
		{"no failure", -1, false, 0, "", 14, 14, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready := make(chan struct{})
			// The read after the last block returns io.EOF: every block
			// has been published by then.
			src := &countSource{total: block * blocks, ch: 1, onEOF: func() { close(ready) }}
			be := &failingBackend{failSeq: ^uint64(0), eof: tt.eof, ready: ready}
			if tt.failSeq >= 0 {
				be.failSeq = uint64(tt.failSeq)
			}
			snk := &gatedFailSink{failAt: tt.sinkFailAt, ready: ready}
			st, err := Run(context.Background(), src, be, snk, Config{BlockSize: block, Slots: slots}, Options{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if st.SamplesIn != block*blocks || st.DroppedBlocks != 0 {
				t.Fatalf("stats %+v", st)
			}
			if st.DroppedFilterBlocks != tt.wantDroppedAt || st.DroppedFilterSamples != tt.wantDroppedAt*block {
				t.Errorf("dropped at filter %d blocks (%d samples), want %d (%d)",
					st.DroppedFilterBlocks, st.DroppedFilterSamples, tt.wantDroppedAt, tt.wantDroppedAt*block)
			}
			if st.SamplesFiltered != tt.filtered*block || st.SamplesWritten != tt.written*block ||
				st.SamplesOut != st.SamplesWritten || st.Blocks != tt.written {
				t.Errorf("filtered %d written %d out %d blocks %d, want %d, %d samples in %d blocks",
					st.SamplesFiltered, st.SamplesWritten, st.SamplesOut, st.Blocks, tt.filtered*block, tt.written*block, tt.written)
			}
			// Every sample read is dropped at capture, at the filter, or
			// filtered.
			if st.DroppedSamples+st.DroppedFilterSamples+st.SamplesFiltered != st.SamplesIn {
				t.Errorf("accounting does not add up: %+v", st)
			}
		})
	}
}

// TestRunDropPolicyFullAccounting checks the capture-side identity under
// drops: in = dropped at capture + filtered, nothing lost at the filter.
func TestRunDropPolicyFullAccounting(t *testing.T) {
	const block, blocks, slots = 16, 40, 4
	gate, entered := make(chan struct{}), make(chan struct{})
	src := &countSource{total: block * blocks, ch: 1, onEOF: func() { close(gate) }}
	src.beforeRead = func(n int) {
		if n == 1 {
			<-entered
		}
	}
	st, err := Run(context.Background(), src, &scaleBackend{}, &sliceSink{gate: gate, entered: entered},
		Config{BlockSize: block, Slots: slots, Policy: PolicyDrop}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kept := uint64(slots + 1)
	if st.DroppedBlocks != blocks-kept || st.DroppedFilterBlocks != 0 || st.DroppedFilterSamples != 0 ||
		st.SamplesFiltered != kept*block || st.SamplesWritten != kept*block {
		t.Fatalf("stats %+v", st)
	}
}

func TestStatsStringReportsEveryCounter(t *testing.T) {
	st := Stats{SamplesIn: 100, SamplesFiltered: 60, SamplesWritten: 50, SamplesOut: 50, Blocks: 5,
		DroppedBlocks: 2, DroppedSamples: 20, DroppedFilterBlocks: 2, DroppedFilterSamples: 20, Gaps: 2, Wall: 1e9}
	const want = "samples in 100  out 50  blocks 5  drops 2 (20 samples)  gaps 2  startup 0.000 s  wall 1.000 s  0.00 MS/s out, 0.00 MS/s in  filtered 60  filter drops 2 (20 samples)"
	if got := st.String(); got != want {
		t.Fatalf("String() = %q\nwant        %q", got, want)
	}
}
