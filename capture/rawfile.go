package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"
)

// Float32 samples in a regular file are read straight into the caller's
// buffer, with no decode step: the bytes on disk are the values in memory
// on a little-endian machine. A large read is split into stripes read at
// once by several goroutines (pread), because one core copying from the
// page cache reaches a fraction of what a GPU's copy engine takes in.

// stripeMin is the smallest stripe worth a goroutine of its own.
const stripeMin = 512 << 10

// maxStripes bounds the goroutines reading one buffer.
const maxStripes = 16

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// fileReader reads [off, end) of a regular file by position.
type fileReader struct {
	f        *os.File
	off, end int64 // end is -1 when the file is read to its end
	workers  int
	jobs     chan stripe       // to the workers, started on first use
	results  chan stripeResult // from them
}

type stripe struct {
	b   []byte
	off int64
	i   int
}

type stripeResult struct {
	i, n int
	err  error
}

// newFileReader returns a reader of f from off (to end, or to the end of
// the file when end < 0) when direct reads suit dt and f, else nil.
func newFileReader(f *os.File, dt datatype, off, end int64) *fileReader {
	if !dt.float || !littleEndian || f == nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return &fileReader{f: f, off: off, end: end, workers: min(maxStripes, runtime.GOMAXPROCS(0))}
}

// read fills as much of b as the file holds from the offset and advances
// it; it returns io.EOF with the bytes read once the end is reached.
func (r *fileReader) read(b []byte) (int, error) {
	limited := r.end >= 0 && int64(len(b)) > r.end-r.off
	if limited {
		b = b[:r.end-r.off]
	}
	var n int
	var err error
	if nstripes := min(r.workers, len(b)/stripeMin); nstripes > 1 {
		n, err = r.readStriped(b, nstripes)
	} else {
		n, err = r.f.ReadAt(b, r.off)
	}
	r.off += int64(n)
	if err == nil && limited {
		err = io.EOF
	}
	return n, err
}

// readStriped reads b in nstripes parts at once and returns the length of
// the prefix that was read whole (a part cut short by the end of the file
// ends it).
func (r *fileReader) readStriped(b []byte, nstripes int) (int, error) {
	if r.jobs == nil {
		r.jobs = make(chan stripe, maxStripes)
		r.results = make(chan stripeResult, maxStripes)
		for range r.workers {
			go func(jobs <-chan stripe, results chan<- stripeResult) {
				for j := range jobs {
					n, err := r.f.ReadAt(j.b, j.off)
					results <- stripeResult{i: j.i, n: n, err: err}
				}
			}(r.jobs, r.results)
		}
	}
	size := (len(b)/nstripes + 4095) &^ 4095
	var ns [maxStripes]int
	var errs [maxStripes]error
	parts := 0
	for lo := 0; lo < len(b); lo += size {
		hi := min(lo+size, len(b))
		r.jobs <- stripe{b: b[lo:hi], off: r.off + int64(lo), i: parts}
		parts++
	}
	for range parts {
		res := <-r.results
		ns[res.i], errs[res.i] = res.n, res.err
	}
	n := 0
	for i := range parts {
		n += ns[i]
		if e := errs[i]; e != nil {
			if errors.Is(e, io.EOF) {
				return n, io.EOF
			}
			return n, e
		}
	}
	return n, nil
}

// close stops the workers.
func (r *fileReader) close() {
	if r.jobs != nil {
		close(r.jobs)
		r.jobs = nil
	}
}

// readDirect is Raw.Read for a float32 file read by position: whole
// samples go straight into dst.
func (r *Raw) readDirect(dst []float32) (int, error) {
	frame := r.dt.frame()
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst))
	m, err := r.direct.read(b)
	r.consumed += int64(m)
	whole := m / frame
	n := whole * r.info.Channels()
	switch {
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
