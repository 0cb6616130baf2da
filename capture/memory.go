package capture

import (
	"context"
	"fmt"
	"io"

	"github.com/sigproc/sigproc/internal/par"
)

// copyMin is the smallest part of a copy worth a goroutine of its own.
const copyMin = 256 << 10 // values

// Memory is a source that reads samples held in memory, for benchmarks
// and tests: the stream is the values, once. Large reads are copied in
// parallel parts, so the source keeps up with a GPU's copy engine.
type Memory struct {
	x      []float32
	pos    int
	info   Info
	pool   *par.Pool
	dst    []float32 // the read in progress
	part   func(lo, hi int) error
	closed bool
}

// NewMemory returns a source reading x (interleaved I,Q when
// info.Complex). The caller must not change x while the source is in use.
func NewMemory(x []float32, info Info) (*Memory, error) {
	if err := checkRate(info.SampleRate); err != nil {
		return nil, fmt.Errorf("capture: NewMemory: %w", err)
	}
	if len(x)%info.Channels() != 0 {
		return nil, fmt.Errorf("capture: NewMemory: %d values are not whole %s samples", len(x), kind(info.Complex))
	}
	m := &Memory{x: x, info: info, pool: par.NewPool(fileWorkers)}
	m.part = m.copyPart
	return m, nil
}

// Info implements [Source].
func (m *Memory) Info() Info { return m.info }

// Read implements [Source].
func (m *Memory) Read(ctx context.Context, dst []float32) (int, error) {
	if m.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkDst(dst, m.info.Channels()); err != nil {
		return 0, err
	}
	n := min(len(dst), len(m.x)-m.pos)
	m.dst = dst[:n]
	_ = m.pool.Do(n, copyMin, 1024, m.part)
	m.dst = nil
	m.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

func (m *Memory) copyPart(lo, hi int) error {
	copy(m.dst[lo:hi], m.x[m.pos+lo:m.pos+hi])
	return nil
}

// Close implements [Source].
func (m *Memory) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	m.pool.Close()
	return nil
}
