// Package cpu is the CPU backend of the pipeline: the ring lives on the Go
// heap and the consumer goroutine runs the stage chain (backend/cpu.Chain)
// on each block.
package cpu

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// backend runs the chain on the consumer goroutine.
type backend struct {
	chain *Chain
	ring  *pipeline.Ring
	out   []float32

	// mu orders retunes against blocks: the consumer takes it once per
	// block to apply what is pending and count the block's input, so the
	// index Retune reports is the one the retune takes effect at.
	mu      sync.Mutex
	pending []*Prepared
	desc    stage.Chain // the chain with every accepted retune, under mu
	seen    int64       // chain inputs of the blocks taken, under mu
	gen     uint64      // retunes accepted, under mu
	watch   atomic.Pointer[func(int, []float32)]
}

// New returns a backend that runs c on blocks of at most maxBlock
// samples.
func New(c stage.Chain, maxBlock int) (pipeline.Backend, error) {
	ch, err := NewChain(c, maxBlock)
	if err != nil {
		return nil, err
	}
	return &backend{chain: ch, desc: ch.desc}, nil
}

// NewBackend returns a backend that filters with fir (one plain FIR stage)
// on the calling goroutine. fir must have been built for at least the
// run's block size.
func NewBackend(fir *filter.FIR) pipeline.Backend {
	if fir == nil {
		return &backend{}
	}
	desc := stage.FIR(1, fir.Complex(), fir.Taps())
	c := &Chain{desc: desc, max: fir.MaxBlock()}
	c.push(desc.Stages[0], stage.Input{Rate: 1, Complex: fir.Complex(), MaxIn: fir.MaxBlock(), Channels: 1}, stage.FIRProcessor(fir))
	return &backend{chain: c, desc: desc}
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
	b.chain.useMapped(nil) // until UseRegion: a backend run again may read another source
	b.chain.checkViews(nil)
	b.out = make([]float32, b.chain.MaxOut(l.BlockSize)*pipeline.FrameValues(d.OutChannels(), d.OutComplex()))
	// Every block writes it, and the buffers between the stages: their
	// pages are faulted in now, in the run's startup, not on the first
	// block's clock (2 MiB for 256 Ki complex samples: 512 faults).
	clear(b.out)
	b.chain.fault()
	return r, nil
}

func (b *backend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	in := len(blk.Samples) / pipeline.FrameValues(b.chain.desc.Channels, b.chain.desc.Complex)
	b.mu.Lock()
	for i, p := range b.pending {
		b.chain.Apply(p)
		b.pending[i] = nil
	}
	b.pending = b.pending[:0]
	b.seen += int64(in)
	b.mu.Unlock()
	if w := b.watch.Load(); w != nil {
		b.chain.watch = *w
	} else {
		b.chain.watch = nil
	}
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

// UseRegion takes blocks of float32 values in place from the source's
// memory (pipeline.RegionBackend), a recording mapped from the page
// cache: the chain's first stage reads them there, saving the copy into
// the ring. A file on one core ran 19 % faster, on two 25 %
// (medians of bench/cores_cpu.sh's 8 rounds)
// (docs/THROUGHPUT.md). Stored integers are read into the ring, decoded.
func (b *backend) UseRegion(region []byte, encoding string) (bool, error) {
	if encoding != "" || b.chain == nil {
		return false, nil
	}
	b.chain.useMapped(region)
	return true, nil
}

// ScanViews has the chain check the values of the blocks it takes in
// place for NaN and ±Inf itself (pipeline.ViewScanner): each segment on
// the core that filters it, which then finds it in its cache. A 16 Mi-
// sample file through 129 taps on two cores ran 30–40 % faster, on one
// about 10 % (bench/cores_cpu.sh, side by side; docs/THROUGHPUT.md).
func (b *backend) ScanViews(check func([]float32) error) {
	if b.chain != nil {
		b.chain.checkViews(check)
	}
}

// Chain returns the chain with every retune accepted so far.
func (b *backend) Chain() stage.Chain {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.desc
}

// Retune prepares the changes and schedules them together for the next
// block the consumer takes (see pipeline.Retuner).
func (b *backend) Retune(changes ...stage.Retune) ([]stage.Retune, error) {
	if b.chain == nil {
		return nil, errNoChain
	}
	for {
		// The kernels are built outside the lock, so that the consumer is
		// never held up by it, against the chain as it will be when the
		// changes land (pending retunes included); if another retune came
		// in meanwhile, they are checked again.
		b.mu.Lock()
		desc, gen := b.desc, b.gen
		b.mu.Unlock()
		ps := make([]*Prepared, 0, len(changes))
		for _, c := range changes {
			p, err := b.chain.prepareOn(desc, c.Index, c.Stage)
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
			desc = p.desc
		}
		b.mu.Lock()
		if b.gen != gen {
			b.mu.Unlock()
			continue
		}
		b.gen++
		b.pending = append(b.pending, ps...)
		b.desc = desc
		out := make([]stage.Retune, len(ps))
		for k, p := range ps {
			out[k] = stage.Retune{Index: p.index, Stage: p.stage, ChainAt: b.seen, At: desc.InputAt(p.index, b.seen)}
		}
		b.mu.Unlock()
		return out, nil
	}
}

// Watch installs w, called for every block with the input and each
// stage's output (see pipeline.Watcher).
func (b *backend) Watch(w func(point int, samples []float32)) {
	if w == nil {
		b.watch.Store(nil)
		return
	}
	b.watch.Store(&w)
}

// mapCostRatio is how much dearer touching a region must be than reading
// it for the CPU backend to have it read (PreferRead). The chain reads
// each value once either way, so the cheaper way in wins; near parity the
// views keep the edge of spreading their first touch over every core that
// filters, where one or two goroutines read. On the 2-core development
// VM, a file in small folios took 2.5–6.5 times as long to touch as to
// read, and reading it ran 2.2–2.8× the views on one core
// (docs/THROUGHPUT.md); a freshly written one, and a host with nested
// paging in hardware, touch in a fraction of the read.
const mapCostRatio = 1.5

// PreferRead has a file read into the ring rather than mapped when
// faulting its pages in costs more than reading them
// (pipeline.ReadChooser).
func (b *backend) PreferRead(touch, read time.Duration) bool {
	return float64(touch) > mapCostRatio*float64(read)
}
