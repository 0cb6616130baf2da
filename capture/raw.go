package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// rawBufSize is the size of the byte buffer each Raw allocates once.
const rawBufSize = 64 << 10

// maxNoProgress bounds consecutive (0, nil) reads from a misbehaving reader.
const maxNoProgress = 100

// Raw decodes little-endian samples (float32, 8-, 16-, 24- or 32-bit
// integers) of one or more interleaved channels from a byte stream. It is
// also the decoder behind WAV and SigMF sources. It is not safe for
// concurrent use.
type Raw struct {
	r      io.Reader
	closer io.Closer // set when Raw owns the input
	name   string    // path or description, for messages
	dt     datatype
	info   Info
	fbytes int // bytes per frame: every channel's sample
	meta   *Meta
	frameBuf
	consumed int64 // bytes read from r
	declared int64 // byte count the header promised; -1 if unknown
	eof      bool
	sniff    bool  // check the first bytes for a container header (stdin)
	err      error // sticky terminal error
	closed   bool
	direct   *fileReader // a regular file, read by position
	// A blocked read of a pollable input (pipe, FIFO, socket, terminal)
	// is woken by a read deadline when the Read's context ends.
	dl deadliner
	rw readWatch

	nonFinite // NaN and ±Inf values delivered (float formats)
}

// deadliner is an input whose blocked reads a deadline interrupts: an
// *os.File in the runtime poller. Regular files are not (their reads do
// not block on a writer), and SetReadDeadline fails on them harmlessly.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// NewRaw returns a source decoding r in format ("ri16_le", "rf32_le",
// "ci16_le", "cf32_le", "cu8" or "cs8"). info.SampleRate must be positive,
// info.Complex must agree with the format, and info.NumChannels (0 = 1)
// channels are interleaved frame by frame. Close does not close r; the
// caller owns it (for example os.Stdin).
func NewRaw(r io.Reader, format string, info Info) (*Raw, error) {
	if r == nil {
		return nil, errors.New("capture: NewRaw: nil reader")
	}
	if format == FormatWAV || format == FormatSigMF {
		return nil, fmt.Errorf("capture: NewRaw: format %q is a container; use NewWAV or OpenSigMF", format)
	}
	dt, err := lookupDatatype(format)
	if err != nil {
		return nil, fmt.Errorf("capture: NewRaw: %w", err)
	}
	if err := checkRate(info.SampleRate); err != nil {
		return nil, fmt.Errorf("capture: NewRaw: %w", err)
	}
	if info.Complex != dt.complex {
		return nil, fmt.Errorf("capture: NewRaw: format %s is %s but info.Complex is %t", format, kind(dt.complex), info.Complex)
	}
	if err := checkChannels(info.NumChannels); err != nil {
		return nil, fmt.Errorf("capture: NewRaw: %w", err)
	}
	r2 := newRaw(r, nil, "input stream", dt, info.SampleRate, -1, info.ChannelCount())
	r2.sniff = true
	return r2, nil
}

// checkChannels checks a requested channel count (0 = 1).
func checkChannels(n int) error {
	if n < 0 || n > MaxChannels {
		return fmt.Errorf("%d channels: want 1..%d", n, MaxChannels)
	}
	return nil
}

func newRaw(r io.Reader, closer io.Closer, name string, dt datatype, rate float64, declared int64, nch int) *Raw {
	dl, _ := r.(deadliner)
	info := Info{SampleRate: rate, Complex: dt.complex, NumChannels: nch}
	return &Raw{
		dl:       dl,
		r:        r,
		closer:   closer,
		name:     name,
		dt:       dt,
		info:     info,
		fbytes:   dt.frame() * info.ChannelCount(),
		frameBuf: frameBuf{buf: make([]byte, rawBufSize)},
		declared: declared,
	}
}

// SignalMeta returns the metadata carried from the input (a SigMF recording's
// global fields and annotations, a WAV file's), or nil.
func (r *Raw) SignalMeta() *Meta { return r.meta }

// Len returns the frames left to read and true when the input's length is
// known (a regular file, a WAV header's data size); false otherwise.
func (r *Raw) Len() (int64, bool) {
	switch {
	case r.direct != nil:
		return r.direct.restBytes() / int64(r.fbytes), true
	case r.declared >= 0:
		return (r.declared - r.consumed + int64(r.hi-r.lo)) / int64(r.fbytes), true
	}
	return 0, false
}

// Info describes the stream.
func (r *Raw) Info() Info { return r.info }

// Datatype returns the SigMF name of the stored sample format.
func (r *Raw) Datatype() string { return r.dt.name }

// PCMBits implements [PCMSource].
func (r *Raw) PCMBits() int { return r.dt.pcmBits() }

// Close closes the input if the source opened it. Closing twice is a no-op.
func (r *Raw) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.rw.unwatch()
	var merr error
	if r.direct != nil {
		merr = r.direct.close()
	}
	if merr != nil {
		merr = fmt.Errorf("capture: unmap %s: %w", r.name, merr)
	}
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return errors.Join(merr, fmt.Errorf("capture: close %s: %w", r.name, err))
		}
	}
	return merr
}

// Read implements [Source]. Float samples are checked for NaN and ±Inf
// values as they are decoded (or, read in place from a file, by the
// goroutine that read each part), which are counted ([NonFiniteCounter]).
func (r *Raw) Read(ctx context.Context, dst []float32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := r.info.Channels()
	if err := checkDst(dst, ch); err != nil {
		return 0, err
	}
	if r.direct != nil && r.err == nil && !r.eof {
		return r.readDirect(dst)
	}
	r.watch(ctx)
	frame := r.fbytes
	n, stalls := 0, 0
	for n < len(dst) {
		if k := min((r.hi-r.lo)/frame, (len(dst)-n)/ch); k > 0 && !r.sniff {
			r.decode(dst[n:n+k*ch], r.buf[r.lo:r.lo+k*frame])
			if r.dt.enc == encF32 {
				r.scan(dst[n : n+k*ch])
			}
			r.lo += k * frame
			n += k * ch
			continue
		}
		if r.err != nil {
			return n, r.err
		}
		if r.eof {
			r.err = r.endErr()
			return n, r.err
		}
		if err := ctx.Err(); err != nil {
			if r.sniff && r.hi > r.lo {
				// Stopped before the check had its bytes: check those
				// there are and deliver their samples, not drop them.
				if r.endSniff() != nil {
					return n, r.err
				}
				continue
			}
			return n, err
		}
		m, err := r.refill(r.r)
		r.consumed += int64(m)
		if r.sniff && (sniffSettled(r.buf[:r.hi]) || err != nil || m == 0) && r.endSniff() != nil {
			return n, r.err
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
			if r.hi-r.lo >= r.fbytes {
				continue // whole frames the check held back: delivered first
			}
			return n, ctx.Err() // woken by the watch: not sticky
		case err == io.EOF || err == io.ErrUnexpectedEOF && r.declared >= 0:
			// An archive member cut short ends with ErrUnexpectedEOF:
			// endErr says how much of the declared data came.
			r.eof = true
		case err != nil:
			r.err = fmt.Errorf("capture: read %s: %w", r.name, err)
		case m == 0:
			if stalls++; stalls >= maxNoProgress {
				r.err = fmt.Errorf("capture: read %s: %w", r.name, io.ErrNoProgress)
			}
		default:
			stalls = 0
		}
	}
	return n, nil
}

// watch makes ctx's end interrupt a blocked read of a pollable input.
func (r *Raw) watch(ctx context.Context) {
	if r.dl != nil {
		r.rw.watch(ctx, r.dl)
	}
}

// NewStdin returns a source decoding f (normally os.Stdin) like NewRaw,
// whose reads a cancelled context interrupts even while the writer is
// silent. A pipe, FIFO or terminal is reopened through /proc/self/fd in
// non-blocking mode, so that the runtime poller can wake the read, leaving
// f's own file description (shared with the shell) as it was; the source
// owns and closes the new one. Other inputs (regular files) are read
// through f directly.
func NewStdin(f *os.File, format string, info Info) (*Raw, error) {
	r, err := NewRaw(f, format, info)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		// A redirected file is checked now, before any output is
		// created, not at the first read.
		if err := sniffFile(f, format); err != nil {
			return nil, fmt.Errorf("capture: stdin: %w", err)
		}
		r.sniff = false
	}
	if p := reopenPollable(f); p != nil {
		r.r, r.closer, r.dl = p, p, p
	}
	return r, nil
}

// NewStdinWAV reads a WAV stream from in (normally os.Stdin), as NewStdin
// reads raw samples: each WAV channel a real channel, or pairs of them
// I,Q when complex. The header is read now; when in is a pipe, ctx's end
// interrupts that read too. Close does not close in.
func NewStdinWAV(ctx context.Context, in io.Reader, complex bool) (*Raw, error) {
	var (
		closer io.Closer
		p      *os.File
	)
	if f, ok := in.(*os.File); ok {
		p = reopenPollable(f)
	}
	if p != nil {
		in, closer = p, p
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { _ = p.SetReadDeadline(time.Now()); close(fired) })
		defer func() {
			if !stop() {
				<-fired                            // it ran or is running: let it finish first
				_ = p.SetReadDeadline(time.Time{}) // Read watches its own ctx
			}
		}()
	}
	r, err := newWAV(in, closer, "stdin", complex)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("capture: wav stdin: %w", ctx.Err())
		}
		return nil, err
	}
	if p != nil {
		r.dl = p // newWAV may wrap p in a LimitReader, which hides it
	}
	return r, nil
}

// reopenPollable reopens a pipe, FIFO or terminal f through /proc/self/fd
// in non-blocking mode, so that the runtime poller can wake its reads and
// a read deadline interrupts them, leaving f's own file description
// (shared with the shell) as it was. It returns nil for other inputs
// (regular files, sockets) and where /proc is missing: those are read
// through f directly.
func reopenPollable(f *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice|os.ModeSocket) == 0 {
		return nil
	}
	p, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil // a socket, or no /proc: blocking reads
	}
	if err := p.SetReadDeadline(time.Time{}); err != nil {
		p.Close() // not in the poller after all
		return nil
	}
	return p
}

// openInput opens a file to read. A FIFO's open waits for a writer, so it
// happens on another goroutine and a cancelled ctx abandons it.
func openInput(ctx context.Context, path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		if err == nil && fi.IsDir() {
			// Refused here, before any output is created: a directory
			// opens, and only its first read fails.
			return nil, fmt.Errorf("open %s: is a directory, not a sample file", path)
		}
		return os.Open(path)
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.Open(path)
		ch <- result{f, err}
	}()
	select {
	case res := <-ch:
		return res.f, res.err
	case <-ctx.Done():
		go func() { // close it should a writer still come
			if res := <-ch; res.f != nil {
				res.f.Close()
			}
		}()
		return nil, fmt.Errorf("open %s: waiting for a writer: %w", path, ctx.Err())
	}
}

// what names the sample layout in messages: "cf32_le" or "4-channel cf32_le frame".
func (r *Raw) what() string {
	if n := r.info.ChannelCount(); n > 1 {
		return fmt.Sprintf("%d-channel %s frame", n, r.dt.name)
	}
	return r.dt.name
}

// endErr is the error at end of input: io.EOF, or ErrTruncated when bytes
// are left over or the input is shorter than its header declared.
func (r *Raw) endErr() error { return r.endErrLeft(r.hi - r.lo) }

// endErrLeft is endErr with left bytes of a partial sample left over.
func (r *Raw) endErrLeft(left int) error {
	short := r.declared >= 0 && r.consumed < r.declared
	switch {
	case short && left > 0:
		return inputErr(ErrTruncated, "capture: %s: truncated input: header declares %d data bytes but input ends after %d, and the last %d byte(s) are not a whole %d-byte %s sample",
			r.name, r.declared, r.consumed, left, r.fbytes, r.what())
	case short:
		return inputErr(ErrTruncated, "capture: %s: truncated input: header declares %d data bytes but input ends after %d",
			r.name, r.declared, r.consumed)
	case left > 0:
		return inputErr(ErrTruncated, "capture: %s: truncated input: %d byte(s) left over at the end, not a whole %d-byte %s sample",
			r.name, left, r.fbytes, r.what())
	}
	return io.EOF
}

// decode converts len(dst) little-endian values from src.
func (r *Raw) decode(dst []float32, src []byte) { decodeLE(r.dt, dst, src) }

// OpenFile opens a sample file. format is a raw datatype ("ri16_le",
// "rf32_le", "ci16_le", "cf32_le", "cu8", "cs8"), "wav" or "sigmf"; ""
// infers it from the extension (.wav; .sigmf-meta, .sigmf-data, .sigmf).
// Raw formats need sampleRate > 0. For WAV and SigMF the rate comes from
// the file; a non-zero sampleRate that disagrees with it is an error rather
// than being ignored. See [Open] for more channels.
func OpenFile(path, format string, sampleRate float64) (Source, error) {
	return OpenFileContext(context.Background(), path, format, sampleRate)
}

// OpenFileContext is OpenFile where a cancelled ctx abandons the open of a
// raw FIFO that no writer has opened yet.
func OpenFileContext(ctx context.Context, path, format string, sampleRate float64) (Source, error) {
	return Open(ctx, path, FileOptions{Format: format, SampleRate: sampleRate})
}

// FileOptions say how [Open] reads a file.
type FileOptions struct {
	// Format is a raw datatype, "wav" or "sigmf"; "" infers it from the
	// extension.
	Format string
	// SampleRate is required for raw formats; for WAV and SigMF, when not
	// 0, it must agree with the file.
	SampleRate float64
	// Channels is the number of interleaved channels in a frame. Raw
	// formats: 0 means 1. WAV and SigMF take it from the file; a non-zero
	// value must agree (for a complex WAV, it counts I/Q pairs).
	Channels int
	// Complex pairs a WAV file's channels as I,Q (left I, right Q): 2N
	// channels in the file are N complex channels. Raw and SigMF formats
	// say themselves whether they are complex; true there must agree.
	Complex bool
}

// Open opens a sample file as [OpenFile] does, with the channels and
// pairing of opts. A raw format on a file that is a WAV file or SigMF
// metadata is refused (the header would be read as samples).
func Open(ctx context.Context, path string, opts FileOptions) (Source, error) {
	format := opts.Format
	if format == "" {
		var err error
		if format, err = inferFormat(path); err != nil {
			return nil, err
		}
	}
	if err := checkChannels(opts.Channels); err != nil {
		return nil, fmt.Errorf("capture: %s: %w", path, err)
	}
	var src Source
	switch format {
	case FormatWAV:
		w, err := openWAV(path, opts.Complex)
		if err != nil {
			return nil, err
		}
		src = w
	case FormatSigMF:
		s, err := OpenSigMF(path)
		if err != nil {
			return nil, err
		}
		src = s
	default:
		dt, err := lookupDatatype(format)
		if err != nil {
			return nil, fmt.Errorf("capture: %s: %w; or use wav or sigmf", path, err)
		}
		if err := checkRate(opts.SampleRate); err != nil {
			return nil, fmt.Errorf("capture: %s: %w (raw %s files need it)", path, err, format)
		}
		if opts.Complex && !dt.complex {
			return nil, fmt.Errorf("capture: %s: format %s is real; complex I,Q needs a complex format (%s, %s, %s, %s)", path, format, FormatCF32, FormatCI16, FormatCU8, FormatCS8)
		}
		f, err := openInput(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if err := sniffFile(f, format); err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: %s: %w", path, err)
		}
		r := newRaw(f, f, path, dt, opts.SampleRate, -1, max(1, opts.Channels))
		r.direct = newFileReader(f, dt, r.fbytes, 0, -1, r.scan)
		if r.direct == nil {
			if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
				r.sniff = true // a FIFO: checked on the first bytes read
			}
		}
		return r, nil
	}
	if err := checkGiven(path, src.Info(), opts, format); err != nil {
		src.Close()
		return nil, err
	}
	return src, nil
}

// checkGiven refuses a container (wav, sigmf) whose header disagrees with
// the rate, channel count or complex pairing the user gave in opts.
func checkGiven(name string, info Info, opts FileOptions, format string) error {
	if got := info.SampleRate; opts.SampleRate != 0 && opts.SampleRate != got {
		return fmt.Errorf("capture: %s: sample rate %g S/s was given but the file says %g S/s", name, opts.SampleRate, got)
	}
	if opts.Channels != 0 && opts.Channels != info.ChannelCount() {
		what := "channel(s)"
		if info.Complex {
			what = "complex (I,Q) channel(s)"
		}
		return fmt.Errorf("capture: %s: %d channels were given but the file has %d %s", name, opts.Channels, info.ChannelCount(), what)
	}
	if format == FormatSigMF && opts.Complex && !info.Complex {
		return fmt.Errorf("capture: %s: complex was given but the recording's datatype is real", name)
	}
	return nil
}

// OpenStdin returns a source reading in (normally os.Stdin) in
// opts.Format: a raw format at opts.SampleRate with opts.Channels
// channels (NewStdin), or a WAV stream whose header says them (given
// values must agree, as Open checks). On a pipe, ctx's end interrupts
// every read, the WAV header's included.
func OpenStdin(ctx context.Context, in io.Reader, opts FileOptions) (Source, error) {
	if err := checkChannels(opts.Channels); err != nil {
		return nil, fmt.Errorf("capture: stdin: %w", err)
	}
	switch opts.Format {
	case FormatWAV:
		w, err := NewStdinWAV(ctx, in, opts.Complex)
		if err != nil {
			return nil, err
		}
		if err := checkGiven("stdin", w.Info(), opts, FormatWAV); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	case FormatSigMF:
		return nil, fmt.Errorf("capture: stdin: a sigmf recording is two files (meta and data); give its path")
	}
	dt, err := lookupDatatype(opts.Format)
	if err != nil {
		return nil, fmt.Errorf("capture: stdin: %w", err)
	}
	info := Info{SampleRate: opts.SampleRate, Complex: dt.complex, NumChannels: opts.Channels}
	if f, ok := in.(*os.File); ok {
		return NewStdin(f, opts.Format, info)
	}
	return NewRaw(in, opts.Format, info)
}

// sniffLen is how many leading bytes sniffContainer looks at.
const sniffLen = 512

// sniffFile refuses a raw format on a file whose bytes from its offset on
// (stdin may have been read before) start like a WAV file or SigMF
// metadata; the read is by position, so the file offset is kept.
func sniffFile(f *os.File, format string) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	b := make([]byte, sniffLen)
	n, _ := f.ReadAt(b, off)
	return sniffContainer(b[:n], format)
}

// endSniff ends the container check of a stream on the bytes buffered,
// setting the sticky error when they are a container's.
func (r *Raw) endSniff() error {
	r.sniff = false
	if err := sniffContainer(r.buf[r.lo:r.hi], r.dt.name); err != nil {
		r.err = fmt.Errorf("capture: %s: %w", r.name, err)
	}
	return r.err
}

// sniffSettled reports whether a stream's first bytes b already settle
// sniffContainer's answer, so that a live stream's samples need not wait
// for sniffLen bytes: anything but a RIFF/RF64 header or a JSON document
// is known from its first 4 bytes.
func sniffSettled(b []byte) bool {
	if len(b) >= sniffLen {
		return true
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] == '{' {
		return false
	}
	if len(b) < 4 {
		return false
	}
	if h := string(b[:4]); h == "RIFF" || h == "RF64" {
		return len(b) >= 12
	}
	return true
}

// sniffContainer refuses a raw format on input that starts with a
// RIFF/WAVE header or is a SigMF metadata (JSON) document: the header
// would otherwise be filtered as samples.
func sniffContainer(b []byte, format string) error {
	if len(b) >= 12 && (string(b[0:4]) == "RIFF" || string(b[0:4]) == "RF64") && string(b[8:12]) == "WAVE" {
		return inputErr(ErrFormat, "the input is a WAV file (it starts with a RIFF/WAVE header), not raw %s samples; use format: wav (or omit format for a .wav name)", format)
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) > 0 && t[0] == '{' && (bytes.Contains(t, []byte(`"global"`)) || bytes.Contains(t, []byte(`"core:`))) {
		return inputErr(ErrFormat, "the input is SigMF metadata (a JSON document), not raw %s samples; give the .sigmf-meta with format: sigmf, or the .sigmf-data", format)
	}
	return nil
}

// inferFormat maps a file extension to a container format.
func inferFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".wav":
		return FormatWAV, nil
	case ".sigmf-meta", ".sigmf-data", ".sigmf":
		return FormatSigMF, nil
	}
	return "", fmt.Errorf("capture: cannot infer the sample format of %s from its extension; give it explicitly (%s, wav or sigmf)", path, supportedDatatypes)
}

func checkRate(rate float64) error {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("sample rate %g must be a positive finite number", rate)
	}
	return nil
}

func kind(complex bool) string {
	if complex {
		return "complex"
	}
	return "real"
}
