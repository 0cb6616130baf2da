package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Sink types of a Spec.
const (
	TypeNull  = "null"
	TypeFile  = "file"
	TypeSigMF = "sigmf"
	TypeWAV   = "wav"
)

// Stdout is the path that names standard output (Spec.Stdout) for the
// file and wav types.
const Stdout = "-"

// Spec describes an output before anything is created.
type Spec struct {
	Type string // TypeNull, TypeFile, TypeSigMF or TypeWAV
	// Path is the file (file, wav: "-" is Stdout) or the base name (sigmf:
	// see CreateSigMF).
	Path string
	// Format is rf32_le, cf32_le, ri16_le, ci16_le or cs8 (file, sigmf),
	// or pcm16, pcm24 or float32 (wav).
	Format string
	// Channels is the stream's channels per frame (0 = 1), written
	// interleaved as they come.
	Channels int
	// Complex says each channel is I,Q (wav; the raw formats say it
	// themselves).
	Complex bool
	// SampleRate is the wav header's rate, a whole number.
	SampleRate float64
	// Stdout receives the samples when Path is "-" (file, wav); the sink
	// never closes it. Nil refuses "-".
	Stdout io.Writer
	// Overwrite allows replacing existing output files; without it an
	// existing regular file is refused with ErrExists. Devices and FIFOs
	// are written to, never truncated, either way.
	Overwrite bool
	// Inputs are the files the run reads (source, dataset, taps, config).
	// An output resolving to any of them, by device and inode or by its
	// path after symlinks and "..", is refused with ErrIsInput, whatever
	// Overwrite says. Paths that do not exist are ignored.
	Inputs []string
	// Meta is the SigMF metadata (TypeSigMF); Datatype defaults to Format.
	Meta SigMFMeta
	// MetaEvery is the SigMF sink's MetaEvery.
	MetaEvery time.Duration
	// OnClip, if set, is called once when the first value is clipped to
	// the int16 range (see Raw.SetClipHandler).
	OnClip func(total uint64)
	// MakeDirs creates missing parent directories (removed again if
	// Create fails).
	MakeDirs bool
	// StampStart sets a SigMF recording's captures[0] core:datetime to
	// the time Create is called, when Meta.Datetime is zero.
	StampStart bool
	// FirstSample, with StampStart, is a live source's first sample's
	// capture time (capture.Timestamped), zero until it is known: read at
	// the first write, it replaces Create's time in the metadata from the
	// next rewrite, so the file says it during the run and after a kill.
	FirstSample func() time.Time
	// Split writes each channel to a recording of its own (TypeFile,
	// TypeSigMF; a *Split): channel j's path has Labels[j] before its
	// extension (out/x.ch03.cf32) or after a SigMF base
	// (out/x.ch03.sigmf-meta), and its SigMF frequencies are Meta's
	// moved by Centres[j] Hz.
	Split   bool
	Labels  []string
	Centres []float64
	// Open, if set, makes a sink of a type the plan does not create
	// itself (a network sink): Create calls it, and nothing else of the
	// Spec but Type applies.
	Open func() (Sink, error)
	// OnWaitReader, if set, is called once when an output is a FIFO that
	// no reader has open yet; Create waits for one until its context ends.
	OnWaitReader func(path string)
}

// Plan is a checked Spec: everything that can be verified without writing
// has been. Create then makes the directories and files.
type Plan struct {
	spec    Spec
	f       format
	outputs []output
	sigmf   *SigMF  // metadata prepared, nothing written
	parts   []*Plan // a split's: one plan per channel
}

// output is one file a plan creates.
type output struct {
	path     string
	existing bool // a regular file that Overwrite allows replacing
	special  bool // an existing device or FIFO: written to, not created
	fifo     bool // a FIFO: opening it waits for a reader
}

// Prepare checks a Spec without touching the filesystem: the format and
// metadata, the paths, that no output is an input, and that no output
// exists unless Overwrite is set.
func Prepare(s Spec) (*Plan, error) {
	p := &Plan{spec: s}
	if s.Type == TypeNull || s.Open != nil {
		return p, nil
	}
	if s.Channels < 0 || s.Channels > MaxChannels {
		return nil, fmt.Errorf("sink: %d channels: want 1..%d", s.Channels, MaxChannels)
	}
	if s.Type == TypeWAV {
		// Refused before the run starts, not when the file is created.
		name := s.Path
		if name == Stdout {
			name = "standard output"
		}
		if err := checkWAVRate(name, s.SampleRate); err != nil {
			return nil, err
		}
	}
	if s.Split {
		return prepareSplit(s)
	}
	var f format
	var err error
	if s.Type == TypeWAV {
		f, err = lookupWAVFormat(s.Format, s.Complex, s.Channels)
	} else {
		f, err = lookupFormat(s.Format)
		f.channels = max(1, s.Channels)
	}
	if err != nil {
		return nil, fmt.Errorf("sink: %s: %w", s.Path, err)
	}
	p.f = f
	if s.Path == Stdout && s.Type != TypeSigMF {
		if s.Stdout == nil {
			return nil, fmt.Errorf("sink: %s: standard output is not available", s.Type)
		}
		if of, ok := s.Stdout.(*os.File); ok {
			if fi, err := of.Stat(); err == nil {
				if in := sameAsInput("", fi, s.Inputs); in != "" {
					return nil, fmt.Errorf("%w: standard output is the input %s; refusing to write over an input", ErrIsInput, in)
				}
			}
		}
		return p, nil
	}
	var paths []string
	switch s.Type {
	case TypeFile, TypeWAV:
		if s.Path == "" || strings.HasSuffix(s.Path, "/") {
			return nil, fmt.Errorf("sink: file path %q names a directory, not a file", s.Path)
		}
		paths = []string{s.Path}
	case TypeSigMF:
		if s.Path == Stdout {
			return nil, fmt.Errorf("sink: sigmf writes two files (.sigmf-data and .sigmf-meta), not standard output; use type file or wav for \"-\"")
		}
		base, err := sigmfBase(s.Path)
		if err != nil {
			return nil, err
		}
		m := s.Meta
		if m.Channels == 0 {
			m.Channels = s.Channels
		}
		if m.Datatype == "" {
			m.Datatype = s.Format
		}
		if m.Datatype != s.Format {
			return nil, fmt.Errorf("sink: sigmf %s: datatype %s differs from format %s", base, m.Datatype, s.Format)
		}
		if p.sigmf, err = newSigMF(m); err != nil {
			return nil, fmt.Errorf("sink: sigmf %s: %w", base, err)
		}
		p.sigmf.MetaEvery = s.MetaEvery
		paths = []string{base + ".sigmf-data", base + ".sigmf-meta"}
	default:
		return nil, fmt.Errorf("sink: unknown type %q (want %s, %s, %s or %s)", s.Type, TypeFile, TypeSigMF, TypeWAV, TypeNull)
	}
	for _, path := range paths { // inputs first: that error matters most
		if err := CheckNotInput(path, s.Inputs...); err != nil {
			return nil, err
		}
	}
	for _, path := range paths {
		o, err := checkOutput(path, s.Overwrite)
		if err != nil {
			return nil, err
		}
		p.outputs = append(p.outputs, o)
	}
	if err := distinct(p.outputs); err != nil {
		return nil, err
	}
	return p, nil
}

// distinct refuses outputs of which two are one file (links to it, or a
// link of one to the other, such as a .sigmf-data linked to its
// .sigmf-meta): the second written would destroy the first. Only
// existing outputs can be; a device or FIFO may be written twice.
func distinct(outs []output) error {
	var seen []os.FileInfo
	var paths []string
	for _, o := range outs {
		if !o.existing {
			continue
		}
		fi, err := os.Stat(o.path)
		if err != nil {
			continue // gone since checkOutput: the open says so
		}
		for i, s := range seen {
			if os.SameFile(fi, s) {
				return fmt.Errorf("%w: %s and %s are the same file (links to one); refusing to write two outputs over it", ErrExists, paths[i], o.path)
			}
		}
		seen, paths = append(seen, fi), append(paths, o.path)
	}
	return nil
}

// Paths returns the files Create will write.
func (p *Plan) Paths() []string {
	var out []string
	for _, o := range p.outputs {
		out = append(out, o.path)
	}
	return out
}

// checkOutput checks one output path, already checked against the
// inputs, against what exists.
func checkOutput(path string, overwrite bool) (output, error) {
	o := output{path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return o, fmt.Errorf("sink: %s is a dangling symlink; refusing to write through it", path)
		}
		return o, nil
	case err != nil:
		return o, fmt.Errorf("sink: %w", err)
	case fi.IsDir():
		return o, fmt.Errorf("sink: %s is a directory", path)
	case !fi.Mode().IsRegular():
		o.special, o.fifo = true, fi.Mode()&fs.ModeNamedPipe != 0
		return o, nil
	case !overwrite:
		return o, fmt.Errorf("%w: %s already exists (%d bytes); choose another path, remove it, or set sink.overwrite: true (--overwrite)", ErrExists, path, fi.Size())
	}
	o.existing = true
	return o, nil
}

// sameAsInput returns the input that path (or the open file fi, if not
// nil) is, or "".
func sameAsInput(path string, fi os.FileInfo, inputs []string) string {
	if fi == nil {
		fi, _ = os.Stat(path)
	}
	rp := resolve(path)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ifi, err := os.Stat(in); err == nil && fi != nil && os.SameFile(fi, ifi) {
			return in
		}
		if rp != "" && rp == resolve(in) {
			return in
		}
	}
	return ""
}

// resolve returns path made absolute, with symlinks and ".." resolved as
// far as the path exists; "" if it cannot.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	// Resolve the longest existing prefix; keep the rest as written.
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// Create makes missing parent directories and the output files and returns
// the sink. On failure it removes the files and directories it created, so
// a failed start leaves the filesystem as it found it. ctx ends the wait
// for a FIFO output's reader.
func (p *Plan) Create(ctx context.Context) (s Sink, err error) {
	if p.spec.Open != nil {
		return p.spec.Open()
	}
	if p.spec.Type == TypeNull {
		return NewNull(), nil
	}
	if p.parts != nil {
		return p.createSplit(ctx)
	}
	if p.outputs == nil { // standard output
		raw := newRaw(p.spec.Stdout, nil, "standard output", p.f)
		if p.spec.OnClip != nil {
			raw.SetClipHandler(p.spec.OnClip)
		}
		if p.spec.Type == TypeWAV {
			var seek io.WriteSeeker
			if f, ok := p.spec.Stdout.(*os.File); ok {
				if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && !appending(f) {
					if off, err := f.Seek(0, io.SeekCurrent); err == nil && off == 0 {
						seek = f // redirected to a file (>, not >>): the sizes can be patched
					}
				}
			}
			return newWAV(raw, p.spec.SampleRate, seek)
		}
		return raw, nil
	}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if p.spec.MakeDirs {
		dirs, err := mkdirTracked(filepath.Dir(p.outputs[0].path))
		undo = append(undo, func() { removeDirs(dirs) })
		if err != nil {
			return nil, fmt.Errorf("sink: create output directory: %w", err)
		}
	}
	o := p.outputs[0]
	file, err := p.open(ctx, o)
	if err != nil {
		return nil, err
	}
	if !o.existing && !o.special {
		undo = append(undo, func() { os.Remove(o.path) })
	}
	undo = append(undo, func() { file.Close() })
	var dir *os.Root
	if p.sigmf != nil {
		if dir, err = openDirOf(file, o.path); err != nil {
			return nil, err
		}
		undo = append(undo, func() { dir.Close() })
	}
	raw := newFileRaw(file, o.path, p.f)
	if p.spec.OnClip != nil {
		raw.SetClipHandler(p.spec.OnClip)
	}
	if p.spec.Type == TypeWAV {
		return newWAV(raw, p.spec.SampleRate, file)
	}
	if p.sigmf == nil {
		return raw, nil
	}
	sm := p.sigmf
	sm.Raw, sm.metaPath, sm.dir = raw, p.outputs[1].path, dir
	if p.spec.StampStart && sm.t0.IsZero() {
		sm.t0, sm.firstSample = time.Now(), p.spec.FirstSample
	}
	if err := CheckNotInput(sm.metaPath, p.spec.Inputs...); err != nil {
		return nil, err
	}
	if err := sm.writeMeta(); err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	sm.lastMeta = time.Now()
	return sm, nil
}

// openDirOf opens the directory of the data file f (opened as path) for a
// SigMF recording's metadata, which is rewritten during the run and at its
// end through this handle, never by path: a directory renamed or swapped
// for a symlink meanwhile cannot redirect it. The handle must be the
// directory f was created in.
func openDirOf(f *os.File, path string) (*os.Root, error) {
	dir, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("sink: sigmf: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		var di os.FileInfo
		// (A symlink to the data is followed by f and not by Lstat.)
		if di, err = dir.Lstat(filepath.Base(path)); err == nil && di.Mode().IsRegular() && !os.SameFile(fi, di) {
			err = fmt.Errorf("%s was replaced while it was being created", path)
		}
	}
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("sink: sigmf: %w", err)
	}
	return dir, nil
}

// open opens an output for writing. An existing regular file is truncated
// only after its identity has been checked on the open descriptor, so a
// path swapped for an input since Prepare is still refused.
func (p *Plan) open(ctx context.Context, o output) (*os.File, error) {
	flags := os.O_WRONLY
	if !o.existing && !o.special {
		flags |= os.O_CREATE | os.O_EXCL
	}
	var f *os.File
	var err error
	if o.fifo {
		f, err = openFIFO(ctx, o.path, p.spec.OnWaitReader)
	} else {
		f, err = os.OpenFile(o.path, flags, 0o644)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s appeared after the start checks", ErrExists, o.path)
		}
		return nil, fmt.Errorf("sink: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		if in := sameAsInput(o.path, fi, p.spec.Inputs); in != "" {
			f.Close()
			return nil, isInputErr(o.path, in)
		}
		if fi.Mode().IsRegular() && o.existing {
			err = f.Truncate(0)
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sink: %s: %w", o.path, err)
	}
	return f, nil
}

// mkdirTracked creates dir and its missing parents like os.MkdirAll, and
// returns the directories it created, outermost first, even on failure.
func mkdirTracked(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return created, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// removeDirs removes directories created by mkdirTracked, innermost first;
// a directory something else has written into since is kept.
func removeDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}

// Deferred is a Sink whose files are created only when Open is called, so
// that a run can first start everything else that can fail (source,
// backend, ring, metrics port) and leave existing files untouched if any of
// it does. Write before Open fails; Close without Open does nothing.
type Deferred struct {
	plan *Plan
	s    Sink
	file atomic.Value // a fileCounts: the encoder(s), for Clipped from other goroutines
	// moveMu guards what Recentre needs: the opened sink, if it records
	// retunes, and those reported before it was opened (the control
	// server and reloads run first; a FIFO output waits for its reader).
	moveMu sync.Mutex
	moved  recentrer // nil until Open
	early  []recentre
}

// recentrer is a sink that records retunes of the chain's shift.
type recentrer interface {
	Recentre(at uint64, delta float64)
}

// noRecentre is the recentrer of a sink that records no retunes.
type noRecentre struct{}

func (noRecentre) Recentre(uint64, float64) {}

// fileCounts are the counts of a sink that writes files: a *Raw (its
// encoder), or a *Split.
type fileCounts interface {
	Clipped() uint64
	Written() uint64
}

// Deferred returns a sink that creates p's files on Open.
func (p *Plan) Deferred() *Deferred { return &Deferred{plan: p} }

// errNotOpen means a Deferred sink was written before Open.
var errNotOpen = errors.New("sink: written before Open")

// Open creates the output (Plan.Create). Calling it again does nothing.
func (d *Deferred) Open(ctx context.Context) error {
	if d.s != nil {
		return nil
	}
	s, err := d.plan.Create(ctx)
	if err != nil {
		return err
	}
	d.s = s
	if sp, ok := s.(*Split); ok {
		d.file.Store(fileCounts(sp))
	} else if r := rawOf(s); r != nil {
		d.file.Store(fileCounts(r))
	}
	d.moveMu.Lock()
	d.moved = noRecentre{} // a sink that records no retunes
	if m, ok := s.(recentrer); ok {
		d.moved = m
	}
	for _, r := range d.early {
		d.moved.Recentre(r.at, r.delta)
	}
	d.early = nil
	d.moveMu.Unlock()
	return nil
}

// SetDatetime sets a SigMF recording's first-sample time (SigMF.SetDatetime);
// other sinks ignore it.
func (d *Deferred) SetDatetime(t time.Time) {
	switch s := d.s.(type) {
	case *SigMF:
		s.SetDatetime(t)
	case *Split:
		s.SetDatetime(t)
	}
}

// Recentre passes a retune of the chain's frequency shift to a SigMF
// recording (SigMF.Recentre), kept until Open if it comes before; other
// sinks ignore it. It is safe to call from any goroutine.
func (d *Deferred) Recentre(at uint64, delta float64) {
	d.moveMu.Lock()
	defer d.moveMu.Unlock()
	if d.moved == nil {
		d.early = append(d.early, recentre{at, delta})
		return
	}
	d.moved.Recentre(at, delta)
}

// Clipped returns the values clipped to the integer range so far; it is
// safe to call from any goroutine.
func (d *Deferred) Clipped() uint64 {
	if f, ok := d.file.Load().(fileCounts); ok {
		return f.Clipped()
	}
	return 0
}

// Written returns the samples that reached the output file, and false for
// a sink that writes no file (null, or not opened).
func (d *Deferred) Written() (uint64, bool) {
	if f, ok := d.file.Load().(fileCounts); ok {
		return f.Written(), true
	}
	return 0, false
}

// EndInput passes the source's total sample count to a SigMF sink, which
// records samples dropped after the last one written (SigMF.EndInput).
func (d *Deferred) EndInput(total uint64) {
	switch s := d.s.(type) {
	case *SigMF:
		s.EndInput(total)
	case *Split:
		s.EndInput(total)
	}
}

// Dropped returns the samples a SigMF sink has recorded as dropped, and
// false for other sinks.
func (d *Deferred) Dropped() (uint64, bool) {
	switch s := d.s.(type) {
	case *SigMF:
		return s.Dropped(), true
	case *Split:
		return s.Dropped()
	}
	return 0, false
}

// Sink returns the created sink, nil before Open.
func (d *Deferred) Sink() Sink { return d.s }

// Write writes to the created sink.
func (d *Deferred) Write(samples []float32) error {
	if d.s == nil {
		return errNotOpen
	}
	return d.s.Write(samples)
}

// WriteIndexed writes with the input index of the first sample to a sink
// that records gaps (SigMF), and plainly to the others.
func (d *Deferred) WriteIndexed(index, inputs uint64, samples []float32) error {
	switch s := d.s.(type) {
	case nil:
		return errNotOpen
	case *SigMF:
		return s.WriteIndexed(index, inputs, samples)
	case *Split:
		return s.WriteIndexed(index, inputs, samples)
	default:
		return s.Write(samples)
	}
}

// Close closes the created sink; without Open it does nothing.
func (d *Deferred) Close() error {
	if d.s == nil {
		return nil
	}
	return d.s.Close()
}

// CheckNotInput returns an error wrapping ErrIsInput if path is one of
// inputs: the same file by device and inode (however it is named: "./",
// "..", a symlink or a hard link), or, where either does not exist or
// cannot be examined, the same absolute path once symlinked directories
// are resolved. Empty inputs are ignored. It is the one guard every
// output goes through: Prepare calls it for a run's sinks, and each
// command that writes a file (design --response, probe --json/--png, the
// bench outputs) calls it with the files it reads before it opens
// anything for writing.
func CheckNotInput(path string, inputs ...string) error {
	if in := sameAsInput(path, nil, inputs); in != "" {
		return isInputErr(path, in)
	}
	return nil
}

// isInputErr is the refusal to write path over the input in.
func isInputErr(path, in string) error {
	return fmt.Errorf("%w: %s is the input %s; refusing to write over an input", ErrIsInput, path, in)
}
