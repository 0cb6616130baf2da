package pipeline

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// indexSink records the index each block is written at.
type indexSink struct {
	mu      sync.Mutex
	starts  []uint64
	lens    []int
	gate    chan struct{}
	entered chan struct{}
}

func (s *indexSink) Write([]float32) error { panic("Write called on an IndexedSink") }

func (s *indexSink) WriteIndexed(index, _ uint64, v []float32) error {
	s.mu.Lock()
	first := len(s.starts) == 0
	s.starts = append(s.starts, index)
	s.lens = append(s.lens, len(v))
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.gate
	}
	return nil
}

// TestRunIndexedSinkSeesGaps drops blocks exactly as
// TestRunDropPolicyCountsExactly does and checks that an IndexedSink gets
// each block's input index, so that the indexes it never got add up to the
// drops.
func TestRunIndexedSinkSeesGaps(t *testing.T) {
	const block, blocks, slots = 16, 40, 4
	gate, entered := make(chan struct{}), make(chan struct{})
	src := &countSource{total: block*blocks - 5, ch: 2, onEOF: func() { close(gate) }} // a short last block
	src.beforeRead = func(n int) {
		if n == 1 {
			<-entered
		}
	}
	snk := &indexSink{gate: gate, entered: entered}
	st, err := Run(context.Background(), src, &scaleBackend{}, snk,
		Config{BlockSize: block, Complex: true, Slots: slots, Policy: PolicyDrop}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Block 0, then blocks 1..4 (the ring), then 5..39 dropped.
	want := []uint64{0, 16, 32, 48, 64}
	if len(snk.starts) != len(want) {
		t.Fatalf("indexes %v, want %v", snk.starts, want)
	}
	var next, missing uint64
	for i, idx := range snk.starts {
		if idx != want[i] || snk.lens[i] != 2*block {
			t.Fatalf("block %d at %d with %d values, want %d with %d", i, idx, snk.lens[i], want[i], 2*block)
		}
		missing += idx - next
		next = idx + uint64(snk.lens[i]/2)
	}
	missing += st.SamplesIn - next // dropped after the last block written
	if missing != st.DroppedSamples || st.DroppedSamples != 35*block-5 {
		t.Fatalf("indexes leave %d samples missing; stats say %d dropped", missing, st.DroppedSamples)
	}
}

// lossySource is a countSource whose sender lost samples: lostAfter[n] is
// the total lost once read n has returned.
type lossySource struct {
	countSource
	lostAfter map[int]uint64
	lost      uint64
}

func (s *lossySource) Read(ctx context.Context, dst []float32) (int, error) {
	n, err := s.countSource.Read(ctx, dst)
	if t, ok := s.lostAfter[s.reads-1]; ok {
		s.lost = t
	}
	return n, err
}

func (s *lossySource) LostSamples() uint64 { return s.lost }

// TestRunSourceLossMovesIndices: what a LossySource lost before a block
// moves that block's input index and those after it, so an IndexedSink
// records it as a gap of the exact size there; Stats.SourceLost counts it.
func TestRunSourceLossMovesIndices(t *testing.T) {
	const block = 16
	gate := make(chan struct{})
	close(gate)
	src := &lossySource{countSource: countSource{total: 8 * block, ch: 1}, lostAfter: map[int]uint64{2: 5, 5: 12}}
	snk := &indexSink{gate: gate, entered: make(chan struct{})}
	st, err := Run(context.Background(), src, &scaleBackend{}, snk, Config{BlockSize: block, Slots: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0, 16, 32 + 5, 48 + 5, 64 + 5, 80 + 12, 96 + 12, 112 + 12}
	if !slices.Equal(snk.starts, want) {
		t.Fatalf("indices %v, want %v", snk.starts, want)
	}
	if st.SourceLost != 12 || st.SamplesIn != 8*block {
		t.Fatalf("stats: source lost %d, in %d; want 12, %d", st.SourceLost, st.SamplesIn, 8*block)
	}
}

// TestRunStartedFailsBeforeReading: an error from Started ends the run
// before the source is read (outputs are created there, so a failed start
// touches nothing).
func TestRunStartedFailsBeforeReading(t *testing.T) {
	src := &countSource{total: 100, ch: 1}
	snk := &sliceSink{}
	boom := errors.New("cannot create output")
	_, err := Run(context.Background(), src, &scaleBackend{}, snk, Config{BlockSize: 16, Slots: 4},
		Options{Started: func() error { return boom }})
	if !errors.Is(err, boom) || src.reads != 0 || snk.writes != 0 {
		t.Fatalf("err %v, reads %d, writes %d; want the Started error before any read", err, src.reads, snk.writes)
	}
	called := false
	if _, err := Run(context.Background(), &countSource{total: 100, ch: 1}, &scaleBackend{}, &sliceSink{}, Config{BlockSize: 16, Slots: 4},
		Options{Started: func() error { called = true; return nil }}); err != nil || !called {
		t.Fatalf("err %v, Started called %v", err, called)
	}
}

// TestRunAbortEndsTheDrain: after cancellation the ring is drained, unless
// Abort ends too; then the blocks still queued are counted as filter drops
// and the run is interrupted, not failed.
func TestRunAbortEndsTheDrain(t *testing.T) {
	const block, slots = 16, 8
	ctx, cancel := context.WithCancel(context.Background())
	abort, abortNow := context.WithCancel(context.Background())
	gate, entered := make(chan struct{}), make(chan struct{})
	src := &countSource{total: 1 << 20, ch: 1}
	// The ring fills while the sink holds block 0; then both contexts end.
	src.beforeRead = func(n int) {
		if n == slots {
			<-entered
			cancel()
			abortNow()
			close(gate)
		}
	}
	snk := &sliceSink{gate: gate, entered: entered}
	st, err := Run(ctx, src, &scaleBackend{}, snk, Config{BlockSize: block, Slots: slots, Policy: PolicyBlock},
		Options{Abort: abort})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Interrupted || st.DroppedFilterBlocks == 0 {
		t.Fatalf("stats %+v: want interrupted with the queued blocks dropped at the filter", st)
	}
	if st.SamplesIn != st.SamplesFiltered+st.DroppedFilterSamples+st.DroppedSamples || st.SamplesWritten != st.SamplesFiltered {
		t.Fatalf("stats do not add up: %+v", st)
	}
}
