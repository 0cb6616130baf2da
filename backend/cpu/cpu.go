// Package cpu is the CPU backend of the pipeline: the ring lives on the Go
// heap and the consumer goroutine runs the streaming FIR on each block.
package cpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
)

// backend filters on the consumer goroutine.
type backend struct {
	fir  *filter.FIR
	ring *pipeline.Ring
	out  []float32
}

// NewBackend returns a backend that filters with fir on the calling
// goroutine. fir must have been built for at least the run's block size.
func NewBackend(fir *filter.FIR) pipeline.Backend { return &backend{fir: fir} }

func (b *backend) Name() string { return "cpu" }

func (b *backend) Start(_ context.Context, l pipeline.Layout) (*pipeline.Ring, error) {
	if b.fir == nil {
		return nil, errors.New("cpu: backend has no filter")
	}
	if b.fir.Complex() != (l.Channels == 2) {
		return nil, fmt.Errorf("cpu: filter complex=%v but stream has %d channels", b.fir.Complex(), l.Channels)
	}
	r, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, err
	}
	b.ring = r
	b.out = make([]float32, l.BlockValues())
	return r, nil
}

func (b *backend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	out := b.out[:len(blk.Samples)]
	err = b.fir.Process(out, blk.Samples)
	b.ring.Release()
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("filter block %d: %w", blk.Seq, err)
	}
	return pipeline.Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: out}, nil
}

func (b *backend) Close() error { return nil }
