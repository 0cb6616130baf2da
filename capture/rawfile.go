package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/internal/par"
)

// Samples in a regular file are read by position, a large read split into
// parts read at once (pread) by a par.Pool. Float32 samples are read
// straight into the caller's buffer, with no decode step: the bytes on disk
// are the values in memory on a little-endian machine. Integer samples are
// read into a buffer of the reader's, and each part is decoded into the
// caller's buffer by the goroutine that read it, while its bytes are in
// that core's cache: one core decoding cs8 falls far short of what a GPU
// takes in.

// stripeMin is the smallest part of a read worth a goroutine of its own,
// in bytes of float32 values delivered.
const stripeMin = 128 << 10

// decodeChunk is how much of a part is read before it is decoded, about:
// small enough that the bytes are still in the core's cache, large enough
// that the reads' system calls cost little.
const decodeChunk = 64 << 10

// fileWorkers is the goroutines a file reader reads with; 0 lets par
// choose from the CPUs (tests set it).
var fileWorkers = 0

// fileReader reads [off, end) of a regular file by position.
type fileReader struct {
	f        *os.File
	dt       datatype
	frame    int   // bytes per frame (every channel's sample)
	off, end int64 // end is -1 when the file is read to its end
	// size is the file's size when the run began (when the reader was
	// made, or Region mapped it): reads or views ending short of it, or of
	// end, mean the file was truncated under the run.
	size     int64
	pool     *par.Pool
	minPart  int                    // the smallest part of a read, in bytes of the file
	align    int                    // what parts start at multiples of
	chunk    int                    // decodeChunk, in whole frames
	readPart func(lo, hi int) error // r.readAt, made once: Do allocates nothing
	scanPart func(lo, hi int) error // r.scanView, made once likewise
	scan     func([]float32)        // counts the non-finite values of a part read (float32)

	mapped   []byte // Region's mapping of the file from mapStart, or nil
	mapStart int64
	view     []float32 // the view being scanned
	// leave has views returned unscanned: their reader scans them
	// (Raw.LeaveScan).
	leave bool
	// skipSizeCheck makes View skip its fstat (tests: the fault recovery
	// then catches a truncation).
	skipSizeCheck bool

	// raw holds integer samples' bytes, made for the largest read so far.
	raw []byte
	// The read in progress: the bytes read (the caller's float32s, or
	// raw), the values decoded from them (nil for float32), and the end
	// of the whole prefix read so far (a part cut short by the end of the
	// file lowers it).
	buf   []byte
	out   []float32
	mu    sync.Mutex
	whole int

	// endAt is 1 + where the last reservation starts once Reserve has
	// reached the end (0 before), and endLeft the bytes of a partial
	// sample after it, written first: ReadReserved reports the end after
	// that reservation. Atomic, as earlier ones are read meanwhile.
	endAt   atomic.Int64
	endLeft int
	// grown is how far Reserve found a file read to its end has grown
	// (producer only).
	grown int64
	// chunks are ReadReserved's buffers for integer samples' bytes, chunk
	// long: one a goroutine reading at once.
	chunks sync.Pool
}

// newFileReader returns a reader of f from off (to end, or to the end of
// the file when end < 0) when f is a regular file that holds end, else
// nil: f is read as a stream then, whose end says what a header declared.
// frame is the bytes of a frame; scan is given the float32 samples of each
// part, on the goroutine that read it.
func newFileReader(f *os.File, dt datatype, frame int, off, end int64, scan func([]float32)) *fileReader {
	if dt.float && !nativeLE || f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || end > fi.Size() {
		return nil
	}
	r := &fileReader{f: f, dt: dt, frame: frame, off: off, end: end, size: fi.Size(), pool: par.NewPool(fileWorkers)}
	if dt.float {
		// Parts need only be whole float32s, for the scan; pages suit pread.
		r.minPart, r.align, r.scan = stripeMin, 4096, scan
	} else {
		// Parts are whole frames, decoded alone, and whole pages; their
		// values are stripeMin bytes or more.
		r.minPart = stripeMin / 4 * dt.size
		r.align = frame / gcd(frame, 4096) * 4096
		r.chunk = max(1, decodeChunk/frame) * frame
	}
	r.readPart = r.readAt
	r.scanPart = r.scanView
	chunk := max(r.chunk, r.frame)
	r.chunks.New = func() any { b := make([]byte, chunk); return &b }
	return r
}

// gcd is the greatest common divisor of a and b.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// inPlace reports whether the samples are read straight into the
// caller's buffer: float32 on a little-endian machine.
func (r *fileReader) inPlace() bool { return r.dt.float }

// wantEnd is where the reads must reach: end, or the file's size when the
// run began. A file that grows is read to its new end, unless Region has
// mapped it: the mapping fixes end at the size then, for reads too.
func (r *fileReader) wantEnd() int64 {
	if r.end >= 0 {
		return r.end
	}
	return r.size
}

// read reads up to nb bytes (whole frames) from the offset into dst,
// straight or decoded, and advances the offset; it returns the bytes read,
// a partial frame at the end included, with io.EOF once the end is
// reached.
func (r *fileReader) read(dst []float32, nb int) (int, error) {
	limited := r.end >= 0 && int64(nb) > r.end-r.off
	if limited {
		nb = int(r.end - r.off)
	}
	if r.inPlace() {
		r.buf = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), nb)
	} else {
		if len(r.raw) < nb {
			r.raw = make([]byte, nb)
		}
		r.buf, r.out = r.raw[:nb], dst
	}
	r.whole = nb
	err := r.pool.Do(nb, r.minPart, r.align, r.readPart)
	n := r.whole
	r.buf, r.out = nil, nil
	r.off += int64(n)
	if err == nil && (limited || n < nb) {
		err = io.EOF
	}
	return n, err
}

// readAt reads part [lo, hi) of the buffer; a short part ends the prefix.
// Float32 values are scanned while they are in this core's cache (lo is a
// multiple of the 4096-byte grain, so they are whole float32s); integer
// ones are decoded chunk by chunk as they are read (lo is a multiple of
// the frame, so the part's bytes are whole frames).
func (r *fileReader) readAt(lo, hi int) error {
	var err error
	n := 0
	if r.out == nil {
		n, err = r.f.ReadAt(r.buf[lo:hi], r.off+int64(lo))
		if r.scan != nil && n >= 4 {
			r.scan(unsafe.Slice((*float32)(unsafe.Pointer(&r.buf[lo])), n/4))
		}
	} else {
		for n < hi-lo && err == nil {
			a := lo + n
			b := min(a+r.chunk, hi)
			var k int
			k, err = r.f.ReadAt(r.buf[a:b], r.off+int64(a))
			whole := k / r.frame * r.frame // a partial frame ends the file
			decodeLE(r.dt, r.out[a/r.dt.size:(a+whole)/r.dt.size], r.buf[a:a+whole])
			n += k
			if k < b-a && err == nil {
				err = io.EOF // not expected of ReadAt: the prefix ends here all the same
			}
		}
	}
	if n < hi-lo {
		r.mu.Lock()
		r.whole = min(r.whole, lo+n)
		r.mu.Unlock()
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// close stops the pool's goroutines and unmaps the file.
func (r *fileReader) close() error {
	r.pool.Close()
	if r.mapped == nil {
		return nil
	}
	m := r.mapped
	r.mapped = nil
	return unmap(m)
}

// readDirect is Raw.Read for a regular file read by position: whole
// frames go into dst, straight (float32) or decoded.
func (r *Raw) readDirect(dst []float32) (int, error) {
	frame := r.fbytes
	m, err := r.direct.read(dst, len(dst)/r.info.Channels()*frame)
	r.consumed += int64(m)
	whole := m / frame
	n := whole * r.info.Channels()
	switch {
	case errors.Is(err, io.EOF) && r.direct.off < r.direct.wantEnd():
		// The file ends where it did not when the run began: not an end
		// of input, which would cut the output short silently.
		r.eof = true
		r.err = r.truncatedErr(r.direct.off)
		return n, r.err
	case errors.Is(err, io.EOF):
		// A partial sample at the end is reported, as the decoder does.
		r.eof = true
		r.err = r.endErrLeft(m - whole*frame + int(r.direct.restBytes()))
		return n, r.err
	case err != nil:
		r.err = fmt.Errorf("capture: read %s: %w", r.name, err)
		return n, r.err
	}
	return n, nil
}

// restBytes is what is left between the offset and the end (nothing, once
// read has returned io.EOF, unless the file grew).
func (r *fileReader) restBytes() int64 {
	if r.end >= 0 {
		return r.end - r.off
	}
	fi, err := r.f.Stat()
	if err != nil || fi.Size() < r.off {
		return 0
	}
	return fi.Size() - r.off
}

// pageSize is what mmap offsets and pinned regions are aligned to.
var pageSize = uintptr(os.Getpagesize())

// Region maps the samples of a regular file into memory, read-only, and
// returns the mapping, for a pipeline that hands blocks to a backend in
// place (pipeline.Viewer): a GPU copy engine then reads the page cache
// with no copy by the CPU. Float32 samples are viewed as values (View),
// integers as their stored bytes (ViewEncoded, Encoding). Other inputs
// return an error, and are read instead.
func (r *Raw) Region() ([]byte, error) {
	d := r.direct
	if d == nil || r.closed {
		return nil, errors.New("capture: only regular files can be mapped")
	}
	if d.mapped != nil {
		return d.mapped, nil
	}
	now, err := fileSize(d.f)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", r.name, err)
	}
	if now < d.wantEnd() {
		return nil, r.truncatedErr(now) // Read reports it too, after what is left
	}
	if d.end < 0 {
		d.end, d.size = now, now
	}
	start := d.off &^ int64(pageSize-1)
	// Float32 views must be aligned; stored integers are copied as bytes.
	if d.dt.float && (d.off-start)%4 != 0 || d.end <= d.off {
		return nil, errors.New("capture: samples not aligned for mapping")
	}
	n := (d.end - start + int64(pageSize) - 1) &^ int64(pageSize-1)
	m, err := mapFile(d.f, start, int(n))
	if err != nil {
		return nil, fmt.Errorf("capture: map %s: %w", r.name, err)
	}
	d.mapped, d.mapStart = m, start
	return m, nil
}

// MapCost times, once Region has mapped the file, a first read of n bytes
// of the mapping (one load a page: what faulting its pages in costs)
// against a pread of the n bytes after them, both after a pread of the
// first n bytes, which puts the touched pages in the page cache (no disk
// in the touch's time) and maps the read's destination, as a run reads
// into the ring's slots again and again (pipeline.MapCoster). The pages
// loaded are the first the views hand out, so a run that takes them has
// them mapped. Where a page maps in cheaply (a host with nested paging in
// hardware, or the file in 2 MiB folios) the touch is several times
// faster than the read; on a guest whose page tables its host shadows it
// was 2.5–6.5 times slower (docs/THROUGHPUT.md). A file with fewer than
// 2n bytes left is not measured: an error.
func (r *Raw) MapCost(n int) (touch, read time.Duration, err error) {
	d := r.direct
	if d == nil || d.mapped == nil || r.closed {
		return 0, 0, errors.New("capture: MapCost before Region")
	}
	n = n &^ (int(pageSize) - 1)
	if n <= 0 || d.end-d.off < 2*int64(n) {
		return 0, 0, fmt.Errorf("capture: %s: too little left to time its mapping against a read of %d bytes", r.name, n)
	}
	// The first pread into fresh memory took 10 times the next ones on the
	// development VM, even with every page written first.
	buf := make([]byte, n)
	if err := r.readFull(buf, d.off); err != nil {
		return 0, 0, err
	}
	b := d.mapped[d.off-d.mapStart : d.off-d.mapStart+int64(n)]
	var sum byte
	t0 := time.Now()
	if err := d.faulting(func() {
		for i := 0; i < len(b); i += int(pageSize) {
			sum += b[i]
		}
	}); err != nil {
		return 0, 0, r.faultErr(err)
	}
	touch = time.Since(t0)
	buf[0] = sum // keeps the loads
	t0 = time.Now()
	if err := r.readFull(buf, d.off+int64(n)); err != nil {
		return 0, 0, err
	}
	return touch, time.Since(t0), nil
}

// readFull reads len(b) bytes at off for MapCost; a short read is the
// file truncated since Region measured it.
func (r *Raw) readFull(b []byte, off int64) error {
	_, err := r.direct.f.ReadAt(b, off)
	switch {
	case errors.Is(err, io.EOF):
		now, serr := fileSize(r.direct.f)
		if serr != nil {
			return fmt.Errorf("capture: %s: %w", r.name, serr)
		}
		return r.truncatedErr(now)
	case err != nil:
		return fmt.Errorf("capture: read %s: %w", r.name, err)
	}
	return nil
}

// View returns the next up to n values in place from the mapping that
// Region made (pipeline.Viewer); the end of the samples, and a partial
// sample there, end it as Read does. Its values are scanned for NaN and
// ±Inf as Read's are, in parts on the reader's goroutines, unless
// LeaveScan left that to the caller. A file truncated under the mapping
// is an error wrapping [ErrTruncated]: found by an fstat before the view
// is touched, or, truncated between the two, by the scan's fault on the
// pages gone, which is recovered (after LeaveScan, the left scan's). A
// file of integers has no float32 view: ViewEncoded gives its bytes.
func (r *Raw) View(ctx context.Context, n int) ([]float32, error) {
	if d := r.direct; d != nil && !d.dt.float {
		return nil, fmt.Errorf("capture: %s stores %s values: take its bytes (ViewEncoded)", r.name, r.dt.name)
	}
	b, err := r.view(ctx, n, true)
	var v []float32
	if len(b) > 0 {
		v = unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	return v, err
}

// Encoding names how the file stores its values, for a backend that takes
// them in place and converts them itself (pipeline.EncodedViewer): "" for
// float32, else one of pipeline's Enc* names.
func (r *Raw) Encoding() string {
	if r.direct == nil {
		return ""
	}
	return encodingNames[r.dt.enc]
}

// encodingNames are pipeline's Enc* names of the integer encodings
// (checked against them by a test: capture does not import pipeline).
var encodingNames = map[encoding]string{
	encI8: "int8", encU8SDR: "uint8-sdr", encU8Half: "uint8-half",
	encI16: "int16", encI24: "int24", encI32: "int32",
}

// ViewEncoded returns the stored bytes of the next up to n values in place
// from the mapping that Region made (pipeline.EncodedViewer), as View
// returns float32 values: whole samples, the end as Read's, a truncated
// file an error wrapping [ErrTruncated]. Integers hold no NaN: nothing is
// scanned, and the CPU does not touch the bytes.
func (r *Raw) ViewEncoded(ctx context.Context, n int) ([]byte, error) {
	return r.view(ctx, n, false)
}

// view returns the bytes of the next up to n values from the mapping,
// scanned as float32 values when scan, and advances past them.
func (r *Raw) view(ctx context.Context, n int, scan bool) ([]byte, error) {
	if r.closed {
		return nil, ErrClosed
	}
	d := r.direct
	if d == nil || d.mapped == nil {
		return nil, errors.New("capture: View before Region")
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	frame := r.fbytes
	ch := r.info.Channels()
	want := int64(n/ch) * int64(frame)
	k := min(want, (d.end-d.off)/int64(frame)*int64(frame))
	var b []byte
	if k > 0 { // at the end of a file of whole pages d.off indexes past the mapping
		if !d.skipSizeCheck {
			now, err := fileSize(d.f)
			if err != nil {
				r.err = fmt.Errorf("capture: %s: %w", r.name, err)
				return nil, r.err
			}
			if now < d.off+k {
				r.err = r.truncatedErr(now)
				return nil, r.err
			}
		}
		b = d.mapped[d.off-d.mapStart : d.off-d.mapStart+k : d.off-d.mapStart+k]
		if scan && !d.leave {
			if err := d.scanMapped(b); err != nil {
				r.err = r.faultErr(err)
				return nil, r.err
			}
		}
	}
	d.off += k
	r.consumed += k
	if k < want {
		left := d.end - d.off // a partial sample, taken as Read takes it
		r.consumed += left
		r.eof = true
		r.err = r.endErrLeft(int(left))
		return b, r.err
	}
	return b, nil
}

// scanMapped scans b, float32 values of the mapping, for non-finite
// values in parts on the reader's goroutines (scanView).
func (r *fileReader) scanMapped(b []byte) error {
	r.view = unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
	defer func() { r.view = nil }()
	return r.pool.Do(len(r.view), stripeMin/4, 4096/4, r.scanPart)
}

// errFault is a scan's fault on a page of the mapping that the file no
// longer has.
var errFault = errors.New("fault on the file's mapping")

// scanView scans part [lo, hi) of the view for non-finite values. A page
// past the end of a file truncated since the fstat raises SIGBUS: the
// goroutine panics instead of the process dying, and the panic is
// recovered into errFault. Only faults inside the mapping are recovered,
// or, where the fault's address is not known (qemu-user does not pass it
// on, and the runtime then panics without one), faults while the file is
// shorter than the run began with.
func (r *fileReader) scanView(lo, hi int) error {
	return r.faulting(func() { r.scan(r.view[lo:hi]) })
}

// faulting runs f, which reads the mapping, and returns errFault where it
// faulted on a page that the file, truncated since, no longer has.
func (r *fileReader) faulting(f func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			_, memory := e.(runtime.Error)
			fe, known := e.(interface{ Addr() uintptr })
			if memory && (known && r.inMapping(fe.Addr()) || (!known || fe.Addr() == 0) && r.shrunk()) {
				err = errFault
				return
			}
			panic(e)
		}
	}()
	f()
	return nil
}

// shrunk reports whether the file is now shorter than the reads must reach.
func (r *fileReader) shrunk() bool {
	now, err := fileSize(r.f)
	return err == nil && now < r.wantEnd()
}

// inMapping reports whether addr lies in the mapping.
func (r *fileReader) inMapping(addr uintptr) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(r.mapped)))
	return addr >= lo && addr-lo < uintptr(len(r.mapped))
}

// faultErr is View's error for a scan that failed: the file was truncated
// when it faulted.
func (r *Raw) faultErr(err error) error {
	if !errors.Is(err, errFault) {
		return fmt.Errorf("capture: %s: %w", r.name, err)
	}
	now, serr := fileSize(r.direct.f)
	if serr != nil {
		return inputErr(ErrTruncated, "capture: %s: the file was truncated during the run: its mapping faulted (fstat: %v); %d bytes when the run began",
			r.name, serr, r.direct.size)
	}
	return r.truncatedErr(now)
}

// truncatedErr is the error for a file found to be now bytes long, short
// of what the run began with.
func (r *Raw) truncatedErr(now int64) error {
	return inputErr(ErrTruncated, "capture: %s: the file was truncated during the run: %d bytes now, %d when the run began",
		r.name, now, r.direct.size)
}

// Reserved reads: a pipeline fills several ring slots at once, each whole
// block on a goroutine of its own (pipeline.ParallelSource). One block split
// among all the goroutines waits for its slowest part every block: on the
// H200 host's 16 cores, 14 goroutines copied a page-cached file at 19–27
// GiB/s that way, and at 41 GiB/s by pread (50 from a mapping) each reading
// whole 16 MiB blocks (docs/THROUGHPUT.md).

// Reserve takes the next up to n values (whole samples) of a regular file
// for ReadReserved, ReadReservedEncoded, ViewReserved or
// ViewReservedEncoded, which may take them on any goroutine, at once with
// other reservations. It returns where they start, their byte offset in
// the mapping once Region has made it, and how many values they are:
// fewer than n at the end of the samples, where the reservation's taker
// reports it. ok is false, with nothing taken, when the source is not a
// file read by position (Read it instead), or after the last reservation.
func (r *Raw) Reserve(n int) (at int64, values int, ok bool) {
	d := r.direct
	if d == nil || r.closed || r.err != nil || r.eof || d.endAt.Load() != 0 {
		return 0, 0, false
	}
	ch := r.info.Channels()
	want := int64(n/ch) * int64(r.fbytes)
	end := d.wantEnd()
	if d.end < 0 {
		// A file that grows is read to its new end. d.size stays the size
		// the run began with: the takers' errors read it meanwhile.
		end = max(end, d.grown)
		if now, err := fileSize(d.f); d.off+want > end && err == nil && now > end {
			d.grown, end = now, now
		}
	}
	k := max(0, min(want, (end-d.off)/int64(r.fbytes)*int64(r.fbytes)))
	if k < want {
		// The last: its taker reports the end after it, and a partial
		// sample there, as Read does.
		d.endLeft = int(end - d.off - k)
		d.endAt.Store(d.off - d.mapStart + 1)
		r.consumed += int64(d.endLeft) // a partial sample, counted as Read counts it
	}
	at = d.off - d.mapStart
	d.off += k
	r.consumed += k
	return at, int(k / int64(d.dt.size)), true
}

// ReadReserved reads the values Reserve took at at into dst, which holds
// exactly as many, decoded as Read decodes them; it may be called on any
// goroutine, at once with other reservations of the same source. Float32
// values are read in place and scanned for NaN and ±Inf as Read scans
// them, integers decoded, a part at a time while it is in the core's
// cache. It returns as Read would: whole samples, and after the last
// reservation io.EOF (or the error of a partial sample at the end). A file
// shorter than the reservation is an error wrapping [ErrTruncated].
func (r *Raw) ReadReserved(dst []float32, at int64) (int, error) {
	d := r.direct
	off := d.mapStart + at
	if d.inPlace() {
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst))
		for n := 0; n < len(b); {
			k, err := d.f.ReadAt(b[n:min(n+reservedChunk, len(b))], off+int64(n))
			if k >= 4 {
				d.scan(unsafe.Slice((*float32)(unsafe.Pointer(&b[n])), k/4))
			}
			if n += k; err != nil && n < len(b) {
				return n / r.fbytes * r.info.Channels(), r.shortErr(err)
			}
		}
		return len(dst), r.reservedEnd(at)
	}
	buf := d.chunks.Get().(*[]byte)
	defer d.chunks.Put(buf)
	size := d.dt.size
	for n := 0; n < size*len(dst); {
		k, err := d.f.ReadAt((*buf)[:min(len(*buf), size*len(dst)-n)], off+int64(n))
		whole := k / r.fbytes * r.fbytes // chunks are whole frames: a short one ends the file
		decodeLE(d.dt, dst[n/size:(n+whole)/size], (*buf)[:whole])
		if n += whole; err != nil && n < size*len(dst) {
			return n / r.fbytes * r.info.Channels(), r.shortErr(err)
		}
	}
	return len(dst), r.reservedEnd(at)
}

// ReadReservedEncoded reads the stored bytes of the values Reserve took at
// at into dst, which holds exactly as many bytes, for a backend that
// converts them itself (pipeline.EncodedViewer); otherwise as
// ReadReserved.
func (r *Raw) ReadReservedEncoded(dst []byte, at int64) (int, error) {
	d := r.direct
	k, err := d.f.ReadAt(dst, d.mapStart+at)
	if err != nil && k < len(dst) {
		return k / r.fbytes * r.fbytes, r.shortErr(err)
	}
	return len(dst), r.reservedEnd(at)
}

// ViewReserved returns the values Reserve took at at in place, from the
// mapping that Region made, as View returns them: scanned for NaN and ±Inf
// (whole, on the calling goroutine) unless LeaveScan, a truncated file an
// error wrapping [ErrTruncated], and after the last reservation io.EOF (or
// the error of a partial sample at the end). It may be called on any
// goroutine, at once with other reservations of the same source.
func (r *Raw) ViewReserved(at int64, values int) ([]float32, error) {
	if !r.direct.inPlace() {
		return nil, fmt.Errorf("capture: %s stores %s values: take its bytes (ViewReservedEncoded)", r.name, r.dt.name)
	}
	b, err := r.viewReserved(at, 4*int64(values))
	if err != nil || len(b) == 0 {
		return nil, err
	}
	v := unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), values)
	if !r.direct.leave {
		if err := r.check(v); err != nil {
			return nil, err
		}
	}
	return v, r.reservedEnd(at)
}

// LeaveScan has View and ViewReserved return float32 values unscanned
// from now on, and returns the scan they leave to the views' reader
// (pipeline.ScanLeaver): it counts the NaN and ±Inf values of the part
// it is given ([NonFiniteCounter]), on any goroutine, and must be given
// every value viewed, once. A backend that reads each part of a view on
// some core anyway scans it there, while the part is in that core's
// cache. The scan is then the first read of a view's pages: a file
// truncated under the view faults there, and the scan returns the error,
// wrapping [ErrTruncated], that View would have. Read and ReadReserved
// still scan what they read. It returns nil, leaving nothing, for a
// source with no float32 views (integers, or before Region maps it).
func (r *Raw) LeaveScan() func([]float32) error {
	d := r.direct
	if d == nil || !d.inPlace() || d.scan == nil || d.mapped == nil {
		return nil
	}
	d.leave = true
	return r.check
}

// check scans v, values of the mapping: counted, a fault on the mapping
// recovered into the truncation's error. ViewReserved scans with it, and
// LeaveScan leaves it to the views' reader.
func (r *Raw) check(v []float32) error {
	d := r.direct
	if err := d.faulting(func() { d.scan(v) }); err != nil {
		return r.faultErr(err)
	}
	return nil
}

// ViewReservedEncoded returns the stored bytes of the values Reserve took
// at at in place, as ViewReserved returns values: integers hold no NaN,
// and nothing is scanned.
func (r *Raw) ViewReservedEncoded(at int64, values int) ([]byte, error) {
	b, err := r.viewReserved(at, int64(values*r.direct.dt.size))
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return b, r.reservedEnd(at)
}

// viewReserved returns the k bytes at at of the mapping, once an fstat
// has found them still in the file; none at the end, with its error.
func (r *Raw) viewReserved(at, k int64) ([]byte, error) {
	d := r.direct
	if d.mapped == nil || at < 0 || at+k > int64(len(d.mapped)) {
		return nil, fmt.Errorf("capture: %s: %d bytes at %d are not in the mapping", r.name, k, at)
	}
	if k == 0 {
		return nil, r.reservedEnd(at)
	}
	if now, err := fileSize(d.f); err != nil {
		return nil, fmt.Errorf("capture: %s: %w", r.name, err)
	} else if now < d.mapStart+at+k {
		return nil, r.truncatedErr(now)
	}
	return d.mapped[at : at+k : at+k], nil
}

// reservedEnd is the end's error after the last reservation (at at), else
// nil.
func (r *Raw) reservedEnd(at int64) error {
	if d := r.direct; d.endAt.Load() == at+1 {
		return r.endErrLeft(d.endLeft)
	}
	return nil
}

// shortErr is the error of a reserved read cut short by err: the file was
// truncated when it ends there.
func (r *Raw) shortErr(err error) error {
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("capture: read %s: %w", r.name, err)
	}
	now, serr := fileSize(r.direct.f)
	if serr != nil {
		return fmt.Errorf("capture: %s: %w", r.name, serr)
	}
	return r.truncatedErr(now)
}

// reservedChunk is how much of a reserved block is read before it is
// scanned: the bytes are still in the core's cache.
const reservedChunk = 512 << 10
