package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rs/zerolog"
)

// Source is what the pipeline reads from; capture.Source satisfies it. Read
// fills dst completely unless the input ends (n < len(dst) with io.EOF) or
// fails, and returns the number of float32 values written.
type Source interface {
	Read(ctx context.Context, dst []float32) (int, error)
}

// Viewer is a Source whose samples already lie in memory that a backend
// may read directly: a float32 file mapped into memory, samples held in
// memory (capture.Raw on a float32 file, capture.Memory). When the backend
// takes the region (RegionBackend), blocks are published in place rather
// than copied into the ring.
type Viewer interface {
	Source
	// Region is the memory every view lies in, page-aligned, valid until
	// the source is closed; an error means the source cannot be viewed,
	// and the pipeline reads it instead.
	Region() ([]byte, error)
	// View returns the next up to n values in place, as Read would
	// return them (whole samples; io.EOF with the last ones at the end).
	View(ctx context.Context, n int) ([]float32, error)
}

// ParallelSource is a Source whose next blocks can be read at once, each
// whole on a goroutine of its own: a file read by position (capture.Raw on
// a regular file). The producer reserves blocks in order, reads several
// into ring slots at once (Config.Readers) and publishes them in order:
// one block split among all the goroutines instead waits for its slowest
// part, every block.
type ParallelSource interface {
	Source
	// Reserve takes the next up to n values (whole samples) and returns
	// where they start, for ReadReserved, and how many they are: fewer
	// than n only at the end, which ReadReserved then reports. ok is
	// false, with nothing taken, when the source cannot be read so (Read
	// it instead).
	Reserve(n int) (at int64, values int, ok bool)
	// ReadReserved reads the values reserved at at into dst, exactly as
	// many, on any goroutine, and returns as Read would: all of them
	// unless with an error, io.EOF (or the end's error) after the last
	// reservation.
	ReadReserved(dst []float32, at int64) (int, error)
}

// ParallelViewer is a ParallelSource and a Viewer that also hands its
// reservations out in place: once Region has mapped it, Reserve's at is
// the values' byte offset in the region.
type ParallelViewer interface {
	ParallelSource
	Viewer
	// ViewReserved returns the values reserved at at in place, as View
	// returns them, on any goroutine.
	ViewReserved(at int64, values int) ([]float32, error)
}

// EncodedParallelViewer is a ParallelViewer that may store its values
// encoded (an EncodedViewer): a backend that converts them itself takes
// its reservations as stored bytes, read into the ring or in place.
type EncodedParallelViewer interface {
	ParallelViewer
	EncodedViewer
	// ReadReservedEncoded reads the stored bytes of the values reserved
	// at at into dst, exactly as many bytes, as ReadReserved reads values.
	ReadReservedEncoded(dst []byte, at int64) (int, error)
	// ViewReservedEncoded returns the stored bytes of the values reserved
	// at at in place, as ViewReserved returns values.
	ViewReservedEncoded(at int64, values int) ([]byte, error)
}

// EncodedViewer is a Viewer that may store its samples in an integer
// encoding (a cs8 or ci16 recording): a backend that converts it itself
// takes the stored bytes in place (ViewEncoded), so that fewer bytes
// cross to it; a backend that cannot, refuses the region, and the source
// is read.
type EncodedViewer interface {
	Viewer
	// Encoding names how the region stores each value: "" for float32
	// (View gives the values), else one of the Enc* names (ViewEncoded
	// gives the bytes).
	Encoding() string
	// ViewEncoded returns the stored bytes of the next up to n values in
	// place, as View would return the values (whole samples; io.EOF with
	// the last ones at the end).
	ViewEncoded(ctx context.Context, n int) ([]byte, error)
}

// Value encodings an EncodedViewer names (little-endian integers, each
// scaled to [-1, 1) as capture decodes them).
const (
	EncInt8      = "int8"       // v / 2^7 (cs8)
	EncUint8SDR  = "uint8-sdr"  // (v − 127.5) / 127.5 (cu8, rtl_sdr)
	EncUint8Half = "uint8-half" // (v − 128) / 2^7 (8-bit WAV)
	EncInt16     = "int16"      // v / 2^15
	EncInt24     = "int24"      // v / 2^23, 3 bytes
	EncInt32     = "int32"      // v / 2^31
)

// WordSource is a Source that can write its next block straight into a
// zero-copy backend's tagged input words (the words its kernel polls, see
// Ring.SetWordSlots), so that no staging copy sits between capture and
// the GPU. A word is {float32 value in the low half, tag in the high
// half}, each stored with one aligned 8-byte store (internal/tagged's
// Write does that).
type WordSource interface {
	Source
	// ReadWords writes the next up to len(dst) values as tagged words
	// carrying tag() and returns how many it wrote, as Read would return
	// them (whole samples; fewer with io.EOF at the end, or an error).
	// n must count every word it wrote: a word written but not counted
	// would be taken by the kernel as part of the block. Call tag inside
	// ReadWords, once the values are ready (a paced source: once they
	// are due) and only when at least one word will be written, just
	// before writing: the backend decides there which parameters the
	// block takes and counts the block, so a retune accepted while the
	// source waited applies to this block rather than the next.
	ReadWords(ctx context.Context, dst []uint64, tag func() uint32) (int, error)
}

// RegionBackend is a Backend that can take blocks in place from a
// source's memory: UseRegion, called after Start and before the first
// block, prepares it (pins it for DMA) and reports whether the backend
// takes views. encoding is the region's (EncodedViewer.Encoding, "" for
// float32): a backend that cannot convert it returns false.
type RegionBackend interface {
	Backend
	UseRegion(region []byte, encoding string) (bool, error)
}

// MapCoster is a Viewer that can time, once Region has mapped it, a first
// read of n bytes of the region against reading as many from its file
// (capture.Raw.MapCost): what taking views costs where faulting the pages
// in is dear.
type MapCoster interface {
	Viewer
	MapCost(n int) (touch, read time.Duration, err error)
}

// ReadChooser is a RegionBackend that would rather have the source read
// into the ring than take its region when, measured by MapCost, touching
// the region costs more than reading it: PreferRead says so. A backend
// that reads every value once either way (the CPU's) gains nothing from
// the views then.
type ReadChooser interface {
	RegionBackend
	PreferRead(touch, read time.Duration) bool
}

// ms is d in milliseconds, for the log.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// MapCostBytes is what MapCost times: enough pages that one slow fault
// or timer tick does not decide (8 MiB: 2048 pages).
const MapCostBytes = 8 << 20

// RegionSharer is a RegionBackend that takes only part of a region in
// place, and has the rest read into the ring by a ParallelViewer's
// readers: the CPU's copies and the backend's own way in (a GPU pinning
// the page cache) then add up.
type RegionSharer interface {
	RegionBackend
	// InPlace reports whether the n bytes at offset off of the region
	// are taken in place; the others are read into the ring.
	InPlace(off, n int64) bool
}

// ScanLeaver is a Viewer that checks its views' values (capture counts
// NaN and ±Inf) and can leave that check to a backend that reads them
// (ViewScanner). Each part of a block is then checked on the core that
// filters it, while it is in that core's cache, instead of the producer
// bringing the whole block into its own core's cache first, for the
// others to fetch again: on a 2-core machine that fetch doubled the FIR's
// first pass over its input (docs/THROUGHPUT.md). Run leaves it only
// when every block is taken in place and none is dropped.
type ScanLeaver interface {
	Viewer
	// LeaveScan has View (and ViewReserved) return values unchecked from
	// now on and returns the check, which the reader must call once on
	// every value viewed, on any goroutine, before it reads them or any
	// value before them (a truncated file loses its end, so the check
	// meets the cut first): it returns the error View would have for
	// values it cannot read. nil leaves nothing.
	LeaveScan() func([]float32) error
}

// ViewScanner is a RegionBackend that checks the values of the views it
// takes in place itself (ScanLeaver): ScanViews, called after UseRegion,
// gives it the check, which it must call once on every value of every
// block, before it reads them, and whose error ends the block's
// processing. A RegionSharer is never given it.
type ViewScanner interface {
	RegionBackend
	ScanViews(check func([]float32) error)
}

// Sink is what the pipeline writes filtered samples to; sink.Sink satisfies
// it. The pipeline never closes the sink: its owner does, after Run.
type Sink interface {
	Write(samples []float32) error
}

// LossySource is a Source that knows how many samples were lost before
// they reached it: a ZMQ stream whose sender numbers its samples. Run
// moves the input index of the blocks read after a loss by it, so that an
// IndexedSink records the loss as a gap (at the start of the block whose
// read found it).
type LossySource interface {
	Source
	// LostSamples is the samples lost so far. Run reads it after each
	// Read, on the same goroutine.
	LostSamples() uint64
}

// IndexedSink is an optional extension of Sink. A sink implementing it
// receives every block through WriteIndexed with the input index of the
// block's first input sample (samples since the start of the source,
// dropped ones included: Seq × BlockSize, since every block but the last is
// full, plus what a LossySource lost before it) and the number of input samples the block came from, which differs
// from the samples written when the stages change the rate. An index
// beyond the end of the previous block's input means the samples in
// between were dropped, so such a sink can record where the gaps are.
type IndexedSink interface {
	WriteIndexed(index, inputs uint64, samples []float32) error
}

// Output is one filtered block. Samples belongs to the backend and is valid
// until the next call to Backend.Next.
type Output struct {
	Seq       uint64
	Timestamp int64 // capture time, ns on the run's clock
	// Samples is the backend's output for the block, at the output rate:
	// a decimating or resampling chain outputs fewer or more samples than
	// the block held (possibly none), and a shift makes a real block
	// complex (see Config.OutComplex).
	Samples []float32
	// In is the number of input samples (frames) of the block. 0 means
	// the backend keeps the rate and format: len(Samples)/channels. A
	// backend that changes either must set it: Run fails when the blocks'
	// reported inputs do not add up to what was published.
	In int
}

// Backend filters blocks. Start returns the ring the producer writes into;
// the backend chooses where it lives (Go heap, pinned or mapped host memory)
// and who consumes it (a host goroutine or a GPU kernel). Next returns the
// filtered blocks in order, and io.EOF once the ring is closed and drained.
// Next and Close are called from one goroutine.
type Backend interface {
	Name() string
	Start(ctx context.Context, l Layout) (*Ring, error)
	Next(ctx context.Context) (Output, error)
	Close() error
}

// Policy says what the producer does when the ring is full.
type Policy int

const (
	// PolicyBlock makes the producer wait for a free slot: nothing is lost,
	// the source is slowed down (files, pipes).
	PolicyBlock Policy = iota
	// PolicyDrop makes the producer discard the block it just captured and
	// count it, so a live source keeps its timing (ADCs, paced sources).
	PolicyDrop
)

// String returns the config spelling of the policy.
func (p Policy) String() string {
	switch p {
	case PolicyBlock:
		return "block"
	case PolicyDrop:
		return "drop"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Config is the geometry and policy of a run.
type Config struct {
	BlockSize int  // samples (frames) per block
	Complex   bool // every channel is interleaved I/Q
	// Channels is the number of channels in a frame, 0 = 1; each is run
	// through the stages independently, and the backend's output keeps
	// the frames interleaved as they came.
	Channels int
	// OutChannels is the number of channels in the backend's output
	// frames, 0 = Channels: a channelizer makes many of one.
	OutChannels int
	// OutComplex says the backend's output is complex although the input
	// is real (a frequency shift). A complex input always gives a complex
	// output.
	OutComplex bool
	Slots      int // ring depth, a power of two; 0 means DefaultSlots for Source
	// Source is what the default ring depth is sized for (Slots == 0).
	Source     RingSource
	Policy     Policy
	MaxSamples int64 // stop after this many input samples; 0 = until the source ends
	// Readers is how many blocks a ParallelSource is taken at once, each
	// on a goroutine of its own, at most half the ring's slots; 0 means
	// the CPUs but two (capped by MaxReaders and half the ring, and none
	// when that is fewer than half of those CPUs), or on 2 or 3 CPUs two
	// for a source read into the ring, and 1 takes one block at a time
	// (Read, or View). Only PolicyBlock runs without
	// Realtime take several.
	Readers int
	// Realtime pins and locks the capture side; the zero value does nothing.
	Realtime Realtime
}

// Layout is the ring's geometry Run gives the backend for cfg.
func (cfg Config) Layout() Layout {
	l := Layout{BlockSize: cfg.BlockSize, Channels: FrameValues(cfg.Channels, cfg.Complex), Slots: cfg.Slots}
	if l.Slots == 0 {
		src := cfg.Source
		if cfg.MaxSamples > 0 && (src.Frames == 0 || cfg.MaxSamples < src.Frames) {
			src.Frames = cfg.MaxSamples
		}
		l.Slots = DefaultSlots(l.BlockSize, l.Channels, src)
	}
	return l
}

// Stats are a run's counters, end to end. Input and output samples are
// counted apart, since a chain that decimates or resamples changes the
// rate. Every sample read from the source (input rate) is dropped at
// capture (DroppedSamples), dropped at the filter (DroppedFilterSamples) or
// filtered (SamplesFiltered): SamplesIn = DroppedSamples +
// DroppedFilterSamples + SamplesFiltered always. The filtered input became
// SamplesProduced output samples (output rate: equal to SamplesFiltered
// when the rate does not change, ceil(n/M) or ceil(n·L/M) of a stream of n
// for a decimation or resampling), and every produced sample is written
// (SamplesWritten) unless the sink failed on it. Gaps counts sequence
// numbers the consumer never saw.
type Stats struct {
	SamplesIn       uint64 // input samples read from the source, dropped ones included
	SamplesFiltered uint64 // input samples of the blocks the backend output
	SamplesProduced uint64 // output samples the backend produced for them
	SamplesWritten  uint64 // output samples the sink accepted
	// SamplesOut is SamplesWritten, kept for existing users.
	SamplesOut uint64
	Blocks     uint64 // blocks written to the sink
	// BlocksInPlace are the published blocks the backend took in place
	// from the source's memory (Viewer, RegionBackend); the others were
	// read or copied into the ring.
	BlocksInPlace uint64
	// DroppedBlocks and DroppedSamples are the loss at capture: blocks
	// discarded because the ring was full (PolicyDrop).
	DroppedBlocks  uint64
	DroppedSamples uint64
	// DroppedFilterBlocks and DroppedFilterSamples are the loss at the
	// filter: blocks published into the ring that never came out of the
	// backend (it failed, stopped early, or an error aborted the drain).
	// They are exact once Run returns; progress snapshots report zero,
	// since blocks still in flight are not lost.
	DroppedFilterBlocks  uint64
	DroppedFilterSamples uint64
	Gaps                 uint64 // missing sequence numbers seen by the consumer
	// SourceLost is the samples a LossySource lost before it read them
	// (not in SamplesIn); the input indices an IndexedSink sees count them.
	SourceLost uint64
	// Startup is the backend's start (a GPU context, kernels, pinned
	// buffers); Wall runs from then to the end, so MSps is the rate of
	// the stream itself.
	Startup     time.Duration
	Wall        time.Duration
	Interrupted bool // the run was stopped by its context (Ctrl-C)
	// RingSlots is the ring's depth: Config.Slots, or the default Run
	// chose once it knew whether the blocks are views.
	RingSlots int
	// SourceBusy and SinkBusy are the time spent in the source's Read
	// (waiting for a live source included) and the sink's Write. Set
	// against Wall they say what bounds a run: the source, the sink, or
	// (neither near Wall) the backend.
	SourceBusy time.Duration
	SinkBusy   time.Duration
	// Device is where a GPU backend's time went (DeviceTimer), nil for
	// a backend that does not measure it.
	Device *DeviceBusy
}

// DeviceBusy is the time a GPU backend's copies and kernels took,
// measured on the device and summed over the blocks.
type DeviceBusy struct {
	CopyIn, Kernel, CopyOut time.Duration
}

// DeviceTimer is a Backend that may measure DeviceBusy; Run calls it on
// the consumer's goroutine once the last block is out, and ok is false
// when the backend did not measure (a transport without the timing).
type DeviceTimer interface {
	DeviceBusy() (d DeviceBusy, ok bool)
}

// DeviceShares returns Device's times as fractions of Wall, and false when
// the backend did not measure them. Copies in one direction share one
// copy engine, so a share near 1 means that engine bounds the run;
// kernels of blocks in flight may overlap, so the kernel share can pass 1.
func (s Stats) DeviceShares() (in, kernel, out float64, ok bool) {
	if s.Device == nil || s.Wall <= 0 {
		return 0, 0, 0, false
	}
	w := s.Wall.Seconds()
	return s.Device.CopyIn.Seconds() / w, s.Device.Kernel.Seconds() / w, s.Device.CopyOut.Seconds() / w, true
}

// Busy returns SourceBusy and SinkBusy as fractions of Wall.
func (s Stats) Busy() (source, sink float64) {
	if s.Wall <= 0 {
		return 0, 0
	}
	return s.SourceBusy.Seconds() / s.Wall.Seconds(), s.SinkBusy.Seconds() / s.Wall.Seconds()
}

// MSps is the output rate in mega-samples per second of wall time.
func (s Stats) MSps() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.SamplesOut) / s.Wall.Seconds() / 1e6
}

// InMSps is the input rate: samples filtered per second of wall time, in
// millions.
func (s Stats) InMSps() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.SamplesFiltered) / s.Wall.Seconds() / 1e6
}

// String is the one-line run summary. "out" is the samples written,
// "drops" the loss at capture; "filtered" and the loss at the filter are
// input samples. Both rates are given, labelled: "N MS/s out" (samples
// written) and "M MS/s in" (samples filtered), which differ when the chain
// changes the rate.
func (s Stats) String() string {
	line := fmt.Sprintf("samples in %d  out %d  blocks %d  drops %d (%d samples)  gaps %d  startup %.3f s  wall %.3f s  %.2f MS/s out, %.2f MS/s in  filtered %d  filter drops %d (%d samples)",
		s.SamplesIn, s.SamplesOut, s.Blocks, s.DroppedBlocks, s.DroppedSamples, s.Gaps, s.Startup.Seconds(), s.Wall.Seconds(), s.MSps(), s.InMSps(),
		s.SamplesFiltered, s.DroppedFilterBlocks, s.DroppedFilterSamples)
	if s.SourceLost > 0 {
		line += fmt.Sprintf("  lost before the source %d", s.SourceLost)
	}
	return line
}

// Options are optional hooks of a run.
type Options struct {
	// Progress, if set, is called with a snapshot every ProgressEvery
	// (default 200 ms) from a separate goroutine.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// OnBlock, if set, is called in the consumer goroutine for every
	// filtered block with the time (run clock, ns) the host saw it. It must
	// not keep out.Samples.
	OnBlock func(out Output, seenNs int64)
	Log     zerolog.Logger
	// Started, if set, is called once the backend has started and its
	// ring is ready, before the source is first read; an error from it
	// ends the run before any sample is read. It is where outputs are
	// created, so a run that cannot start leaves existing files untouched.
	Started func() error
	// Abort, if set, ends the drain when it is done: after ctx is
	// cancelled, blocks still in the ring are no longer filtered but
	// counted as filter drops, and Run returns as soon as the block in
	// hand is written (a second Ctrl-C). The run still counts as
	// interrupted, not failed.
	Abort context.Context
}

// counters are written by the producer (the first group) and the consumer
// (the second) on every block; the padding keeps the two groups on
// separate cache lines, so neither side's update waits for the other's.
type counters struct {
	in, dropB, dropS  atomic.Uint64
	pubB, pubS        atomic.Uint64 // published into the ring
	placedB           atomic.Uint64 // of them, taken in place
	srcBusy           atomic.Int64  // ns in the source's Read
	startup           atomic.Int64  // ns the backend took to start
	slots             int           // the ring's depth, set before the goroutines start
	_                 [128]byte
	out, blocks, gaps atomic.Uint64
	filtB, filtS      atomic.Uint64 // blocks and input samples output by the backend
	prodS             atomic.Uint64 // output samples the backend produced
	sinkBusy          atomic.Int64  // ns in the sink's Write
	lost              losses
}

// losses hands a LossySource's losses from the producer, which notes each
// rise with the block read after it, to the consumer, which adds them to
// the input indices of that block and those after it.
type losses struct {
	total  atomic.Uint64 // the last total noted
	queued atomic.Int32  // entries in q
	mu     sync.Mutex
	q      []lossAt
	cur    uint64 // the consumer's: lost before its latest block
}

// lossAt is a loss total in force from block seq on.
type lossAt struct{ seq, total uint64 }

// note records that total samples were lost before block seq.
func (l *losses) note(seq, total uint64) {
	l.mu.Lock()
	l.q = append(l.q, lossAt{seq, total})
	l.mu.Unlock()
	l.queued.Add(1)
	l.total.Store(total)
}

// before returns the samples lost before block seq; seq never decreases.
// Without losses it is one atomic load.
func (l *losses) before(seq uint64) uint64 {
	if l.queued.Load() == 0 {
		return l.cur
	}
	l.mu.Lock()
	i := 0
	for ; i < len(l.q) && l.q[i].seq <= seq; i++ {
		l.cur = l.q[i].total
	}
	l.q = l.q[:copy(l.q, l.q[i:])]
	l.mu.Unlock()
	l.queued.Add(-int32(i))
	return l.cur
}

func (c *counters) snapshot(start time.Time) Stats {
	out := c.out.Load()
	return Stats{
		Startup:         time.Duration(c.startup.Load()),
		RingSlots:       c.slots,
		SourceBusy:      time.Duration(c.srcBusy.Load()),
		SinkBusy:        time.Duration(c.sinkBusy.Load()),
		SamplesIn:       c.in.Load(),
		SamplesFiltered: c.filtS.Load(),
		SamplesProduced: c.prodS.Load(),
		SamplesWritten:  out,
		SamplesOut:      out,
		Blocks:          c.blocks.Load(),
		BlocksInPlace:   c.placedB.Load(),
		DroppedBlocks:   c.dropB.Load(),
		DroppedSamples:  c.dropS.Load(),
		Gaps:            c.gaps.Load(),
		SourceLost:      c.lost.total.Load(),
		Wall:            time.Since(start) - time.Duration(c.startup.Load()),
	}
}

// lostAtFilter is what was published into the ring and never came out of
// the backend; valid once producer and consumer have returned.
func (c *counters) lostAtFilter() (blocks, samples uint64) {
	sub := func(a, b uint64) uint64 { // a misbehaving backend may output more
		if a < b {
			return 0
		}
		return a - b
	}
	return sub(c.pubB.Load(), c.filtB.Load()), sub(c.pubS.Load(), c.filtS.Load())
}

// Run moves samples from src through be to snk until the source ends, the
// sample budget is spent, an error occurs or ctx is cancelled. On
// cancellation the producer stops, blocks already in the ring are still
// filtered and written, and Run returns the stats with Interrupted set and a
// nil error. A backend that ends its stream before the ring is drained is an
// error. The stats are valid whatever the error; blocks the backend never
// output are counted in DroppedFilterBlocks.
func Run(ctx context.Context, src Source, be Backend, snk Sink, cfg Config, opts Options) (Stats, error) {
	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	l := cfg.Layout()
	if cfg.MaxSamples < 0 {
		return Stats{}, fmt.Errorf("pipeline: max samples must be >= 0, got %d", cfg.MaxSamples)
	}
	if cfg.Readers < 0 {
		return Stats{}, fmt.Errorf("pipeline: readers must be >= 0, got %d", cfg.Readers)
	}
	if err := l.Validate(); err != nil {
		return Stats{}, err
	}
	if err := cfg.Realtime.Validate(); err != nil {
		return Stats{}, err
	}
	// The consumer drains after ctx is cancelled, so it runs on its own
	// context, cancelled only when the run fails.
	cctx, cancelConsumer := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConsumer()
	pctx, cancelProducer := context.WithCancel(ctx)
	defer cancelProducer()

	ring, err := be.Start(cctx, l)
	if err != nil {
		return Stats{}, fmt.Errorf("start %s backend: %w", be.Name(), err)
	}
	started := time.Since(start)
	viewer, enc, timed, err := useViews(src, be, cfg.Policy, opts.Log)
	started += timed // the mapping timed against a read (MapCoster): startup, not the stream
	if err != nil {
		ring.Close() // a backend's consumer may be waiting on it
		return Stats{}, err
	}
	if _, share := be.(RegionSharer); viewer == nil && cfg.Slots == 0 && cfg.Source.Views && !share && ring.words.Slot == nil {
		// Sized for views, which a publish never writes: blocks read
		// into the ring get the bytes' budget instead. Only a backend
		// that took the layout to size the ring alone (the CPU's) may
		// have it lowered under it.
		read := cfg
		read.Source.Views = false
		if n := read.Layout().Slots; n < l.Slots {
			ring.limit(n)
			l = ring.Layout()
			opts.Log.Info().Int("ring_slots", n).Int("ring_mib", l.Size()>>20).Msg("blocks read into the ring: its depth follows the bytes' budget")
		}
	}
	// Every slot a block is read into is written on the ring's first
	// lap; faulting its pages in now keeps the kernel's first-touch
	// zeroing off the sample path (docs/THROUGHPUT.md, issue 29), and
	// counts it in startup. Where every block is a view of the source's
	// memory only the slots' headers are written: the rest of the ring
	// is left alone, unless it is to be locked into RAM, which faults it
	// all in.
	t := time.Now()
	if _, share := be.(RegionSharer); viewer == nil || share || cfg.Realtime.Mlock {
		prefault(ring.Mem())
	} else {
		ring.prefaultHeaders()
	}
	started += time.Since(t)
	var c counters
	c.startup.Store(int64(started))
	c.slots = l.Slots
	if viewer != nil {
		ring.EnableViews()
	}
	if _, ok := src.(WordSource); ok && viewer == nil && ring.words.Slot != nil {
		opts.Log.Debug().Msg("the source writes the backend's mapped slots (no staging copy)")
	}
	if cfg.Realtime.BusyPoll && ring.spin < BusyPollSpin {
		ring.SetSpin(BusyPollSpin)
	}
	unlockRing, err := cfg.Realtime.lockRing(ring.Mem())
	if err != nil {
		ring.Close() // a backend's consumer may be waiting on it
		return Stats{}, err
	}
	// Deferred so the ring stays locked until the consumer has drained it.
	defer func() {
		if uerr := unlockRing(); uerr != nil {
			opts.Log.Warn().Err(uerr).Msg("unlock ring memory")
		}
	}()
	if opts.Started != nil {
		if err := opts.Started(); err != nil {
			ring.Close() // a backend's consumer may be waiting on it
			return Stats{}, err
		}
	}
	if opts.Abort != nil {
		stop := context.AfterFunc(opts.Abort, cancelConsumer)
		defer stop()
	}
	if rt := cfg.Realtime; rt.Enabled() {
		opts.Log.Info().Bool("lock_thread", rt.lockThread()).Ints("cpus", rt.CPUs).
			Bool("mlock", rt.Mlock).Int("ring_bytes", len(ring.Mem())).Msg("realtime capture")
	}
	if opts.Progress != nil {
		every := opts.ProgressEvery
		if every <= 0 {
			every = 200 * time.Millisecond
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					opts.Progress(c.snapshot(start))
				}
			}
		}()
	}

	var wg sync.WaitGroup
	var perr error
	var produced uint64 // sequence numbers handed out, dropped blocks included
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer ring.Close()
		// The source is read on this goroutine, so the thread settings
		// go here; the locked thread is kept until it returns.
		done, err := cfg.Realtime.startThread()
		defer done()
		if err != nil {
			perr = err
			return
		}
		share, _ := be.(RegionSharer)
		produced, perr = produce(pctx, src, viewer, enc, share, ring, cfg, l, &c, clock)
	}()

	outCh := FrameValues(cmp.Or(cfg.OutChannels, cfg.Channels), cfg.Complex || cfg.OutComplex)
	want, cerr := consume(cctx, opts.Abort, be, snk, l, outCh, &c, clock, opts.OnBlock)
	// With the consumer gone nothing frees ring slots, so a producer still
	// running (the backend failed or ended early) must stop. After a normal
	// end of stream it has returned already and this does nothing.
	cancelProducer()
	wg.Wait()
	lostB, lostS := c.lostAtFilter()
	aborted := opts.Abort != nil && opts.Abort.Err() != nil
	if aborted && errors.Is(cerr, context.Canceled) {
		cerr = nil // the drain was cut short on purpose; the loss is counted
	}
	if cerr == nil && lostB > 0 && !aborted {
		cerr = fmt.Errorf("%s backend: stream ended with %d of %d published blocks never filtered",
			be.Name(), lostB, c.pubB.Load())
	}
	if pub, filt := c.pubS.Load(), c.filtS.Load(); cerr == nil && lostB == 0 && filt != pub {
		// Every block came out, so their input is what was published: a
		// backend that says otherwise changes the rate without setting
		// Output.In, and the input it did not report would be counted as
		// lost at the filter (and a SigMF sink would record gaps).
		cerr = fmt.Errorf("%s backend: its %d blocks held %d input samples but it reported %d (Output.In unset or wrong)",
			be.Name(), c.filtB.Load(), pub, filt)
	}
	if cerr == nil && produced > want {
		// Blocks dropped after the last one delivered leave no later
		// sequence number to reveal them: count them here.
		c.gaps.Add(produced - want)
	}
	st := c.snapshot(start)
	st.DroppedFilterBlocks, st.DroppedFilterSamples = lostB, lostS
	if dt, ok := be.(DeviceTimer); ok {
		if d, ok := dt.DeviceBusy(); ok {
			st.Device = &d
		}
	}
	interrupted := ctx.Err() != nil
	st.Interrupted = interrupted
	if errors.Is(perr, context.Canceled) || errors.Is(perr, context.DeadlineExceeded) {
		if interrupted {
			perr = nil
		}
	}
	if cerr != nil {
		// The source's own failure (a file truncated under it) may be
		// why the backend failed: say both.
		if perr != nil && !errors.Is(perr, context.Canceled) {
			cerr = errors.Join(cerr, perr)
		}
		return st, cerr
	}
	if perr != nil {
		return st, perr
	}
	if viewer != nil {
		// A backend that shares the region has the rest read, and blocks
		// straddling into a window it reads are read too: the share
		// actually read can exceed the one asked for.
		pub := c.pubB.Load()
		opts.Log.Info().Uint64("in_place", st.BlocksInPlace).Uint64("read", pub-st.BlocksInPlace).
			Msg("blocks taken in place from the source's memory, and read into the ring")
	}
	if st.DroppedBlocks > 0 {
		opts.Log.Warn().Uint64("blocks", st.DroppedBlocks).Uint64("samples", st.DroppedSamples).
			Msg("ring overruns: blocks dropped at capture")
	}
	return st, nil
}

// useViews returns src as a Viewer when the backend takes its region in
// place, else nil (the source is read into the ring), and the region's
// encoding ("" for float32 values). Under policy PolicyBlock a backend
// that checks views itself (ViewScanner) is left the source's check.
func useViews(src Source, be Backend, policy Policy, log zerolog.Logger) (_ Viewer, _ string, timed time.Duration, _ error) {
	v, ok := src.(Viewer)
	rb, ok2 := be.(RegionBackend)
	if !ok || !ok2 {
		return nil, "", timed, nil
	}
	var enc string
	if ev, ok := v.(EncodedViewer); ok {
		enc = ev.Encoding()
	}
	region, err := v.Region()
	if err != nil {
		log.Debug().Err(err).Msg("source read into the ring")
		return nil, "", timed, nil
	}
	var touch, read time.Duration
	if rc, ok := rb.(ReadChooser); ok {
		if mc, ok := v.(MapCoster); ok && enc == "" {
			t0 := time.Now()
			touch, read, err = mc.MapCost(MapCostBytes)
			timed = time.Since(t0)
			if err != nil {
				log.Debug().Err(err).Msg("the source's mapping not timed against a read: taken in place")
			} else if rc.PreferRead(touch, read) {
				log.Info().Float64("touch_ms", ms(touch)).Float64("read_ms", ms(read)).Int("mib", MapCostBytes>>20).
					Msg("source read into the ring: its mapping's pages cost more to touch than to read")
				return nil, "", timed, nil
			}
		}
	}
	use, err := rb.UseRegion(region, enc)
	if err != nil {
		return nil, "", timed, fmt.Errorf("%s backend: %w", be.Name(), err)
	}
	if !use {
		return nil, "", timed, nil
	}
	// A dropped view is read by no backend, and a RegionSharer has some
	// blocks read into the ring: the source checks those views itself.
	sl, ok := v.(ScanLeaver)
	vs, ok2 := rb.(ViewScanner)
	if _, share := rb.(RegionSharer); ok && ok2 && !share && enc == "" && policy == PolicyBlock {
		if check := sl.LeaveScan(); check != nil {
			vs.ScanViews(check)
		}
	}
	ev := log.Info().Int("region_mib", len(region)>>20)
	if touch > 0 {
		ev = ev.Float64("touch_ms", ms(touch)).Float64("read_ms", ms(read)).Int("mib", MapCostBytes>>20)
	}
	if enc != "" {
		ev = ev.Str("encoding", enc)
	}
	if _, share := rb.(RegionSharer); share {
		// The backend may read every block (cuda.read_share 1): the count
		// comes at the end.
		ev.Msg("the source's memory offered to the backend: blocks taken in place where it pins them, the rest read into the ring")
	} else {
		ev.Msg("blocks taken in place from the source's memory")
	}
	return v, enc, timed, nil
}

// produce reads the source into ring slots, or, with a viewer, publishes
// views of its memory, or, when the source is a WordSource and the ring has
// word slots, has the source write the backend's tagged words directly. A
// ParallelSource is taken several blocks at once (produceParallel), the
// blocks a RegionSharer backend does not take in place read into the
// ring. Under PolicyDrop a full ring makes it read into
// scratch (or skip the view) and count the block as dropped; the block
// still takes a sequence number, so the consumer sees the gap too.
func produce(ctx context.Context, src Source, viewer Viewer, enc string, share RegionSharer, ring *Ring, cfg Config, l Layout, c *counters, clock func() int64) (uint64, error) {
	encoded, _ := viewer.(EncodedViewer)
	if enc == "" {
		encoded = nil // float32 values: View
	}
	scratch := make([]float32, l.BlockValues())
	wsrc, _ := src.(WordSource)
	if ring.words.Slot == nil {
		wsrc = nil // no word slots: the source reads into the ring's slots
	}
	if par, readers := parallelSource(src, viewer, wsrc, cfg, l); par != nil {
		t := taker{src: par, size: 4}
		if viewer != nil {
			t.pv = par.(ParallelViewer)
		}
		if encoded != nil {
			t.epv, _ = par.(EncodedParallelViewer)
			t.size = EncodingSize(enc)
		}
		if encoded == nil || t.epv != nil {
			if seq, err := produceParallel(ctx, t, share, readers, ring, cfg, l, c, clock); !errors.Is(err, errNotParallel) {
				return seq, err
			}
		}
	}
	// A view the backend does not take in place (share) is copied into
	// the ring's slot.
	inPlace := func(unsafe.Pointer, int) bool { return true }
	if viewer != nil && share != nil {
		region, err := viewer.Region()
		if err != nil {
			return 0, err
		}
		inPlace = func(p unsafe.Pointer, n int) bool {
			return share.InPlace(int64(uintptr(p)-uintptr(unsafe.Pointer(&region[0]))), int64(n))
		}
	}
	remaining := cfg.MaxSamples
	var seq, lost uint64
	lossy, _ := src.(LossySource)
	for {
		if err := ctx.Err(); err != nil {
			return seq, err
		}
		buf, err := ring.Acquire(ctx, cfg.Policy == PolicyBlock)
		dropped := false
		switch {
		case errors.Is(err, ErrFull):
			buf, dropped = scratch, true
		case err != nil:
			return seq, err
		}
		if cfg.MaxSamples > 0 && remaining < int64(l.BlockSize) {
			buf = buf[:remaining*int64(l.Channels)]
		}
		t0 := clock()
		var n int
		var rerr error
		var view []float32
		var raw []byte
		direct, placed := false, false
		if encoded != nil {
			raw, rerr = encoded.ViewEncoded(ctx, len(buf))
			n = len(raw) / EncodingSize(enc) // whole values: whole samples
			if len(raw) > 0 && !inPlace(unsafe.Pointer(&raw[0]), len(raw)) {
				b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*len(buf))
				raw = b[:copy(b, raw)]
			} else {
				placed = true
			}
		} else if viewer != nil {
			view, rerr = viewer.View(ctx, len(buf))
			n = len(view)
			if n > 0 && !inPlace(unsafe.Pointer(&view[0]), 4*n) {
				copy(buf, view)
				view = nil
			} else {
				placed = true
			}
		} else if wsrc != nil && !dropped {
			// Straight into the backend's mapped slot, tagged as the
			// kernel expects: no staging copy after ts. The slot is asked
			// for only here, and the source asks for its tag just before
			// it writes: that decides the block's tag (the zero-copy
			// kernel's taps parity, and the frame a retune starts at),
			// which a block the hook publishes decides at publish time.
			words, tag, _ := ring.WordSlot() // acquired, with word slots
			n, rerr = wsrc.ReadWords(ctx, words[:len(buf)], tag)
			direct = true
		} else {
			n, rerr = src.Read(ctx, buf)
		}
		ts := clock()
		if n%l.Channels != 0 {
			return seq, fmt.Errorf("pipeline: source returned %d values, not a multiple of %d channels", n, l.Channels)
		}
		if n > len(buf) {
			return seq, fmt.Errorf("pipeline: source returned %d values for a %d-value buffer", n, len(buf))
		}
		if lossy != nil {
			if t := lossy.LostSamples(); t != lost { // before this block's last sample
				c.lost.note(seq, t)
				lost = t
			}
		}
		// The block is published first: the counters are off the latency
		// path, which runs from ts to the consumer.
		count := n / l.Channels
		if count > 0 {
			remaining -= int64(count)
			if dropped {
				c.dropB.Add(1)
				c.dropS.Add(uint64(count))
			} else if err := publish(ring, view, raw, direct, count, seq, ts); err != nil {
				return seq, err
			} else {
				c.pubB.Add(1)
				c.pubS.Add(uint64(count))
				if placed {
					c.placedB.Add(1)
				}
			}
			c.in.Add(uint64(count))
			seq++
		}
		c.srcBusy.Add(ts - t0)
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return seq, nil
			}
			return seq, fmt.Errorf("read source: %w", rerr)
		}
		if cfg.MaxSamples > 0 && remaining == 0 {
			return seq, nil
		}
	}
}

// taker takes a ParallelSource's reservations, on any goroutine: read
// into the ring's slot, or, with pv, viewed in place, as values or, with
// epv, as their stored bytes (size each: 4 for float32 values).
type taker struct {
	src  ParallelSource
	pv   ParallelViewer
	epv  EncodedParallelViewer
	size int
}

// reserved is a block reserved and its taking: into buf (the ring's
// slot), or in place (view, or the stored bytes raw, which a read of
// stored bytes also fills, from buf).
type reserved struct {
	buf     []float32
	at      int64
	n       int // values: reserved (want), then taken
	want    int
	inPlace bool
	view    []float32
	raw     []byte
	err     error
}

func (t taker) take(r *reserved) {
	switch {
	case r.inPlace && t.epv != nil:
		r.raw, r.err = t.epv.ViewReservedEncoded(r.at, r.n)
		r.n = len(r.raw) / t.size
	case r.inPlace:
		r.view, r.err = t.pv.ViewReserved(r.at, r.n)
		r.n = len(r.view)
	case t.epv != nil:
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r.buf))), r.n*t.size)
		var k int
		k, r.err = t.epv.ReadReservedEncoded(b, r.at)
		r.raw, r.n = b[:k], k/t.size
	default:
		r.n, r.err = t.src.ReadReserved(r.buf, r.at)
	}
}

// errNotParallel is produceParallel's answer when the source took no
// reservation: it is read with Read instead.
var errNotParallel = errors.New("pipeline: the source is read one block at a time")

// MaxReaders bounds Config.Readers' default.
const MaxReaders = 14

// parallelSource returns src as a ParallelSource and how many blocks to
// take at once, or nil when its blocks are taken one at a time: word
// slots, views of a source that cannot hand reservations out in place, a
// dropping or real-time run, or one reader.
func parallelSource(src Source, viewer Viewer, wsrc WordSource, cfg Config, l Layout) (ParallelSource, int) {
	p, ok := src.(ParallelSource)
	if _, pv := src.(ParallelViewer); !ok || viewer != nil && !pv || wsrc != nil || cfg.Policy != PolicyBlock || cfg.Realtime.Enabled() {
		return nil, 0
	}
	n := cfg.Readers
	if n == 0 {
		// Fewer readers than half the cores read slower than one block
		// split among all of them (the source's own parts, on a ring too
		// small to hold more blocks).
		procs := runtime.GOMAXPROCS(0)
		cores := procs - 2
		if viewer == nil && procs <= 3 {
			// The source splits a read among the CPUs but two: on 2 or 3
			// there are none, and one goroutine read every block. Two
			// readers ran a 129-tap file 1.16–1.32× one on the 2-core
			// development VM, 1 tap 1.17–1.33× (docs/THROUGHPUT.md);
			// three on 3 CPUs were not measured.
			cores = min(procs, 2)
		}
		if n = min(cores, MaxReaders, l.Slots/2); 2*n < cores {
			return nil, 0
		}
	}
	n = min(n, l.Slots/2) // the rest of the ring: blocks published, for the consumer
	if n <= 1 {
		return nil, 0
	}
	return p, n
}

// produceParallel is produce for a ParallelSource: up to readers blocks
// are reserved in order, taken at once on as many goroutines (t.take), and
// published in order. A block is read into the ring's next slot, or, when
// t views the source, taken in place (a view scanned on its goroutine,
// unless the scan was left to the backend) unless share has it read. The
// source's busy time is the time spent waiting for the oldest.
func produceParallel(ctx context.Context, t taker, share RegionSharer, readers int, ring *Ring, cfg Config, l Layout, c *counters, clock func() int64) (uint64, error) {
	reads := make([]reserved, readers)
	done := make([]chan struct{}, readers)
	work := make(chan int, readers)
	var wg sync.WaitGroup
	for i := range done {
		done[i] = make(chan struct{}, 1)
	}
	for range readers {
		wg.Go(func() {
			for i := range work {
				t.take(&reads[i])
				done[i] <- struct{}{}
			}
		})
	}
	issued, next := uint64(0), uint64(0)
	// Whatever happens, the reads in flight end before their slots can
	// be handed back.
	defer func() {
		close(work)
		for ; next < issued; next++ {
			<-done[next%uint64(readers)]
		}
		wg.Wait()
	}()
	remaining := cfg.MaxSamples
	var seq uint64
	ended := false
	for {
		for !ended && issued-next < uint64(readers) && (cfg.MaxSamples == 0 || remaining > 0) {
			if err := ctx.Err(); err != nil {
				return seq, err
			}
			buf, err := ring.AcquireAhead(ctx, int(issued-next))
			if err != nil {
				return seq, err
			}
			if cfg.MaxSamples > 0 && remaining < int64(l.BlockSize) {
				buf = buf[:remaining*int64(l.Channels)]
			}
			at, n, ok := t.src.Reserve(len(buf))
			if !ok && issued == 0 {
				return 0, errNotParallel // nothing taken: read it block by block
			}
			if !ok {
				return seq, errors.New("pipeline: the source took no more reservations before its end")
			}
			if n < len(buf) {
				ended = true // the last: its read reports the end
			}
			remaining -= int64(n / l.Channels)
			i := issued % uint64(readers)
			reads[i] = reserved{buf: buf[:n], at: at, n: n, want: n}
			reads[i].inPlace = t.pv != nil && (share == nil || share.InPlace(at, int64(n*t.size)))
			work <- int(i)
			issued++
		}
		if next == issued {
			return seq, nil // MaxSamples reached, or nothing left to reserve
		}
		t0 := clock()
		i := next % uint64(readers)
		<-done[i]
		next++
		ts := clock()
		c.srcBusy.Add(ts - t0)
		r := reads[i]
		if r.err == nil && r.n != r.want {
			return seq, fmt.Errorf("read source: %d of the %d values reserved came back, with no error", r.n, r.want)
		}
		if count := r.n / l.Channels; count > 0 {
			if _, err := ring.Acquire(ctx, true); err != nil { // free: acquired ahead
				return seq, err
			}
			if err := publish(ring, r.view, r.raw, false, count, seq, ts); err != nil {
				return seq, err
			}
			if r.inPlace {
				c.placedB.Add(1)
			}
			c.pubB.Add(1)
			c.pubS.Add(uint64(count))
			c.in.Add(uint64(count))
			seq++
		}
		if r.err != nil {
			if errors.Is(r.err, io.EOF) {
				return seq, nil
			}
			return seq, fmt.Errorf("read source: %w", r.err)
		}
	}
}

func publish(ring *Ring, view []float32, raw []byte, direct bool, count int, seq uint64, ts int64) error {
	if raw != nil {
		return ring.PublishEncoded(raw, count, seq, ts)
	}
	if view != nil {
		return ring.PublishView(view, seq, ts)
	}
	if direct {
		return ring.PublishWords(count, seq, ts)
	}
	return ring.Publish(count, seq, ts)
}

// consume writes the backend's blocks to the sink; l.Channels and outCh
// are the values per sample of the input and of the backend's output.
func consume(ctx, abort context.Context, be Backend, snk Sink, l Layout, outCh int, c *counters, clock func() int64, onBlock func(Output, int64)) (uint64, error) {
	inCh := l.Channels
	indexed, _ := snk.(IndexedSink)
	var want uint64
	for {
		if abort != nil && abort.Err() != nil { // blocks still queued are not taken
			return want, fmt.Errorf("%s backend: %w", be.Name(), context.Canceled)
		}
		out, err := be.Next(ctx)
		if errors.Is(err, io.EOF) {
			return want, nil
		}
		if err != nil {
			return want, fmt.Errorf("%s backend: %w", be.Name(), err)
		}
		seen := clock()
		if out.Seq > want {
			c.gaps.Add(out.Seq - want)
		} else if out.Seq < want {
			return want, fmt.Errorf("%s backend: block %d out of order (expected %d)", be.Name(), out.Seq, want)
		}
		want = out.Seq + 1
		if len(out.Samples)%outCh != 0 {
			return want, fmt.Errorf("%s backend: block %d has %d values, not a multiple of %d channels", be.Name(), out.Seq, len(out.Samples), outCh)
		}
		in := out.In
		if in == 0 {
			in = len(out.Samples) / inCh
		}
		c.filtB.Add(1)
		c.filtS.Add(uint64(in))
		c.prodS.Add(uint64(len(out.Samples) / outCh))
		if onBlock != nil {
			onBlock(out, seen)
		}
		// Taken for every sink: the producer's loss queue drains here.
		index := out.Seq*uint64(l.BlockSize) + c.lost.before(out.Seq)
		w0 := clock()
		if indexed != nil {
			err = indexed.WriteIndexed(index, uint64(in), out.Samples)
		} else {
			err = snk.Write(out.Samples)
		}
		c.sinkBusy.Add(clock() - w0)
		if err != nil {
			return want, fmt.Errorf("write sink: %w", err)
		}
		c.blocks.Add(1)
		c.out.Add(uint64(len(out.Samples) / outCh))
	}
}

// EncodingSize is the bytes of one value stored in encoding enc (an Enc*
// name), 4 for float32.
func EncodingSize(enc string) int {
	switch enc {
	case EncInt8, EncUint8SDR, EncUint8Half:
		return 1
	case EncInt16:
		return 2
	case EncInt24:
		return 3
	}
	return 4
}
