package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unsafe"

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

// Region returns the memory the samples are in, for a pipeline that hands
// blocks to a backend in place (pipeline.Viewer). The samples must start
// and end on page boundaries (allocate them with mmap for that).
func (m *Memory) Region() ([]byte, error) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.x))), 4*len(m.x))
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%pageSize != 0 || uintptr(len(b))%pageSize != 0 {
		return nil, errors.New("capture: memory source: samples not page-aligned")
	}
	return b, nil
}

// View returns the next up to n values in place (pipeline.Viewer).
func (m *Memory) View(ctx context.Context, n int) ([]float32, error) {
	if m.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n -= n % m.info.Channels()
	k := min(n, len(m.x)-m.pos)
	v := m.x[m.pos : m.pos+k : m.pos+k]
	m.pos += k
	if k < n {
		return v, io.EOF
	}
	return v, nil
}
