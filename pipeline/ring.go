package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// Ring memory layout, in bytes from the start of the region handed to
// NewRing. The consumer is always a host goroutine: the CUDA backends copy a
// published block onward (zero-copy into the tagged words its kernel polls,
// explicit by DMA from the slot), so this layout is private to the package.
// A WordSource skips the slot's data and writes the zero-copy backend's
// tagged words itself (WordSlots); the slot header still carries the block.
//
//	[0,   128)  write_seq  uint64  blocks published by the producer
//	[128, 256)  read_seq   uint64  blocks consumed by the consumer
//	[256, ...)  Slots slots of SlotStride bytes each; slot i%Slots holds block i:
//	            +0  seq       uint64  block sequence number (gaps mean drops)
//	            +8  timestamp int64   capture time, ns on the run's monotonic clock
//	            +16 count     uint32  samples in the block (<= BlockSize)
//	            +128 data     float32 × BlockSize×Channels
//
// Each writer-owned header field sits on its own 128-byte line so producer and
// consumer never false-share, and slot data starts 128-byte aligned, which
// suits DMA and vector loads.
const (
	offWriteSeq    = 0
	offReadSeq     = 128
	headerSize     = 256
	slotheaderSize = 128
	offSlotSeq     = 0
	offSlotTime    = 8
	offSlotCount   = 16
	// Alignment is the alignment NewRing requires of the region.
	Alignment = 128
)

// ErrFull is returned by Ring.Acquire when the ring has no free slot and the
// caller asked not to wait.
var ErrFull = errors.New("pipeline: ring full")

// ErrClosed is returned by Ring.Acquire after Close.
var ErrClosed = errors.New("pipeline: ring closed")

// Layout is the geometry of a ring: Slots blocks of BlockSize frames of
// Channels float32 values each. A frame is one sample of every channel of
// the stream, each real (1 value) or complex I/Q (2): Channels is 1 for
// one real channel, 2 for one complex channel, N or 2N for N channels.
type Layout struct {
	BlockSize int
	Channels  int // float32 values per frame
	Slots     int
}

// MaxFrameValues bounds Layout.Channels: 4096 complex channels
// (capture.MaxChannels).
const MaxFrameValues = 8192

// FrameValues returns the float32 values of a frame of n channels (0 = 1),
// each complex or real.
func FrameValues(n int, complex bool) int {
	n = max(n, 1)
	if complex {
		return 2 * n
	}
	return n
}

// Validate reports whether the layout is usable.
func (l Layout) Validate() error {
	switch {
	case l.BlockSize <= 0:
		return fmt.Errorf("pipeline: block size must be > 0, got %d", l.BlockSize)
	case l.Channels < 1 || l.Channels > MaxFrameValues:
		return fmt.Errorf("pipeline: values per frame must be in 1..%d, got %d", MaxFrameValues, l.Channels)
	case l.Slots < 2:
		return fmt.Errorf("pipeline: ring needs at least 2 slots, got %d", l.Slots)
	case l.Slots&(l.Slots-1) != 0:
		return fmt.Errorf("pipeline: ring slots must be a power of two, got %d", l.Slots)
	case int64(l.BlockSize)*int64(l.Channels)*4 > 1<<30:
		return fmt.Errorf("pipeline: block of %d samples is larger than 1 GiB", l.BlockSize)
	}
	return nil
}

// BlockValues is the number of float32 values in one full block.
func (l Layout) BlockValues() int { return l.BlockSize * l.Channels }

// SlotStride is the distance in bytes between consecutive slots.
func (l Layout) SlotStride() int {
	return slotheaderSize + roundUp(l.BlockValues()*4, Alignment)
}

// Size is the number of bytes a region must have to hold the ring.
func (l Layout) Size() int { return headerSize + l.Slots*l.SlotStride() }

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// AlignedBytes returns a zeroed Go-heap region of n bytes aligned to
// Alignment, for rings that do not live in pinned memory.
func AlignedBytes(n int) []byte {
	buf := make([]byte, n+Alignment)
	off := int(-uintptr(unsafe.Pointer(&buf[0])) & (Alignment - 1))
	return buf[off : off+n : off+n]
}

// prefault writes one zero byte into each page of mem, a ring no block has
// been published in yet (NewRing reset its header; slot contents are
// undefined until written), so the kernel maps and zeroes the pages now
// rather than on the producer's first write into each slot.
func prefault(mem []byte) {
	step := os.Getpagesize()
	for i := 0; i < len(mem); i += step {
		mem[i] = 0
	}
}

// prefaultHeaders is prefault for a ring whose blocks are all views: only
// the slots' headers are written (a publish writes the block's header,
// not its data), so only their pages are faulted in.
func (r *Ring) prefaultHeaders() {
	for i := headerSize; i < len(r.mem); i += r.stride {
		r.mem[i] = 0
	}
}

// Block is one block read from a ring. Samples aliases ring memory and stays
// valid until the consumer calls Release.
type Block struct {
	Seq       uint64
	Timestamp int64     // ns on the run's clock
	Samples   []float32 // Count×Channels values
	// Raw is the block's values as the source stores them, in place, when
	// it was published encoded (PublishEncoded: an integer recording the
	// backend converts itself); Samples is then nil.
	Raw []byte
}

// Ring is a single-producer, single-consumer ring of fixed-size blocks laid
// out in a caller-provided memory region, which may be pinned host memory
// that a GPU copies from. One goroutine may call the producer methods
// (Acquire, Publish, Close) and one the consumer methods (Next, Peek,
// Release) concurrently.
type Ring struct {
	l      Layout
	mem    []byte
	stride int
	mask   uint64
	write  *atomic.Uint64 // in mem: published blocks
	read   *atomic.Uint64 // in mem: consumed blocks
	closed atomic.Bool
	// producer-local: slot handed out by Acquire but not yet published.
	acquired bool
	hook     PublishHook
	spin     time.Duration // consumer: busy-wait this long before parking
	// A side that has waited past its spin parks on its waker, and the
	// other side wakes it: Publish and Close the consumer, Release the
	// producer.
	filled, freed waker
	// views[i%Slots] is block i's samples when they were published in
	// place (PublishView), raws[i%Slots] its stored bytes when published
	// encoded (PublishEncoded); nil without EnableViews.
	views [][]float32
	raws  [][]byte
	words WordSlots     // a zero-copy backend's tagged input slots, if any
	tag   func() uint32 // WordSlot's tag: words.Tag of the acquired slot, bound once
}

// WordSlots are a backend's tagged-word input slots (the CUDA zero-copy
// transport's mapped ring), which a WordSource fills in place of the
// ring's float32 slot: block i goes to Slot(i), with the tag Tag(i) gives
// (Ring.WordSlot). A block written there is published with PublishWords,
// which calls Published instead of the publish hook; its Block.Samples
// then holds the float32 slot's stale values, of the right length, and the
// backend reads the words instead.
type WordSlots struct {
	// Slot returns block index's words, at least BlockValues() long.
	Slot func(index uint64) []uint64
	// Tag returns the tag block index's words must carry. The backend
	// decides it at the first call, which the source makes once the
	// block's values are ready, just before it writes the first word, and
	// only when it writes one (WordSource.ReadWords; the
	// zero-copy kernel's tag also carries which taps the block uses, so a
	// retune accepted before then applies to this block); asking again
	// for the same index, after a write that was not published, gives the
	// same tag.
	Tag func(index uint64) uint32
	// Published is called by PublishWords, on the producer goroutine,
	// with the block's index and the values written, before the block
	// becomes visible (the backend pads a short block there).
	Published func(index uint64, values int)
}

// SetWordSlots offers ws to a WordSource; call it before the producer
// starts. Its three functions must be set, or none.
func (r *Ring) SetWordSlots(ws WordSlots) error {
	if (ws.Slot == nil) != (ws.Published == nil) || (ws.Slot == nil) != (ws.Tag == nil) {
		return errors.New("pipeline: SetWordSlots needs Slot, Tag and Published")
	}
	r.words, r.tag = ws, nil
	if ws.Tag != nil {
		r.tag = func() uint32 { return ws.Tag(r.write.Load()) }
	}
	return nil
}

// WordSlot returns the tagged words of the slot Acquire handed out and the
// function that gives the tag its block carries (WordSlots.Tag, for a
// WordSource to call just before it writes); ok is false without word
// slots or an acquired slot.
func (r *Ring) WordSlot() (words []uint64, tag func() uint32, ok bool) {
	if r.words.Slot == nil || !r.acquired {
		return nil, nil, false
	}
	return r.words.Slot(r.write.Load())[:r.l.BlockValues()], r.tag, true
}

// PublishWords is Publish for a block written into WordSlot's words.
func (r *Ring) PublishWords(count int, seq uint64, ts int64) error {
	if r.words.Published == nil {
		return errors.New("pipeline: PublishWords without word slots")
	}
	return r.publish(count, seq, ts, nil, nil, true)
}

// SetSpin makes Next busy-wait, without yielding, for up to d before
// it parks until Publish wakes it. Latency-critical consumers set it to
// more than the block period, trading a core for microseconds; the default
// parks after a few microseconds.
func (r *Ring) SetSpin(d time.Duration) { r.spin = d }

// PublishHook is called by Publish, on the producer goroutine, with the
// block's absolute index and contents just before the block becomes visible.
// The CUDA zero-copy backend uses it to copy each block into the tagged
// words its kernel polls, when the source could not write them itself
// (see WordSlots).
type PublishHook func(index uint64, b Block)

// SetPublishHook installs h; call it before the producer starts.
func (r *Ring) SetPublishHook(h PublishHook) { r.hook = h }

// NewRing lays a ring over mem, which must be at least l.Size() bytes and
// aligned to Alignment. The header is reset; slot contents are left as they
// are.
func NewRing(mem []byte, l Layout) (*Ring, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if len(mem) < l.Size() {
		return nil, fmt.Errorf("pipeline: ring needs %d bytes, region has %d", l.Size(), len(mem))
	}
	if p := uintptr(unsafe.Pointer(&mem[0])); p%Alignment != 0 {
		return nil, fmt.Errorf("pipeline: ring region at %#x is not %d-byte aligned", p, Alignment)
	}
	r := &Ring{
		l:      l,
		mem:    mem[:l.Size()],
		stride: l.SlotStride(),
		mask:   uint64(l.Slots - 1),
		write:  (*atomic.Uint64)(unsafe.Pointer(&mem[offWriteSeq])),
		read:   (*atomic.Uint64)(unsafe.Pointer(&mem[offReadSeq])),
	}
	r.filled.ch, r.freed.ch = make(chan struct{}, 1), make(chan struct{}, 1)
	r.write.Store(0)
	r.read.Store(0)
	return r, nil
}

// Layout returns the ring's geometry.
func (r *Ring) Layout() Layout { return r.l }

// limit lowers the ring's depth to slots, a power of two between 2 and
// its own, before any block is published: the slots past it are never
// used, and Mem no longer holds them.
func (r *Ring) limit(slots int) {
	r.l.Slots = slots
	r.mask = uint64(slots - 1)
	r.mem = r.mem[:r.l.Size()]
}

// Mem returns the region the ring lives in.
func (r *Ring) Mem() []byte { return r.mem }

// Written returns the number of blocks published so far.
func (r *Ring) Written() uint64 { return r.write.Load() }

// ReadCount returns the number of blocks consumed so far.
func (r *Ring) ReadCount() uint64 { return r.read.Load() }

func (r *Ring) slot(i uint64) []byte {
	off := headerSize + int(i&r.mask)*r.stride
	return r.mem[off : off+r.stride]
}

func (r *Ring) data(s []byte, n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[slotheaderSize])), n)
}

// Acquire returns the data area of the next free slot, BlockValues() long,
// for the producer to fill before Publish. When the ring is full it waits for
// the consumer if wait is true, and otherwise returns ErrFull at once so a
// live source can drop the block and count it.
func (r *Ring) Acquire(ctx context.Context, wait bool) ([]float32, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	w := r.write.Load()
	if w-r.read.Load() >= uint64(r.l.Slots) {
		if !wait {
			return nil, ErrFull
		}
		full := func() bool { return w-r.read.Load() >= uint64(r.l.Slots) }
		b := backoff{eager: true}
		for full() {
			if err := b.wait(ctx, &r.freed, full); err != nil {
				return nil, err
			}
		}
	}
	r.acquired = true
	return r.data(r.slot(w), r.l.BlockValues()), nil
}

// AcquireAhead returns the data area of the slot k after the next free
// one, waiting for the consumer until it is free, for a producer that
// fills several slots at once (a ParallelSource's reads). The slots are
// still published in order: Acquire, which then returns the slot already
// free at once, and Publish, one after another.
func (r *Ring) AcquireAhead(ctx context.Context, k int) ([]float32, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if k < 0 || k >= r.l.Slots {
		return nil, fmt.Errorf("pipeline: slot %d ahead of a %d-slot ring", k, r.l.Slots)
	}
	w := r.write.Load() + uint64(k)
	full := func() bool { return w-r.read.Load() >= uint64(r.l.Slots) }
	var b backoff // not eager: it issues reads that readers wait for
	for full() {
		if err := b.wait(ctx, &r.freed, full); err != nil {
			return nil, err
		}
	}
	return r.data(r.slot(w), r.l.BlockValues()), nil
}

// Publish makes the slot returned by Acquire visible to the consumer, with
// count samples (not values), sequence number seq and capture timestamp ts.
// The slot header is written with plain stores and write_seq with one atomic
// aligned 8-byte store, which orders after them (x86 TSO; a release store on
// arm64), so a consumer that sees write_seq also sees the header and data.
func (r *Ring) Publish(count int, seq uint64, ts int64) error {
	return r.publish(count, seq, ts, nil, nil, false)
}

// EnableViews lets the producer publish views (PublishView); call it
// before the producer and the consumer start.
func (r *Ring) EnableViews() {
	r.views, r.raws = make([][]float32, r.l.Slots), make([][]byte, r.l.Slots)
}

// PublishEncoded is PublishView for a block of count samples the source
// stores encoded (EncodedViewer): the slot carries raw, the stored bytes.
func (r *Ring) PublishEncoded(raw []byte, count int, seq uint64, ts int64) error {
	if r.views == nil {
		return errors.New("pipeline: PublishEncoded without EnableViews")
	}
	if len(raw) == 0 && count > 0 {
		return errors.New("pipeline: encoded block without bytes")
	}
	return r.publish(count, seq, ts, nil, raw, false)
}

// PublishView is Publish for a block whose samples stay where the source
// holds them (see Viewer): the slot carries view instead of a copy. view
// must stay valid until the consumer has released the block.
func (r *Ring) PublishView(view []float32, seq uint64, ts int64) error {
	if r.views == nil {
		return errors.New("pipeline: PublishView without EnableViews")
	}
	if len(view)%r.l.Channels != 0 || len(view) > r.l.BlockValues() {
		return fmt.Errorf("pipeline: view of %d values is not up to %d whole %d-value samples", len(view), r.l.BlockSize, r.l.Channels)
	}
	return r.publish(len(view)/r.l.Channels, seq, ts, view, nil, false)
}

func (r *Ring) publish(count int, seq uint64, ts int64, view []float32, raw []byte, words bool) error {
	if !r.acquired {
		return errors.New("pipeline: Publish without Acquire")
	}
	if count < 0 || count > r.l.BlockSize {
		return fmt.Errorf("pipeline: block count %d outside [0, %d]", count, r.l.BlockSize)
	}
	w := r.write.Load()
	s := r.slot(w)
	*(*uint64)(unsafe.Pointer(&s[offSlotSeq])) = seq
	*(*int64)(unsafe.Pointer(&s[offSlotTime])) = ts
	*(*uint32)(unsafe.Pointer(&s[offSlotCount])) = uint32(count)
	if r.views != nil {
		// Written before write_seq's store, so the consumer that sees the
		// block sees its view (or nil: the samples are in the slot).
		r.views[w&r.mask], r.raws[w&r.mask] = view, raw
	}
	r.acquired = false
	switch {
	case words:
		r.words.Published(w, count*r.l.Channels)
	case r.hook != nil:
		r.hook(w, Block{Seq: seq, Timestamp: ts, Samples: r.data(s, count*r.l.Channels)})
	}
	r.write.Store(w + 1)
	r.filled.wake()
	return nil
}

// Close tells the consumer that no more blocks follow; Next returns io.EOF
// once the published blocks are drained.
func (r *Ring) Close() {
	r.closed.Store(true)
	r.filled.wake()
}

// Next waits for the next published block and returns it without consuming
// it; call Release when done with its samples. It returns io.EOF after Close
// once every block has been consumed.
func (r *Ring) Next(ctx context.Context) (Block, error) {
	rd := r.read.Load()
	empty := func() bool { return r.write.Load() == rd && !r.closed.Load() }
	b := backoff{spin: r.spin}
	for r.write.Load() == rd {
		if r.closed.Load() && r.write.Load() == rd {
			return Block{}, io.EOF
		}
		if err := b.wait(ctx, &r.filled, empty); err != nil {
			return Block{}, err
		}
	}
	return r.blockAt(rd), nil
}

// Peek returns block i (absolute index, at or after the next unreleased
// block) if it has been published, without waiting; ok is false otherwise.
// A consumer that works on several blocks at once (the explicit CUDA
// transport) looks ahead with it, and releases them in order.
func (r *Ring) Peek(i uint64) (Block, bool) {
	if r.write.Load() <= i {
		return Block{}, false
	}
	return r.blockAt(i), true
}

func (r *Ring) blockAt(i uint64) Block {
	s := r.slot(i)
	n := int(*(*uint32)(unsafe.Pointer(&s[offSlotCount])))
	if n > r.l.BlockSize { // memory shared with another writer: never trust it blindly
		n = r.l.BlockSize
	}
	b := Block{
		Seq:       *(*uint64)(unsafe.Pointer(&s[offSlotSeq])),
		Timestamp: *(*int64)(unsafe.Pointer(&s[offSlotTime])),
	}
	switch {
	case r.raws != nil && r.raws[i&r.mask] != nil:
		b.Raw = r.raws[i&r.mask]
	case r.views != nil && r.views[i&r.mask] != nil:
		b.Samples = r.views[i&r.mask][:n*r.l.Channels]
	default:
		b.Samples = r.data(s, n*r.l.Channels)
	}
	return b
}

// Release consumes the block returned by the last Next, freeing its slot.
func (r *Ring) Release() {
	r.read.Add(1)
	r.freed.wake()
}

// backoff spins briefly, then yields, then parks on a waker until the
// other side wakes it, so a waiting side reacts within microseconds
// whether the other is busy or not, and costs no CPU when it is idle.
// With spin set it keeps spinning for that long before it parks.
//
// Before the waker, an idle side slept with intervals growing to 1 ms: a
// CPU pipeline fed a 256-sample block every 100 µs answered in 530 µs at
// the median (probe), and one fed every 10 µs dropped blocks.
type backoff struct {
	n     int
	spin  time.Duration
	start time.Time
	// eager parks right after the short spin, without yielding: a
	// producer waiting for a free slot, which nothing hurries (the ring
	// is full). Its yields there took a core from the consumer's
	// goroutines at every block of a 16-core run (its trace, 2026-12-06).
	eager bool
}

// wait waits a little while the caller's condition holds, and parks on w
// once it has spun and yielded long enough; waiting reports whether it
// still holds, checked after the park is announced so that no wake is
// lost.
func (b *backoff) wait(ctx context.Context, w *waker, waiting func() bool) error {
	b.n++
	if b.n&63 == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	switch {
	case b.n < 64:
		return nil
	case b.spin > 0:
		// Pure spin: no runtime.Gosched here. Latency-critical consumers
		// lock their OS thread (CUDA contexts are per thread), and a locked
		// goroutine that yields has to be handed back to its thread through
		// a futex wake, which costs microseconds every time.
		if b.start.IsZero() {
			b.start = time.Now()
		}
		if b.n&63 != 0 || time.Since(b.start) < b.spin {
			return nil
		}
		b.spin = 0 // spun long enough: park
		b.n = 256
	case b.n < 256 && !b.eager:
		runtime.Gosched()
		return nil
	}
	return w.park(ctx, waiting)
}

// waker parks one side of the ring until the other wakes it. The parked
// flag is set before the waiting side checks its condition again, and the
// waking side publishes its change before it reads the flag, so one of
// the two always sees the other (both are sequentially consistent
// atomics); the channel holds one wake, so a wake that finds no one
// parked yet is kept for the next park.
type waker struct {
	parked atomic.Bool
	ch     chan struct{}
}

// wake wakes the parked side, if any; it costs one atomic load when none
// is parked.
func (w *waker) wake() {
	if w.parked.Load() {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// park waits for a wake or ctx's end, unless waiting no longer holds.
func (w *waker) park(ctx context.Context, waiting func() bool) error {
	w.parked.Store(true)
	defer w.parked.Store(false)
	if !waiting() {
		return nil
	}
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
