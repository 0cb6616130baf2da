package sink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigproc/sigproc/capture"
)

// SigMFMeta is the metadata of a SigMF recording.
type SigMFMeta struct {
	Datatype   string  // rf32_le, cf32_le, ri16_le, ci16_le or cs8 (written as SigMF ci8)
	SampleRate float64 // samples per second, > 0
	// Channels is core:num_channels, the channels interleaved in each
	// sample; 0 or 1 omits it.
	Channels    int
	Description string // core:description, omitted if empty
	Author      string // core:author, omitted if empty
	HW          string // core:hw, omitted if empty
	// FrequencyHz is the capture's centre frequency (core:frequency of
	// every capture segment); 0 omits it unless HasFrequency is set.
	FrequencyHz  float64
	HasFrequency bool
	// Datetime is the time of the first sample (captures[0] core:datetime,
	// RFC 3339 UTC); the zero time omits it. Later capture segments, which
	// start after a gap, get Datetime plus their input index over InputRate.
	Datetime time.Time
	// InputRate is the source's rate, when stages make it differ from
	// SampleRate: input indices and dropped-sample counts are at this
	// rate. 0 means SampleRate.
	InputRate float64
	// Extra holds further global fields. Keys must be namespaced
	// ("ns:key") and must not repeat a field set from the other members.
	Extra map[string]any
	// Extensions are further core:extensions entries (an input
	// recording's), declared beside sigproc's own.
	Extensions []json.RawMessage
	// Annotations are carried from the input, their indices input
	// samples counted from the first one read; OutputIndex maps them to
	// the recording's (nil: the same), so that a decimation or resampling
	// moves them with the samples. Those the recording does not reach are
	// left out when it is closed, and counts are cut at its end.
	Annotations []capture.Annotation
	// OutputIndex maps n, a count of input samples the chain has
	// consumed, to the count of samples it has output for them: the index
	// of the first output sample at or after input sample n (nil: n).
	OutputIndex func(n uint64) uint64
	// Captures are the input's capture segments after the first (the
	// first is FrequencyHz, HasFrequency and Datetime), at input indices
	// counted from the first sample read, their frequencies already as
	// the output's (moved by the chain's shift). Each starts a capture
	// segment of the recording at the output sample its first input
	// sample maps to, counting the samples the chain has consumed, so
	// that gaps before it do not shift it (see WriteIndexed).
	Captures []SigMFCapture
}

// SigMFCapture is one of the input's capture segments after the first, as
// the output describes it.
type SigMFCapture struct {
	// InputStart is its first sample, an input index counted from the
	// first sample read.
	InputStart uint64
	// FrequencyHz is the output's core:frequency for it; 0 omits it
	// unless HasFrequency is set.
	FrequencyHz  float64
	HasFrequency bool
	// Datetime is the time of its first sample; the zero time omits it.
	Datetime time.Time
}

// DroppedKey is the annotation field giving the number of samples dropped
// (never recorded) just before the annotated sample. It is in the sigproc
// namespace, which every recording's core:extensions declares.
const DroppedKey = "sigproc:dropped_samples"

// DefaultMetaEvery is how often, at most, a SigMF sink rewrites its
// metadata while a run goes on: when a gap has added a capture segment.
const DefaultMetaEvery = time.Second

// SigMF writes <base>.sigmf-data and keeps <base>.sigmf-meta describing it:
// the metadata is written when the sink is created, rewritten as gaps add
// capture segments (at most every MetaEvery, after the samples they refer to
// have been written to the data file), and finalised on Close; always
// through a temporary file and a rename, so that a reader (or a recording
// cut short by kill -9 or a power cut) never sees half of it.
//
// Gaps: a sample written with WriteIndexed whose input index is beyond the
// previous sample's starts a new capture segment at its output index, with
// its core:datetime, and an annotation there carrying DroppedKey. The
// input's own capture segments (SigMFMeta.Captures) start segments too, at
// the output index of their first sample.
type SigMF struct {
	*Raw
	metaPath string
	dir      *os.Root // metaPath's directory, opened when the sink was created
	// MetaEvery bounds how often the metadata is rewritten during the run;
	// 0 means DefaultMetaEvery.
	MetaEvery time.Duration

	global   []byte    // the encoded global object
	freq     []byte    // the encoded core:frequency, nil to omit it
	carried  []carried // the input's annotations, at output indices
	t0       time.Time
	rate     float64 // input rate: input indices over it give a capture's time
	gaps     []gap   // in output order
	caps     []inCapture
	bounds   []bound               // input capture segments placed in the output, in output order
	nextCap  int                   // caps[nextCap:] are not placed yet
	outIndex func(n uint64) uint64 // SigMFMeta.OutputIndex, never nil
	consumed uint64                // input samples written (those the chain consumed)
	next     uint64                // input index of the next sample expected
	dropped  uint64                // samples annotated as dropped
	dirty    bool                  // gaps not yet in the metadata file
	lastMeta time.Time
	metaCost time.Duration // how long the last metadata write took
	scratch  []byte        // reused by encode for one segment at a time

	firstSample func() time.Time // Spec.FirstSample, until read
	freqHz      float64          // the first segment's core:frequency, if freq is not nil
	shifts      []shiftAt        // retunes of the chain's shift placed in the output, in output order
	moves       []recentre       // retunes not yet placed, in order of at
	nextMov     int              // moves[nextMov:] are not placed yet
	// Recentre's reports, from another goroutine: taken into moves by
	// the writer.
	movMu      sync.Mutex
	movPending []recentre
	movNew     atomic.Bool
}

// recentre is a retune of the chain's frequency shift: from chain input
// sample at on, the output's frequencies are delta Hz from those at the
// start.
type recentre struct {
	at    uint64
	delta float64
}

// shiftAt is a recentre placed in the output: from output index out on,
// every capture segment's frequency is moved by delta Hz.
type shiftAt struct {
	out   uint64
	delta float64
}

// gap is one run of dropped samples: n samples before output index out,
// whose next sample has input index in. A gap at the end of the input has
// no capture segment (end is set).
type gap struct {
	out, in, n uint64
	end        bool
}

// inCapture is one of the input's capture segments after the first.
type inCapture struct {
	in   uint64    // its first sample's input index
	freq []byte    // the encoded core:frequency, nil to omit it
	hz   float64   // core:frequency, if freq is not nil
	t    time.Time // its first sample's time, zero if unknown
}

// bound is an input capture segment's start in the output: output index
// out, input index in.
type bound struct{ out, in uint64 }

// sigmfReserved reports whether the recorder sets global key k itself.
func sigmfReserved(k string) bool {
	switch k {
	case "core:version", "core:datatype", "core:sample_rate", "core:recorder",
		"core:description", "core:author", "core:hw", "core:extensions", "core:num_channels":
		return true
	}
	return false
}

// sigmfBase returns the base name of a recording path, which may end in
// .sigmf-data or .sigmf-meta. A path naming a directory (ending in a
// separator, "." or "..") is refused: it would write hidden dot-files.
func sigmfBase(path string) (string, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".sigmf-data"), ".sigmf-meta")
	if base == "" {
		return "", errors.New("sink: sigmf: empty base path")
	}
	switch last := filepath.Base(base); {
	case strings.HasSuffix(base, "/") || strings.HasSuffix(base, string(filepath.Separator)),
		last == "." || last == "..":
		return "", fmt.Errorf("sink: sigmf: path %q names a directory; give a base name such as %s", path, filepath.Join(base, "recording"))
	}
	return base, nil
}

// CreateSigMF creates basePath.sigmf-data and basePath.sigmf-meta
// (basePath may already end in .sigmf-data or .sigmf-meta), truncating
// existing files; use Prepare for the checked, non-clobbering route. The
// metadata is validated and written now, so a bad Extra value fails here
// rather than after the recording.
func CreateSigMF(basePath string, meta SigMFMeta) (*SigMF, error) {
	p, err := Prepare(Spec{Type: TypeSigMF, Path: basePath, Format: meta.Datatype, Meta: meta, Overwrite: true})
	if err != nil {
		return nil, err
	}
	s, err := p.Create(context.Background())
	if err != nil {
		return nil, err
	}
	return s.(*SigMF), nil
}

// newSigMF prepares the metadata of a recording; nothing is written.
func newSigMF(m SigMFMeta) (*SigMF, error) {
	global, err := sigmfGlobal(m)
	if err != nil {
		return nil, err
	}
	s := &SigMF{t0: m.Datetime, rate: m.SampleRate}
	if m.InputRate > 0 {
		s.rate = m.InputRate
	}
	if s.global, err = json.MarshalIndent(global, "  ", "  "); err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	if m.FrequencyHz != 0 || m.HasFrequency {
		s.freq, _ = json.Marshal(m.FrequencyHz) // finite: checked above
		s.freqHz = m.FrequencyHz
	}
	if s.carried, err = carryAnnotations(m.Annotations, m.OutputIndex); err != nil {
		return nil, err
	}
	s.outIndex = m.OutputIndex
	if s.outIndex == nil {
		s.outIndex = func(n uint64) uint64 { return n }
	}
	for i, c := range m.Captures {
		if math.IsNaN(c.FrequencyHz) || math.IsInf(c.FrequencyHz, 0) {
			return nil, fmt.Errorf("capture %d: frequency %g is not finite", i+1, c.FrequencyHz)
		}
		if c.InputStart == 0 || (i > 0 && c.InputStart <= m.Captures[i-1].InputStart) {
			return nil, fmt.Errorf("capture %d: input index %d does not follow the previous capture's", i+1, c.InputStart)
		}
		ic := inCapture{in: c.InputStart, t: c.Datetime}
		if c.FrequencyHz != 0 || c.HasFrequency {
			ic.freq, _ = json.Marshal(c.FrequencyHz)
			ic.hz = c.FrequencyHz
		}
		s.caps = append(s.caps, ic)
	}
	return s, nil
}

// carried is one of the input's annotations at the output's indices, with
// its other fields encoded.
type carried struct {
	start, count uint64
	hasCount     bool
	fields       []byte // ",\n      \"key\": value" for each other field, sorted
}

// carryAnnotations maps the input's annotations to output indices and
// encodes their fields, sorted by start as SigMF requires.
func carryAnnotations(in []capture.Annotation, index func(uint64) uint64) ([]carried, error) {
	if index == nil {
		index = func(i uint64) uint64 { return i }
	}
	out := make([]carried, 0, len(in))
	for i, a := range in {
		c := carried{start: index(a.SampleStart), hasCount: a.HasCount}
		if a.HasCount {
			c.count = index(a.SampleStart+a.SampleCount) - c.start
		}
		keys := make([]string, 0, len(a.Fields))
		for k := range a.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "core:sample_start" || k == "core:sample_count" {
				continue
			}
			v := a.Fields[k]
			if !json.Valid(v) {
				return nil, fmt.Errorf("annotation %d: field %q is not valid JSON", i, k)
			}
			kb, _ := json.Marshal(k)
			c.fields = append(c.fields, ",\n      "...)
			c.fields = append(c.fields, kb...)
			c.fields = append(c.fields, ": "...)
			c.fields = append(c.fields, compactJSON(v)...)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out, nil
}

// compactJSON returns v on one line.
func compactJSON(v []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// SetDatetime sets the time of the first sample (captures[0]
// core:datetime), for a live source whose first sample's capture time is
// known only once it has been read; the metadata is rewritten on Close.
func (s *SigMF) SetDatetime(t time.Time) {
	if s.closed || t.IsZero() {
		return
	}
	s.t0, s.dirty = t, true
}

func sigmfGlobal(m SigMFMeta) (map[string]any, error) {
	if !(m.SampleRate > 0) || math.IsInf(m.SampleRate, 0) {
		return nil, fmt.Errorf("sample rate %g must be a positive finite number", m.SampleRate)
	}
	if math.IsNaN(m.FrequencyHz) || math.IsInf(m.FrequencyHz, 0) {
		return nil, fmt.Errorf("frequency %g is not finite", m.FrequencyHz)
	}
	exts := []any{map[string]any{"name": "sigproc", "version": "1.0.0", "optional": true}}
	for _, e := range m.Extensions {
		var ext struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(e, &ext) != nil || ext.Name == "" {
			return nil, fmt.Errorf("core:extensions entry %s has no name", e)
		}
		if ext.Name != "sigproc" {
			exts = append(exts, json.RawMessage(compactJSON(e)))
		}
	}
	global := map[string]any{
		"core:version":     "1.0.0",
		"core:datatype":    SigMFDatatype(m.Datatype),
		"core:sample_rate": m.SampleRate,
		"core:recorder":    "sigproc",
		// Declared up front: a gap may add sigproc:dropped_samples
		// annotations at any moment of the run.
		"core:extensions": exts,
	}
	if m.Channels > 1 {
		global["core:num_channels"] = m.Channels
	}
	for k, v := range map[string]string{"core:description": m.Description, "core:author": m.Author, "core:hw": m.HW} {
		if v != "" {
			global[k] = v
		}
	}
	for k, v := range m.Extra {
		ns, name, ok := strings.Cut(k, ":")
		if !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("extra key %q is not namespaced (want \"ns:key\")", k)
		}
		if sigmfReserved(k) {
			return nil, fmt.Errorf("extra key %q is set by the recorder; use the SigMFMeta field", k)
		}
		global[k] = v
	}
	return global, nil
}

// encode writes the metadata document as it stands to w. It is written by
// hand, one segment at a time, so that a long run's thousands of gaps cost
// neither a map per gap nor a copy of the whole document in memory: the
// memory a gap costs is its 32-byte record.
func (s *SigMF) encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := append(s.scratch[:0], "{\n  \"global\": "...)
	b = append(b, s.global...)
	b = append(b, ",\n  \"captures\": ["...)
	bw.Write(b)
	// The first segment, those gaps start and those of the input, merged
	// in output order. Where several start at one output sample, the
	// last in input order describes it.
	cur := bound{0, 0}
	first := true
	emit := func(next bound) {
		if next.out == cur.out {
			cur.in = max(cur.in, next.in)
			return
		}
		if !first {
			bw.WriteByte(',')
		}
		b = s.appendCapture(append(b[:0], '\n'), cur.out, cur.in)
		bw.Write(b)
		cur, first = next, false
	}
	// An input segment is written once its first sample is in the data.
	bi, limit := 0, s.Written()
	for _, g := range s.gaps {
		for ; bi < len(s.bounds) && s.bounds[bi].out <= g.out && s.bounds[bi].out < limit; bi++ {
			emit(s.bounds[bi])
		}
		if !g.end {
			emit(bound{g.out, g.in})
		}
	}
	for ; bi < len(s.bounds) && s.bounds[bi].out < limit; bi++ {
		emit(s.bounds[bi])
	}
	emit(bound{math.MaxUint64, 0})
	bw.WriteString("\n  ],\n  \"annotations\": [")
	// Gaps and carried annotations, merged in order of their start.
	written, ci := 0, 0
	sep := func() {
		if written > 0 {
			bw.WriteByte(',')
		}
		written++
	}
	for _, g := range s.gaps {
		for ; ci < len(s.carried) && s.carried[ci].start <= g.out; ci++ {
			sep()
			b = s.appendCarried(b[:0], &s.carried[ci])
			bw.Write(b)
		}
		sep()
		b = b[:0]
		b = append(b, "\n    {\n      \"core:sample_start\": "...)
		b = strconv.AppendUint(b, g.out, 10)
		b = append(b, ",\n      \"core:comment\": \""...)
		b = strconv.AppendUint(b, g.n, 10)
		if g.end {
			b = append(b, " samples dropped at the end of the run"...)
		} else {
			b = append(b, " samples dropped before this sample"...)
		}
		b = append(b, "\",\n      \""+DroppedKey+"\": "...)
		b = strconv.AppendUint(b, g.n, 10)
		b = append(b, "\n    }"...)
		bw.Write(b)
	}
	for ; ci < len(s.carried); ci++ {
		sep()
		b = s.appendCarried(b[:0], &s.carried[ci])
		bw.Write(b)
	}
	if written > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	s.scratch = b
	return bw.Flush() // bufio keeps the first error
}

// appendCarried appends one carried annotation.
func (s *SigMF) appendCarried(b []byte, c *carried) []byte {
	b = append(b, "\n    {\n      \"core:sample_start\": "...)
	b = strconv.AppendUint(b, c.start, 10)
	if c.hasCount {
		b = append(b, ",\n      \"core:sample_count\": "...)
		b = strconv.AppendUint(b, c.count, 10)
	}
	b = append(b, c.fields...)
	return append(b, "\n    }"...)
}

// appendCapture appends the capture segment starting at output index out,
// which begins at input index in: the frequency and time are those of the
// input capture segment that sample is in, the time that of input sample
// in (the segment's first output sample follows it by less than one
// output sample period, where the chain decimates).
func (s *SigMF) appendCapture(b []byte, out, in uint64) []byte {
	freq, hz, t, start := s.freq, s.freqHz, s.t0, uint64(0)
	if k := sort.Search(len(s.caps), func(i int) bool { return s.caps[i].in > in }); k > 0 {
		c := &s.caps[k-1]
		freq, hz, t, start = c.freq, c.hz, c.t, c.in
	}
	// A retune of the chain's shift moves the frequency from its sample on.
	if k := sort.Search(len(s.shifts), func(i int) bool { return s.shifts[i].out > out }); k > 0 {
		if d := s.shifts[k-1].delta; d != 0 {
			if hz += d; freq != nil || hz != 0 {
				freq, _ = json.Marshal(hz) // finite: both are
			}
		}
	}
	b = append(b, "    {\n      \"core:sample_start\": "...)
	b = strconv.AppendUint(b, out, 10)
	if freq != nil {
		b = append(b, ",\n      \"core:frequency\": "...)
		b = append(b, freq...)
	}
	if !t.IsZero() {
		b = append(b, ",\n      \"core:datetime\": \""...)
		b = t.Add(time.Duration(float64(in-start)/s.rate*1e9)).UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	return append(b, "\n    }"...)
}

// WriteIndexed writes samples that came from inputs input samples, the
// first with input index index (samples since the start of the source,
// dropped ones included; at the input rate, which a rate-changing stage
// chain makes differ from the recording's). An index beyond the end of the
// previous write's input is a gap: the input samples in between were
// dropped before reaching the sink, and are recorded as a new capture
// segment plus an annotation counting them. An input capture segment
// (SigMFMeta.Captures) that starts in this block's input starts a capture
// segment at the first of its samples at or after that input sample; one
// that starts in a gap is the gap's. It allocates only when it records a
// gap or places a capture segment.
func (s *SigMF) WriteIndexed(index, inputs uint64, samples []float32) error {
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if s.firstSample != nil {
		if t := s.firstSample(); !t.IsZero() {
			s.t0, s.dirty = t, true
		}
		s.firstSample = nil
	}
	if index > s.next {
		s.gap(index)
	}
	if s.nextCap < len(s.caps) && s.caps[s.nextCap].in < index+inputs {
		s.placeCaptures(index, inputs)
	}
	if s.movNew.Load() {
		s.takeRecentres()
	}
	if s.nextMov < len(s.moves) && s.moves[s.nextMov].at < s.consumed+inputs {
		s.placeRecentres(inputs)
	}
	if err := s.Raw.Write(samples); err != nil {
		return err
	}
	s.consumed += inputs
	s.next = index + inputs
	if s.dirty {
		// A long run's metadata grows with its gaps: rewriting it takes
		// at most about 1% of the time.
		every := max(s.MetaEvery, 100*s.metaCost)
		if every <= 0 {
			every = DefaultMetaEvery
		}
		if now := time.Now(); now.Sub(s.lastMeta) >= every {
			return s.sync(now)
		}
	}
	return nil
}

// Write writes samples that follow the previous ones without a gap, at
// the input rate (one input sample per sample written).
func (s *SigMF) Write(samples []float32) error {
	return s.WriteIndexed(s.next, uint64(len(samples)/s.f.frameValues()), samples)
}

// EndInput tells the sink that the source delivered total samples in all.
// Samples after the last one written were dropped: they are recorded as an
// annotation at the end of the recording (no capture segment, as no sample
// follows them).
func (s *SigMF) EndInput(total uint64) {
	if s.closed || total <= s.next {
		return
	}
	n := total - s.next
	s.gaps = append(s.gaps, gap{out: s.Samples(), in: total, n: n, end: true})
	s.dropped += n
	s.next = total
	s.dirty = true
}

// placeCaptures places the input capture segments that start before the
// end of the block of inputs input samples from index: at the output
// index of their first sample, by the chain's count of what it has
// consumed (so samples dropped before it do not move it).
func (s *SigMF) placeCaptures(index, inputs uint64) {
	out := s.Samples()
	for ; s.nextCap < len(s.caps) && s.caps[s.nextCap].in < index+inputs; s.nextCap++ {
		c := &s.caps[s.nextCap]
		o := out // it started in a gap before this block, or at its start
		if c.in > index {
			o += s.outIndex(s.consumed+c.in-index) - s.outIndex(s.consumed)
		}
		s.bounds = append(s.bounds, bound{o, c.in})
	}
	s.dirty = true
}

// Recentre records that the chain's frequency shift was retuned: from
// chain input sample at on (stage.Retune.ChainAt: the samples the chain
// has consumed), the output's frequencies are delta Hz from the start's.
// A capture segment starts at the first output sample the new shift
// applies to, with its core:frequency moved by delta, as are the segments
// after it. It is safe to call from any goroutine, during writes.
func (s *SigMF) Recentre(at uint64, delta float64) {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return
	}
	s.movMu.Lock()
	s.movPending = append(s.movPending, recentre{at, delta})
	s.movMu.Unlock()
	s.movNew.Store(true)
}

// takeRecentres moves Recentre's reports into moves, in order of at.
func (s *SigMF) takeRecentres() {
	s.movMu.Lock()
	s.moves = append(s.moves, s.movPending...)
	s.movPending = s.movPending[:0]
	s.movNew.Store(false)
	s.movMu.Unlock()
	sort.SliceStable(s.moves[s.nextMov:], func(i, j int) bool {
		return s.moves[s.nextMov+i].at < s.moves[s.nextMov+j].at
	})
}

// placeRecentres places the recentres that start before the end of the
// block about to be written (inputs chain input samples): at the output
// index of the chain input sample each starts at. One reported late, for
// samples already written, is placed where they were.
func (s *SigMF) placeRecentres(inputs uint64) {
	out, base := s.Samples(), s.outIndex(s.consumed)
	for ; s.nextMov < len(s.moves) && s.moves[s.nextMov].at < s.consumed+inputs; s.nextMov++ {
		m := s.moves[s.nextMov]
		o, in := out+s.outIndex(m.at)-base, s.next+m.at-s.consumed
		if m.at < s.consumed {
			back := base - s.outIndex(m.at)
			o, in = out-min(back, out), s.next-min(s.consumed-m.at, s.next)
			// Less the gaps written after it: input indices count them.
			for g := len(s.gaps) - 1; g >= 0 && s.gaps[g].out > o; g-- {
				in -= min(s.gaps[g].n, in)
			}
		}
		k := sort.Search(len(s.shifts), func(i int) bool { return s.shifts[i].out > o })
		cur := 0.0 // the move in force at o
		if k > 0 {
			cur = s.shifts[k-1].delta
		}
		if cur == m.delta {
			continue // no change there
		}
		if k > 0 && s.shifts[k-1].out == o {
			s.shifts[k-1].delta = m.delta
		} else {
			s.shifts = slices.Insert(s.shifts, k, shiftAt{o, m.delta})
		}
		// The segment's time is that of input sample in.
		j := sort.Search(len(s.bounds), func(i int) bool { return s.bounds[i].out > o })
		s.bounds = slices.Insert(s.bounds, j, bound{o, in})
	}
	s.dirty = true
}

// gap records the samples from s.next to index as dropped.
func (s *SigMF) gap(index uint64) {
	n := index - s.next
	s.gaps = append(s.gaps, gap{out: s.Samples(), in: index, n: n})
	s.dropped += n
	s.next = index
	s.dirty = true
}

// Dropped returns the number of samples recorded as dropped so far.
func (s *SigMF) Dropped() uint64 { return s.dropped }

// Gaps returns the number of gaps recorded so far (annotations).
func (s *SigMF) Gaps() int { return len(s.gaps) }

// sync pushes buffered samples to the data file, then rewrites the
// metadata, so that every capture segment it names is already in the file.
func (s *SigMF) sync(now time.Time) error {
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.writeMeta(); err != nil {
		s.err = err
		return err
	}
	// A capture segment placed at the end of the data waits for its first
	// sample: the metadata is rewritten once it is there.
	s.lastMeta, s.dirty = now, len(s.bounds) > 0 && s.bounds[len(s.bounds)-1].out >= s.Written()
	s.metaCost = time.Since(now)
	return nil
}

// writeMeta writes the metadata to a temporary file beside it and renames
// it into place, both through the directory handle opened at the start.
func (s *SigMF) writeMeta() error {
	if err := writeFileAtomic(s.dir, filepath.Base(s.metaPath), s.encode); err != nil {
		return fmt.Errorf("sigmf: write %s: %w", s.metaPath, err)
	}
	return nil
}

// writeFileAtomic replaces name in dir with what write writes, through a
// new temporary file in dir and a rename, all relative to the directory
// handle: the rename replaces a symlink named name, never what it points
// to.
func writeFileAtomic(dir *os.Root, name string, write func(io.Writer) error) error {
	var f *os.File
	var tmp string
	for range 100 {
		tmp = "." + name + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		var err error
		if f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if f == nil {
		return fmt.Errorf("no free temporary name like %s", tmp)
	}
	err := write(f)
	if err == nil {
		err = f.Chmod(0o644) // whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		return err
	}
	return nil
}

// Close flushes and closes the data file, then writes the final metadata.
// The metadata is written even if the data failed, describing the samples
// that reached the file; the first error is returned.
func (s *SigMF) Close() error {
	if s.closed {
		return ErrClosed
	}
	// A retune reported after the last write, for samples written.
	if s.movNew.Load() {
		s.takeRecentres()
	}
	s.placeRecentres(0)
	// Gaps recorded after the last whole sample that reached the file
	// would point past its end: keep only those the data covers.
	err := s.Raw.Close()
	n := s.Written()
	for len(s.gaps) > 0 && s.gaps[len(s.gaps)-1].out > n {
		s.dropped -= s.gaps[len(s.gaps)-1].n
		s.gaps = s.gaps[:len(s.gaps)-1]
	}
	// (Input capture segments that hold no sample of the recording are
	// left out by encode.)
	// Carried annotations the recording does not reach are left out,
	// and counts cut at its end.
	keep := s.carried[:0]
	for _, c := range s.carried {
		if c.start >= n {
			continue
		}
		if c.hasCount && c.start+c.count > n {
			c.count = n - c.start
		}
		keep = append(keep, c)
	}
	s.carried = keep
	werr := s.writeMeta()
	s.dir.Close()
	if werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// MetaPath returns the path of the .sigmf-meta file.
func (s *SigMF) MetaPath() string { return s.metaPath }
