package pipeline

import (
	"context"
	"runtime"
	"testing"
)

// everyReadLoses loses one sample before every read.
type everyReadLoses struct {
	countSource
	lost uint64
}

func (s *everyReadLoses) Read(ctx context.Context, dst []float32) (int, error) {
	s.lost++
	return s.countSource.Read(ctx, dst)
}
func (s *everyReadLoses) LostSamples() uint64 { return s.lost }

// heapSink is a plain (not indexed) sink that records the live heap.
type heapSink struct {
	blocks     int
	early, end uint64
}

func (h *heapSink) Write([]float32) error {
	h.blocks++
	if h.blocks == 1000 || h.blocks == 1<<17 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if h.blocks == 1000 {
			h.early = ms.HeapAlloc
		} else {
			h.end = ms.HeapAlloc
		}
	}
	return nil
}

// TestRunLossQueueDrains: the producer queues every rise of a
// LossySource's count for the consumer, which takes them for every sink,
// not only an IndexedSink: the live heap stays flat with a plain sink and
// a loss before every block.
func TestRunLossQueueDrains(t *testing.T) {
	const block = 16
	src := &everyReadLoses{countSource: countSource{total: (1 << 17) * block, ch: 1}}
	snk := &heapSink{}
	if _, err := Run(context.Background(), src, &scaleBackend{}, snk, Config{BlockSize: block, Slots: 4, Policy: PolicyBlock}, Options{}); err != nil {
		t.Fatal(err)
	}
	grew := int64(snk.end) - int64(snk.early)
	t.Logf("live heap grew by %d bytes over %d blocks", grew, snk.blocks)
	if grew > 1<<20 {
		t.Errorf("live heap grew by %d MB over a run with a plain sink: the loss queue is never drained", grew>>20)
	}
}
