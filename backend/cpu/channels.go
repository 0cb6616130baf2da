package cpu

import (
	"fmt"
	"runtime"

	"github.com/sigproc/sigproc/internal/par"
	"github.com/sigproc/sigproc/stage"
)

// perChannel runs one single-channel Chain per channel of a frame, each with
// its own state, on a pool of goroutines (one part of the channels each):
// the channels are independent, so a block of N channels takes about the
// time of N/cores blocks of one. Each part de-interleaves its channels from
// the frames, runs them, and writes their outputs back interleaved.
type perChannel struct {
	per       []*Chain
	n         int // channels
	inV, outV int // values per sample of one channel, in and out
	in, out   [][]float32
	got       []int   // values each channel output in the current call
	errs      []error // each channel's error in the current call
	pool      *par.Pool
	// m.part, m.splitFrames, m.joinFrames, made once: Do allocates nothing.
	run, split, join func(lo, hi int) error
	src, dst         []float32 // the current call's buffers
	mem              mapped    // the source's memory src may lie in
	frames           int       // input frames of the current chunk
	chunk            int       // frames per chunk
	// watch, when set, is shown every stage's output but the last, as
	// frames of every channel joined in tap (made on the first call).
	watch func(point int, samples []float32)
	tap   []float32
}

// newChannels builds c.Channels copies of c's one-channel chain. Each
// runs a chunk of frames at a time, so it is built for a chunk, not for
// maxBlock: the channels' memory does not grow with the block.
func newChannels(c stage.Chain, maxBlock int) (*perChannel, error) {
	n := c.ChannelCount()
	one := c
	one.Channels = 1
	m := &perChannel{n: n, inV: valuesOf(c.Complex), outV: valuesOf(c.OutComplex()),
		got: make([]int, n), errs: make([]error, n)}
	// About 256 KiB of input and of output per chunk, whole blocks of the
	// filter's FFT size or more (a short chunk costs an FFT stage no more
	// than a block split by the ring would).
	m.chunk = min(maxBlock, max(4096, (256<<10)/(4*n*max(m.inV, m.outV))))
	for i := 0; i < n; i++ {
		ch, err := newChain(one, m.chunk, 1) // the channels share the cores
		if err != nil {
			return nil, err
		}
		m.per = append(m.per, ch)
		m.in = append(m.in, make([]float32, m.chunk*m.inV))
		m.out = append(m.out, make([]float32, ch.MaxOut(m.chunk)*m.outV))
	}
	m.pool = par.NewPool(min(n, runtime.GOMAXPROCS(0)))
	m.run, m.join = m.part, m.joinFrames
	// Splitting reads the frames, which may lie in the source's memory.
	m.split = func(lo, hi int) error { return m.mem.guard(m.splitFrames, lo, hi) }
	return m, nil
}

// process runs every channel of the frames in src; dst receives the
// output frames. It returns the float32 values written. The frames are
// split into channels and joined again by ranges of frames, so that no two
// goroutines write the same cache line, and the channels are run at once.
func (m *perChannel) process(dst, src []float32) (int, error) {
	fv := m.n * m.inV
	if len(src)%fv != 0 {
		return 0, fmt.Errorf("cpu: %d values are not whole %d-channel frames", len(src), m.n)
	}
	frames := len(src) / fv
	defer func() { m.src, m.dst = nil, nil }()
	// In chunks that keep every channel's input and output in the cache
	// between the split, the filtering and the join.
	total := 0
	for lo := 0; lo < frames; lo += m.chunk {
		hi := min(lo+m.chunk, frames)
		m.src, m.dst, m.frames = src[lo*fv:hi*fv], dst[total:], hi-lo
		if err := m.pool.Do(m.frames, frameGrain, 64, m.split); err != nil {
			return 0, err
		}
		if err := m.pool.Do(m.n, 1, 1, m.run); err != nil {
			return 0, err
		}
		k := m.got[0]
		for c := 1; c < m.n; c++ {
			if m.got[c] != k { // the same stages on the same count: never
				return 0, fmt.Errorf("cpu: channel %d output %d values, channel 0 %d", c, m.got[c], k)
			}
		}
		if k*m.n > len(m.dst) {
			return 0, fmt.Errorf("cpu: dst holds %d values, need %d", len(dst), total+k*m.n)
		}
		m.pool.Do(k/m.outV, frameGrain, 64, m.join)
		total += k * m.n
		if m.watch != nil {
			m.show()
		}
	}
	return total, nil
}

// show joins each stage's output but the last, of the current chunk,
// into frames of every channel and passes them to watch: what one chain
// on whole frames would have shown. It runs only while a watcher is
// installed (the control page), on the caller's goroutine.
func (m *perChannel) show() {
	one := m.per[0]
	if m.tap == nil {
		size := 0
		for _, b := range one.bufs {
			size = max(size, len(b))
		}
		m.tap = make([]float32, size*m.n)
	}
	for i := range one.bufs {
		k, v := one.outN[i], one.outV[i]
		for c, p := range m.per {
			scatter(m.tap[c*v:], p.bufs[i][:k], m.n*v, v)
		}
		m.watch(i, m.tap[:k*m.n])
	}
}

// frameGrain is the fewest frames worth a goroutine when splitting or
// joining channels.
const frameGrain = 4096

// transposeTile is the frames split or joined at a time: a tile of every
// channel stays in the L1 cache while each channel's run is copied.
const transposeTile = 256

// splitFrames copies frames [lo, hi) of src into the channels' inputs.
func (m *perChannel) splitFrames(lo, hi int) error {
	n, v := m.n, m.inV
	for t := lo; t < hi; t += transposeTile {
		e := min(t+transposeTile, hi)
		for c := range n {
			gather(m.in[c][t*v:e*v], m.src[(t*n+c)*v:], n*v, v)
		}
	}
	return nil
}

// joinFrames writes output frames [lo, hi) from the channels' outputs.
func (m *perChannel) joinFrames(lo, hi int) error {
	n, v := m.n, m.outV
	for t := lo; t < hi; t += transposeTile {
		e := min(t+transposeTile, hi)
		for c := range n {
			scatter(m.dst[(t*n+c)*v:], m.out[c][t*v:e*v], n*v, v)
		}
	}
	return nil
}

// gather copies every stride-th sample (v values) of src into dst.
func gather(dst, src []float32, stride, v int) {
	if v == 1 {
		for i := range dst {
			dst[i] = src[i*stride]
		}
		return
	}
	for i, j := 0, 0; i+1 < len(dst); i, j = i+2, j+stride {
		p := src[j : j+2]
		dst[i], dst[i+1] = p[0], p[1]
	}
}

// scatter writes the samples (v values) of src to every stride-th place of
// dst.
func scatter(dst, src []float32, stride, v int) {
	if v == 1 {
		for i, x := range src {
			dst[i*stride] = x
		}
		return
	}
	for i, j := 0, 0; i+1 < len(src); i, j = i+2, j+stride {
		p := dst[j : j+2]
		p[0], p[1] = src[i], src[i+1]
	}
}

// part runs channels [lo, hi).
func (m *perChannel) part(lo, hi int) error {
	for c := lo; c < hi; c++ {
		k, err := m.per[c].Process(m.out[c], m.in[c][:m.frames*m.inV])
		if err != nil {
			return fmt.Errorf("channel %d: %w", c, err)
		}
		m.got[c] = k
	}
	return nil
}

// deinterleave copies channel c's values (v per sample) of the frames of n
// channels in src into dst.
func deinterleave(dst, src []float32, c, n, v int) {
	stride := n * v
	if v == 1 {
		for i, j := 0, c; i < len(dst); i, j = i+1, j+stride {
			dst[i] = src[j]
		}
		return
	}
	for i, j := 0, c*2; i < len(dst); i, j = i+2, j+stride {
		dst[i], dst[i+1] = src[j], src[j+1]
	}
}

func (m *perChannel) reset() {
	for _, c := range m.per {
		c.Reset()
	}
}

func (m *perChannel) close() { m.pool.Close() }

func valuesOf(complex bool) int {
	if complex {
		return 2
	}
	return 1
}
