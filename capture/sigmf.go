package capture

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	slashpath "path"
	"path/filepath"
	"strings"
	"time"
)

// SigMF file name extensions.
const (
	sigmfMetaExt    = ".sigmf-meta"
	sigmfDataExt    = ".sigmf-data"
	sigmfArchiveExt = ".sigmf"
)

// MaxMetaSize is the largest .sigmf-meta file OpenSigMF reads, so that a
// metadata path pointing at a device or a huge file fails cleanly instead of
// exhausting memory.
const MaxMetaSize = 64 << 20

// SigMFInfo is the part of a SigMF recording's metadata that this package
// interprets.
type SigMFInfo struct {
	Version    string  // core:version ("" if absent)
	Datatype   string  // core:datatype
	SampleRate float64 // core:sample_rate
	// Offset is core:offset, the index of the dataset's first sample in the
	// original stream. It is informational: sample indices in the file are
	// unaffected.
	Offset uint64
	// SampleStart and HeaderBytes come from captures[0]: reading starts
	// after HeaderBytes bytes plus SampleStart samples of the dataset.
	SampleStart uint64
	HeaderBytes uint64
	// TrailingBytes (core:trailing_bytes) are excluded at the end.
	TrailingBytes uint64
	// FrequencyHz is captures[0] core:frequency, 0 if absent.
	FrequencyHz float64
	Description string // core:description
	// NumChannels is core:num_channels (1 if absent): the channels
	// interleaved in each sample.
	NumChannels int
	// Meta holds the fields carried to an output: core:author, core:hw,
	// core:description, captures[0] core:frequency and core:datetime, and
	// the annotations, indices relative to captures[0] core:sample_start.
	Meta Meta
	// Dataset is core:dataset, the data file of a non-conforming dataset;
	// "" means the conforming <base>.sigmf-data.
	Dataset string
}

// reach is the furthest sample a recording's metadata refers to (an
// annotation's or a capture's end, counted from the dataset's first
// sample), and what the field that does: a data file that ends before it
// is refused.
type reach struct {
	end  uint64
	what string
}

// note records that the metadata's what refers to samples up to end.
func (r *reach) note(end uint64, what string) {
	if end > r.end || r.what == "" {
		r.end, r.what = end, what
	}
}

// check refuses metadata that refers to samples past the end of a
// dataset of total samples (counted from its first).
func (r reach) check(total uint64, name string) error {
	if r.end > total {
		return inputErr(ErrFormat, "%s reaches sample %d, past the end of the data: %s holds %d samples", r.what, r.end, name, total)
	}
	return nil
}

// SigMF is a source reading a SigMF recording.
type SigMF struct {
	*Raw
	meta  SigMFInfo
	files []string
}

// Meta returns the interpreted metadata.
func (s *SigMF) Meta() SigMFInfo { return s.meta }

// Files returns the files the recording is read from: the metadata and
// data files, or the archive.
func (s *SigMF) Files() []string { return s.files }

// sigmfJSON mirrors the metadata fields read; pointers tell absent from zero.
type sigmfJSON struct {
	Global *struct {
		Datatype      *string           `json:"core:datatype"`
		SampleRate    *float64          `json:"core:sample_rate"`
		Version       *string           `json:"core:version"`
		NumChannels   *int64            `json:"core:num_channels"`
		Offset        *uint64           `json:"core:offset"`
		TrailingBytes *uint64           `json:"core:trailing_bytes"`
		Description   *string           `json:"core:description"`
		Dataset       *string           `json:"core:dataset"`
		MetadataOnly  *bool             `json:"core:metadata_only"`
		Author        *string           `json:"core:author"`
		HW            *string           `json:"core:hw"`
		Extensions    []json.RawMessage `json:"core:extensions"`
	} `json:"global"`
	Captures []struct {
		SampleStart *uint64 `json:"core:sample_start"`
		// SampleCount is not a SigMF 1.x capture field, but a recording
		// that gives it promises that many samples.
		SampleCount *uint64  `json:"core:sample_count"`
		HeaderBytes *uint64  `json:"core:header_bytes"`
		Frequency   *float64 `json:"core:frequency"`
		Datetime    *string  `json:"core:datetime"`
	} `json:"captures"`
	Annotations []map[string]json.RawMessage `json:"annotations"`
}

// ParseSigMFMeta parses and validates the contents of a .sigmf-meta file.
// Recordings of ri16_le, rf32_le, ci16_le, cf32_le, cu8 or ci8 samples with
// up to MaxChannels channels are accepted.
func ParseSigMFMeta(data []byte) (SigMFInfo, error) {
	info, _, err := parseSigMFMeta(data)
	if err != nil {
		return SigMFInfo{}, fmt.Errorf("capture: sigmf metadata: %w", err)
	}
	return info, nil
}

func parseSigMFMeta(data []byte) (SigMFInfo, reach, error) {
	var r reach
	var m sigmfJSON
	if err := json.Unmarshal(data, &m); err != nil {
		return SigMFInfo{}, r, inputErr(ErrFormat, "metadata is not valid SigMF JSON: %v", err)
	}
	g := m.Global
	if g == nil {
		return SigMFInfo{}, r, inputErr(ErrFormat, "metadata has no \"global\" object")
	}
	var info SigMFInfo
	if g.Version != nil {
		info.Version = *g.Version
		if major, _, _ := strings.Cut(info.Version, "."); major != "0" && major != "1" {
			return SigMFInfo{}, r, inputErr(ErrUnsupported, "unsupported core:version %q (supported: 0.x, 1.x)", info.Version)
		}
	}
	if g.Datatype == nil {
		return SigMFInfo{}, r, inputErr(ErrFormat, "global core:datatype is missing")
	}
	info.Datatype = *g.Datatype
	if _, err := lookupDatatype(info.Datatype); err != nil {
		return SigMFInfo{}, r, inputErr(ErrUnsupported, "unsupported core:datatype %q (supported: %s)", info.Datatype, supportedDatatypes)
	}
	if g.SampleRate == nil {
		return SigMFInfo{}, r, inputErr(ErrFormat, "global core:sample_rate is missing")
	}
	info.SampleRate = *g.SampleRate
	if !(info.SampleRate > 0) || math.IsInf(info.SampleRate, 0) {
		return SigMFInfo{}, r, inputErr(ErrFormat, "core:sample_rate %g must be a positive finite number", info.SampleRate)
	}
	info.NumChannels = 1
	if g.NumChannels != nil {
		switch nc := *g.NumChannels; {
		case nc < 1:
			return SigMFInfo{}, r, inputErr(ErrFormat, "core:num_channels %d must be at least 1", nc)
		case nc > MaxChannels:
			return SigMFInfo{}, r, inputErr(ErrUnsupported, "unsupported core:num_channels %d (supported: 1..%d)", nc, MaxChannels)
		default:
			info.NumChannels = int(nc)
		}
	}
	if g.Author != nil {
		info.Meta.Author = *g.Author
	}
	if g.HW != nil {
		info.Meta.HW = *g.HW
	}
	info.Meta.Extensions = g.Extensions
	if g.MetadataOnly != nil && *g.MetadataOnly {
		return SigMFInfo{}, r, inputErr(ErrUnsupported, "unsupported core:metadata_only recording: it has no samples")
	}
	if g.Offset != nil {
		info.Offset = *g.Offset
	}
	if g.TrailingBytes != nil {
		info.TrailingBytes = *g.TrailingBytes
	}
	if g.Description != nil {
		info.Description = *g.Description
		info.Meta.Description = *g.Description
	}
	if g.Dataset != nil {
		info.Dataset = *g.Dataset
		// The dataset is a file next to the metadata, never a path elsewhere.
		if info.Dataset == "" || strings.ContainsAny(info.Dataset, `/\`) || info.Dataset == "." || info.Dataset == ".." {
			return SigMFInfo{}, r, inputErr(ErrFormat, "core:dataset %q must be a file name in the metadata's directory", info.Dataset)
		}
	}
	var prev uint64
	for i, c := range m.Captures {
		var start uint64
		switch {
		case c.SampleStart != nil:
			start = *c.SampleStart
		case i > 0:
			return SigMFInfo{}, r, inputErr(ErrFormat, "captures[%d] has no core:sample_start", i)
		}
		if i > 0 && start <= prev {
			return SigMFInfo{}, r, inputErr(ErrFormat, "captures[%d] core:sample_start %d does not follow captures[%d]'s %d: captures must be in increasing order", i, start, i-1, prev)
		}
		prev = start
		what := fmt.Sprintf("captures[%d] core:sample_start", i)
		end := start
		if c.SampleCount != nil {
			if end += *c.SampleCount; end < start {
				return SigMFInfo{}, r, inputErr(ErrFormat, "captures[%d] core:sample_count %d is out of range", i, *c.SampleCount)
			}
			what += " + core:sample_count"
		}
		r.note(end, what)
		var t time.Time
		if c.Datetime != nil {
			var err error
			if t, err = time.Parse(time.RFC3339Nano, *c.Datetime); err != nil {
				return SigMFInfo{}, r, inputErr(ErrFormat, "captures[%d] core:datetime %q is not an RFC 3339 time", i, *c.Datetime)
			}
		}
		if c.Frequency != nil && (math.IsNaN(*c.Frequency) || math.IsInf(*c.Frequency, 0)) {
			return SigMFInfo{}, r, inputErr(ErrFormat, "captures[%d] core:frequency is not finite", i)
		}
		if i == 0 {
			info.SampleStart = start
			if c.HeaderBytes != nil {
				info.HeaderBytes = *c.HeaderBytes
			}
			if c.Frequency != nil {
				info.FrequencyHz = *c.Frequency
				info.Meta.FrequencyHz, info.Meta.HasFrequency = *c.Frequency, true
			}
			info.Meta.Datetime = t
			continue
		}
		if c.HeaderBytes != nil && *c.HeaderBytes != 0 {
			return SigMFInfo{}, r, inputErr(ErrUnsupported, "unsupported core:header_bytes in captures[%d]; only a header before the first capture is supported", i)
		}
		// Carried to the output, at the first sample read's indices.
		cp := Capture{SampleStart: start - info.SampleStart, Datetime: t}
		if c.Frequency != nil {
			cp.FrequencyHz, cp.HasFrequency = *c.Frequency, true
		}
		info.Meta.Captures = append(info.Meta.Captures, cp)
	}
	for i, a := range m.Annotations {
		ann, keep, end, err := parseAnnotation(a, info.SampleStart)
		if err != nil {
			return SigMFInfo{}, r, inputErr(ErrFormat, "annotations[%d]: %v", i, err)
		}
		what := fmt.Sprintf("annotations[%d] core:sample_start", i)
		if _, ok := a["core:sample_count"]; ok {
			what += " + core:sample_count"
		}
		r.note(end, what)
		if keep {
			info.Meta.Annotations = append(info.Meta.Annotations, ann)
		}
	}
	dt, _ := lookupDatatype(info.Datatype)
	if info.SampleStart > math.MaxInt64/uint64(dt.frame()*info.NumChannels) ||
		info.HeaderBytes > math.MaxInt64/2 || info.TrailingBytes > math.MaxInt64/2 {
		return SigMFInfo{}, r, inputErr(ErrFormat, "captures[0] offsets are out of range")
	}
	return info, r, nil
}

// readLimited reads a whole file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, inputErr(ErrFormat, "%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// checkInDir refuses a path that resolves (through symlinks) outside dir:
// a recording's dataset is its own, never a link to some other file.
func checkInDir(path, dir string) error {
	rp, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil // a missing file is reported when it is opened
	}
	rd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(rd, rp); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return inputErr(ErrFormat, "%s links to %s, outside the recording's directory %s", path, rp, rd)
	}
	return nil
}

// skipBytes is the byte position of the first sample read.
func (i SigMFInfo) skipBytes(dt datatype) int64 {
	return int64(i.HeaderBytes) + int64(i.SampleStart)*int64(dt.frame()*max(1, i.NumChannels))
}

// parseAnnotation reads one annotation; its start is made relative to
// first, the first sample read. One that ends before first is dropped
// (keep false); one that starts before it is cut to begin there. end is
// where it ends in the dataset (its start, for a point).
func parseAnnotation(a map[string]json.RawMessage, first uint64) (ann Annotation, keep bool, end uint64, err error) {
	raw, ok := a["core:sample_start"]
	if !ok {
		return ann, false, 0, errors.New("no core:sample_start")
	}
	var start uint64
	if err := json.Unmarshal(raw, &start); err != nil {
		return ann, false, 0, fmt.Errorf("core:sample_start: %v", err)
	}
	end = start
	if raw, ok := a["core:sample_count"]; ok {
		if err := json.Unmarshal(raw, &ann.SampleCount); err != nil {
			return ann, false, 0, fmt.Errorf("core:sample_count: %v", err)
		}
		ann.HasCount = true
		if end += ann.SampleCount; end < start {
			return ann, false, 0, fmt.Errorf("core:sample_count %d is out of range", ann.SampleCount)
		}
	}
	if start < first {
		if !ann.HasCount || end <= first {
			return ann, false, end, nil
		}
		ann.SampleCount -= first - start
		start = first
	}
	ann.SampleStart = start - first
	ann.Fields = make(map[string]json.RawMessage, len(a))
	for k, v := range a {
		if k != "core:sample_start" && k != "core:sample_count" {
			ann.Fields[k] = v
		}
	}
	return ann, true, end, nil
}

// OpenSigMF opens a SigMF recording given its .sigmf-meta or .sigmf-data
// path, its base name (without extension), or a .sigmf archive (tar holding
// one recording). Reading starts at captures[0]'s core:sample_start.
func OpenSigMF(path string) (*SigMF, error) {
	base := path
	for _, ext := range []string{sigmfMetaExt, sigmfDataExt} {
		if strings.HasSuffix(base, ext) {
			base = strings.TrimSuffix(base, ext)
			break
		}
	}
	metaPath := base + sigmfMetaExt
	data, err := readLimited(metaPath, MaxMetaSize)
	if errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(path, sigmfArchiveExt) {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() {
			return openSigMFArchive(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("capture: sigmf: %w", err)
	}
	info, refs, err := parseSigMFMeta(data)
	if err != nil {
		return nil, fmt.Errorf("capture: sigmf %s: %w", metaPath, err)
	}
	dataPath := base + sigmfDataExt
	if info.Dataset != "" {
		dataPath = filepath.Join(filepath.Dir(metaPath), info.Dataset)
		if err := checkInDir(dataPath, filepath.Dir(metaPath)); err != nil {
			return nil, fmt.Errorf("capture: sigmf %s: core:dataset: %w", metaPath, err)
		}
	}
	dt, _ := lookupDatatype(info.Datatype)
	f, err := os.Open(dataPath)
	if err != nil {
		return nil, fmt.Errorf("capture: sigmf: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: sigmf: %w", err)
	}
	var r io.Reader = f
	declared := int64(-1)
	skipN := info.skipBytes(dt)
	if fi.Mode().IsRegular() {
		n, err := sigmfDataLen(info, dt, fi.Size(), dataPath)
		if err == nil {
			err = refs.check(info.total(dt, n), dataPath)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: sigmf %s: %w", metaPath, err)
		}
		if _, err := f.Seek(skipN, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: sigmf: seek %s: %w", dataPath, err)
		}
		r, declared = io.LimitReader(f, n), n
	} else {
		// A pipe or device: no length to trim trailing bytes from.
		if info.TrailingBytes != 0 {
			f.Close()
			return nil, inputErr(ErrUnsupported, "capture: sigmf: unsupported core:trailing_bytes with non-regular data file %s", dataPath)
		}
		if _, err := io.CopyN(io.Discard, f, skipN); err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: sigmf %s: skipping to captures[0] core:sample_start: %w", dataPath, err)
		}
	}
	raw := newRaw(r, f, dataPath, dt, info.SampleRate, declared, info.NumChannels)
	raw.meta = &info.Meta
	if declared >= 0 {
		raw.direct = newFileReader(f, dt, raw.fbytes, skipN, skipN+declared, raw.scan)
	}
	return &SigMF{Raw: raw, meta: info, files: []string{metaPath, dataPath}}, nil
}

// total is the number of whole samples in a dataset whose samples after
// the skipped ones take n bytes, counted from the dataset's first.
func (i SigMFInfo) total(dt datatype, n int64) uint64 {
	return i.SampleStart + uint64(n)/uint64(dt.frame()*max(1, i.NumChannels))
}

// sigmfDataLen is the number of sample bytes after the skipped start and
// before the trailing bytes, for a data file of size bytes.
func sigmfDataLen(info SigMFInfo, dt datatype, size int64, name string) (int64, error) {
	skipN := info.skipBytes(dt)
	n := size - skipN - int64(info.TrailingBytes)
	if n < 0 {
		return 0, inputErr(ErrFormat, "data file %s is %d bytes, fewer than the %d header and skipped bytes (captures[0] core:sample_start %d) plus %d trailing bytes",
			name, size, skipN, info.SampleStart, info.TrailingBytes)
	}
	return n, nil
}

// openSigMFArchive reads the first recording of a SigMF archive: a tar file
// holding <name>.sigmf-meta and <name>.sigmf-data. The archive is scanned
// twice so that the members may be in either order.
func openSigMFArchive(path string) (*SigMF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: sigmf: %w", err)
	}
	fail := func(err error) (*SigMF, error) {
		f.Close()
		return nil, fmt.Errorf("capture: sigmf archive %s: %w", path, err)
	}
	var info SigMFInfo
	var refs reach
	var dataName string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fail(inputErr(ErrFormat, "no %s member", sigmfMetaExt))
		}
		if err != nil {
			return fail(inputErr(ErrFormat, "%v", err))
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, sigmfMetaExt) {
			continue
		}
		if h.Size > MaxMetaSize {
			return fail(inputErr(ErrFormat, "%s is %d bytes", h.Name, h.Size))
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return fail(inputErr(ErrFormat, "reading %s: %v", h.Name, err))
		}
		if info, refs, err = parseSigMFMeta(data); err != nil {
			return fail(fmt.Errorf("%s: %w", h.Name, err))
		}
		dataName = strings.TrimSuffix(h.Name, sigmfMetaExt) + sigmfDataExt
		if info.Dataset != "" {
			dataName = slashpath.Join(slashpath.Dir(h.Name), info.Dataset)
		}
		break
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	tr = tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fail(inputErr(ErrFormat, "no member %s", dataName))
		}
		if err != nil {
			return fail(inputErr(ErrFormat, "%v", err))
		}
		if h.Typeflag != tar.TypeReg || h.Name != dataName {
			continue
		}
		dt, _ := lookupDatatype(info.Datatype)
		name := path + ":" + dataName
		n, err := sigmfDataLen(info, dt, h.Size, name)
		if err == nil {
			err = refs.check(info.total(dt, n), name)
		}
		if err != nil {
			return fail(err)
		}
		if _, err := io.CopyN(io.Discard, tr, info.skipBytes(dt)); err != nil {
			return fail(err)
		}
		raw := newRaw(io.LimitReader(tr, n), f, name, dt, info.SampleRate, n, info.NumChannels)
		raw.meta = &info.Meta
		return &SigMF{Raw: raw, meta: info, files: []string{path}}, nil
	}
}
