// Package cpu is the CPU backend of the pipeline: the ring lives on the Go
// heap and the consumer goroutine runs the stage chain (backend/cpu.Chain)
// on each block.
package cpu

import (
	"context"
	"fmt"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// backend runs the chain on the consumer goroutine.
type backend struct {
	chain *Chain
	ring  *pipeline.Ring
	out   []float32
}

// New returns a backend that runs c on blocks of at most maxBlock
// samples.
func New(c stage.Chain, maxBlock int) (pipeline.Backend, error) {
	ch, err := NewChain(c, maxBlock)
	if err != nil {
		return nil, err
	}
	return &backend{chain: ch}, nil
}

// NewBackend returns a backend that filters with fir (one plain FIR stage)
// on the calling goroutine. fir must have been built for at least the
// run's block size.
func NewBackend(fir *filter.FIR) pipeline.Backend {
	if fir == nil {
		return &backend{}
	}
	c := &Chain{desc: stage.FIR(1, fir.Complex(), fir.Taps()), max: fir.MaxBlock(),
		procs: []processor{firProc{fir}}, kinds: []string{string(stage.KindFIR)}}
	return &backend{chain: c}
}

func (b *backend) Name() string { return "cpu" }

func (b *backend) Start(_ context.Context, l pipeline.Layout) (*pipeline.Ring, error) {
	if b.chain == nil {
		return nil, errNoChain
	}
	d := b.chain.desc
	if want := pipeline.FrameValues(d.Channels, d.Complex); l.Channels != want {
		return nil, fmt.Errorf("cpu: chain input is %d %s channel(s) (%d values per frame) but the stream has %d values per frame",
			d.ChannelCount(), map[bool]string{false: "real", true: "complex"}[d.Complex], want, l.Channels)
	}
	if l.BlockSize > b.chain.max {
		return nil, fmt.Errorf("cpu: block size %d exceeds the chain's maximum %d", l.BlockSize, b.chain.max)
	}
	r, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return nil, err
	}
	b.ring = r
	b.out = make([]float32, b.chain.MaxOut(l.BlockSize)*pipeline.FrameValues(d.Channels, d.OutComplex()))
	return r, nil
}

func (b *backend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	in := len(blk.Samples) / pipeline.FrameValues(b.chain.desc.Channels, b.chain.desc.Complex)
	n, err := b.chain.Process(b.out, blk.Samples)
	b.ring.Release()
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("filter block %d: %w", blk.Seq, err)
	}
	return pipeline.Output{Seq: blk.Seq, Timestamp: blk.Timestamp, Samples: b.out[:n], In: in}, nil
}

func (b *backend) Close() error {
	if b.chain != nil {
		b.chain.Close()
	}
	return nil
}
