package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/filter"
)

// cpuBackend filters on the host: the ring lives on the Go heap and the
// consumer goroutine runs the streaming FIR on each block.
type cpuBackend struct {
	fir  *filter.FIR
	ring *Ring
	out  []float32
}

// NewCPUBackend returns a backend that filters with fir on the calling
// goroutine. fir must have been built for at least the run's block size.
func NewCPUBackend(fir *filter.FIR) Backend { return &cpuBackend{fir: fir} }

func (b *cpuBackend) Name() string { return "cpu" }

func (b *cpuBackend) Start(_ context.Context, l Layout) (*Ring, error) {
	if b.fir == nil {
		return nil, errors.New("pipeline: cpu backend has no filter")
	}
	if b.fir.Complex() != (l.Channels == 2) {
		return nil, fmt.Errorf("pipeline: filter complex=%v but stream has %d channels", b.fir.Complex(), l.Channels)
	}
	r, err := NewRing(AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, err
	}
	b.ring = r
	b.out = make([]float32, l.BlockValues())
	return r, nil
}

func (b *cpuBackend) Next(ctx context.Context) (Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return Output{}, err
	}
	out := b.out[:len(blk.Samples)]
	err = b.fir.Process(out, blk.Samples)
	b.ring.Release()
	if err != nil {
		return Output{}, fmt.Errorf("filter block %d: %w", blk.Seq, err)
	}
	return Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

func (b *cpuBackend) Close() error { return nil }
