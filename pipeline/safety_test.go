package pipeline

import (
	"context"
	"errors"
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
