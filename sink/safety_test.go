package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sigproc/sigproc/internal/sigmftest"
	"github.com/sigproc/sigproc/sink"
)

// TestPrepareRefusesInputs: an output that is one of the inputs, however
// the path is spelled, is refused before anything is opened, overwrite or
// not, and the input is left as it was.
func TestPrepareRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.f32")
	content := []byte("0123456789abcdef")
	if err := os.WriteFile(in, content, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(in, filepath.Join(dir, "link.f32"))
	os.Link(in, filepath.Join(dir, "hard.f32"))
	rec := filepath.Join(dir, "rec")
	os.WriteFile(rec+".sigmf-data", content, 0o644)
	os.WriteFile(rec+".sigmf-meta", []byte(`{}`), 0o644)
	tests := []struct {
		name, typ, path string
		inputs          []string
	}{
		{"same path", sink.TypeFile, in, []string{in}},
		{"through sub/..", sink.TypeFile, filepath.Join(dir, "sub", "..", "in.f32"), []string{in}},
		{"relative to a symlinked input", sink.TypeFile, in, []string{filepath.Join(dir, "link.f32")}},
		{"symlink to the input", sink.TypeFile, filepath.Join(dir, "link.f32"), []string{in}},
		{"hard link", sink.TypeFile, filepath.Join(dir, "hard.f32"), []string{in}},
		{"sigmf base of the input recording", sink.TypeSigMF, rec, []string{rec + ".sigmf-meta", rec + ".sigmf-data"}},
		{"sigmf meta only", sink.TypeSigMF, rec + ".sigmf-data", []string{rec + ".sigmf-meta"}},
	}
	for _, tt := range tests {
		for _, overwrite := range []bool{false, true} {
			_, err := sink.Prepare(sink.Spec{Type: tt.typ, Path: tt.path, Format: "rf32_le", Overwrite: overwrite, Inputs: tt.inputs,
				Meta: sink.SigMFMeta{SampleRate: 1}})
			if !errors.Is(err, sink.ErrIsInput) {
				t.Errorf("%s (overwrite %v): err %v, want ErrIsInput", tt.name, overwrite, err)
			}
		}
	}
	for _, p := range []string{in, rec + ".sigmf-data"} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
			t.Errorf("input %s changed: %q", p, b)
		}
	}
}

// TestNoClobber: an existing output is refused unless Overwrite is set; a
// device is written to either way; nothing is created or truncated until
// the deferred sink is opened, and a sink never opened creates nothing.
func TestNoClobber(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.f32")
	os.WriteFile(old, []byte("keep"), 0o644)
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: old, Format: "rf32_le"}); !errors.Is(err, sink.ErrExists) ||
		!strings.Contains(err.Error(), "sink.overwrite") {
		t.Fatalf("existing output: %v, want ErrExists naming sink.overwrite", err)
	}
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: filepath.Join(dir, "old.f32.sigmf-meta"), Format: "rf32_le",
		Meta: sink.SigMFMeta{SampleRate: 1}}); err != nil {
		t.Fatalf("new recording: %v", err)
	}
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: os.DevNull, Format: "rf32_le"}); err != nil {
		t.Fatalf("%s: %v", os.DevNull, err)
	}
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: old, Format: "rf32_le", Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Deferred()
	if b, _ := os.ReadFile(old); string(b) != "keep" {
		t.Fatalf("Prepare touched the output: %q", b)
	}
	if err := d.Write([]float32{1}); err == nil {
		t.Fatal("Write before Open succeeded")
	}
	if err := d.Close(); err != nil { // a run that never started
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "keep" {
		t.Fatalf("a sink never opened changed the output: %q", b)
	}
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(old); fi.Size() != 0 {
		t.Fatalf("Open with Overwrite left %d bytes", fi.Size())
	}
	d.Close()
	fresh := filepath.Join(dir, "new", "deep", "x.f32")
	p, _ = sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: fresh, Format: "rf32_le", MakeDirs: true})
	p.Deferred().Close()
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a sink never opened created its directory: %v", err)
	}
}

// TestCreateFailureLeavesNothing: a path too deep to create fails cleanly
// and removes the directories it made on the way; a sigmf path naming a
// directory is refused instead of writing hidden dot-files.
func TestCreateFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	deep := dir + strings.Repeat("/d", 3000) + "/out.f32"
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: deep, Format: "rf32_le", MakeDirs: true})
	if err == nil {
		_, err = p.Create(context.Background())
	}
	if err == nil {
		t.Fatal("a 3000-level path was created")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("failed create left %d entries in %s", len(left), dir)
	}
	for _, path := range []string{dir + "/", dir + "/.", dir + "/sub/.."} {
		if _, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: path, Format: "rf32_le", Meta: sink.SigMFMeta{SampleRate: 1}}); err == nil ||
			!strings.Contains(err.Error(), "names a directory") {
			t.Errorf("sigmf path %q: %v, want it refused as a directory", path, err)
		}
	}
	if _, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: dir + "/x/", Format: "rf32_le"}); err == nil {
		t.Error("file path ending in / accepted")
	}
}

type sigmfDoc struct {
	Global      map[string]any   `json:"global"`
	Captures    []map[string]any `json:"captures"`
	Annotations []map[string]any `json:"annotations"`
}

func readMeta(t *testing.T, path string) sigmfDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d sigmfDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("meta is not JSON: %v\n%s", err, b)
	}
	return d
}

// TestSigMFGaps writes blocks with gaps in their input indexes: each gap
// starts a capture segment at the output index of the next sample, with
// that sample's datetime, plus an annotation with the dropped count; the
// counts add up, and the sigproc namespace is declared.
func TestSigMFGaps(t *testing.T) {
	base := filepath.Join(t.TempDir(), "g")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: "cf32_le", SampleRate: 1000, FrequencyHz: 1e6, Datetime: t0})
	if err != nil {
		t.Fatal(err)
	}
	block := make([]float32, 2*10) // 10 complex samples
	for _, idx := range []uint64{0, 10, 30, 40, 1040} {
		if err := s.WriteIndexed(idx, uint64(len(block)/2), block); err != nil {
			t.Fatal(err)
		}
	}
	s.EndInput(1070) // 20 more dropped at the end
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d := readMeta(t, base+".sigmf-meta")
	type seg struct {
		start float64
		dt    string
	}
	wantCaps := []seg{{0, "2026-01-02T03:04:05Z"}, {20, "2026-01-02T03:04:05.03Z"}, {40, "2026-01-02T03:04:06.04Z"}}
	if len(d.Captures) != len(wantCaps) {
		t.Fatalf("captures %v", d.Captures)
	}
	for i, w := range wantCaps {
		c := d.Captures[i]
		if c["core:sample_start"] != w.start || c["core:datetime"] != w.dt || c["core:frequency"] != 1e6 {
			t.Errorf("capture %d = %v, want start %v datetime %s", i, c, w.start, w.dt)
		}
	}
	wantNotes := []struct{ start, n float64 }{{20, 10}, {40, 990}, {50, 20}}
	var total float64
	for i, w := range wantNotes {
		a := d.Annotations[i]
		if a["core:sample_start"] != w.start || a[sink.DroppedKey] != w.n {
			t.Errorf("annotation %d = %v, want start %v dropped %v", i, a, w.start, w.n)
		}
		total += a[sink.DroppedKey].(float64)
	}
	if len(d.Annotations) != len(wantNotes) || total != 1020 || s.Dropped() != 1020 {
		t.Errorf("annotations %v (total %v, Dropped %d), want 1020 dropped", d.Annotations, total, s.Dropped())
	}
	ext, _ := json.Marshal(d.Global["core:extensions"])
	if string(ext) != `[{"name":"sigproc","optional":true,"version":"1.0.0"}]` {
		t.Errorf("core:extensions %s", ext)
	}
	if fi, _ := os.Stat(base + ".sigmf-data"); fi.Size() != 50*8 {
		t.Errorf("data %d bytes, want %d", fi.Size(), 50*8)
	}
}

// TestSigMFMetaDuringRun: the metadata is valid from creation on, and a
// gap reaches it during the run (here at once: MetaEvery is tiny) only
// after the samples it points at are in the data file, so a run killed at
// that moment leaves a consistent recording.
func TestSigMFMetaDuringRun(t *testing.T) {
	base := filepath.Join(t.TempDir(), "r")
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: base, Format: "ri16_le", Meta: sink.SigMFMeta{SampleRate: 8000},
		MetaEvery: time.Nanosecond, StampStart: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := readMeta(t, base+".sigmf-meta")
	if len(d.Captures) != 1 || d.Captures[0]["core:datetime"] == nil {
		t.Fatalf("meta at start: %v", d.Captures)
	}
	sm := s.(*sink.SigMF)
	sm.WriteIndexed(0, 100, make([]float32, 100))
	sm.WriteIndexed(150, 100, make([]float32, 100))
	d = readMeta(t, base+".sigmf-meta")
	fi, _ := os.Stat(base + ".sigmf-data")
	if len(d.Captures) != 2 || len(d.Annotations) != 1 || d.Captures[1]["core:sample_start"] != 100.0 {
		t.Fatalf("meta during the run: %+v", d)
	}
	if fi.Size() < 100*2 || fi.Size()%2 != 0 {
		t.Fatalf("data file %d bytes when the meta names sample 100", fi.Size())
	}
	if entries, _ := os.ReadDir(filepath.Dir(base)); len(entries) != 2 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestSigMFFirstSampleTimeDuringRun: a live source's first sample's time
// (Spec.FirstSample), known only once it has been read, replaces the
// creation time in the metadata written during the run, so a run killed
// then leaves the right core:datetime, not the time the file was opened.
func TestSigMFFirstSampleTimeDuringRun(t *testing.T) {
	base := filepath.Join(t.TempDir(), "r")
	first := time.Date(2026, 12, 5, 10, 0, 0, 123456789, time.UTC)
	var known atomic.Bool
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: base, Format: "ri16_le", Meta: sink.SigMFMeta{SampleRate: 8000},
		MetaEvery: time.Nanosecond, StampStart: true, FirstSample: func() time.Time {
			if known.Load() {
				return first
			}
			return time.Time{}
		}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := readMeta(t, base+".sigmf-meta"); d.Captures[0]["core:datetime"] == nil {
		t.Fatalf("meta at start: %v", d.Captures)
	}
	known.Store(true) // the source's first read
	sm := s.(*sink.SigMF)
	sm.WriteIndexed(0, 100, make([]float32, 100))
	sm.WriteIndexed(100, 100, make([]float32, 100))
	d := readMeta(t, base+".sigmf-meta")
	if got := d.Captures[0]["core:datetime"]; got != "2026-12-05T10:00:00.123456789Z" {
		t.Fatalf("core:datetime during the run %v, want the first sample's", got)
	}
}

// shortWriter accepts limit bytes, then fails like a full disk.
type shortWriter struct {
	buf   bytes.Buffer
	limit int
}

func (w *shortWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.limit-w.buf.Len())
	w.buf.Write(p[:n])
	if n < len(p) {
		return n, errors.New("no space left on device")
	}
	return n, nil
}

// TestWrittenCountsWhatReachedTheOutput: after a full disk, Written counts
// the whole samples that reached the writer, not those accepted.
func TestWrittenCountsWhatReachedTheOutput(t *testing.T) {
	w := &shortWriter{limit: 8*100 + 5} // 100 cf32 samples and 5 bytes
	s, _ := sink.NewRaw(w, "cf32_le")
	s.Write(make([]float32, 2*1000))
	err := s.Close()
	if err == nil || s.Samples() != 1000 || s.Written() != 100 {
		t.Fatalf("err %v, Samples %d, Written %d; want an error, 1000 accepted, 100 written", err, s.Samples(), s.Written())
	}
}

// TestClipWarnedOnce: the clip handler runs once, at the first clipped
// value, and Clipped keeps counting.
func TestClipWarnedOnce(t *testing.T) {
	var calls []uint64
	s, _ := sink.NewRaw(&bytes.Buffer{}, "ri16_le")
	s.SetClipHandler(func(n uint64) { calls = append(calls, n) })
	s.Write([]float32{0.5, 0.25})
	s.Write([]float32{2, -3, 0})
	s.Write([]float32{5})
	if len(calls) != 1 || calls[0] != 2 || s.Clipped() != 3 {
		t.Fatalf("handler calls %v, Clipped %d; want one call with 2, then 3", calls, s.Clipped())
	}
}

// TestWriteIndexedAllocs: without a gap, a SigMF write allocates nothing.
func TestWriteIndexedAllocs(t *testing.T) {
	s, err := sink.CreateSigMF(filepath.Join(t.TempDir(), "a"), sink.SigMFMeta{Datatype: "rf32_le", SampleRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := make([]float32, 1024)
	var idx uint64
	if n := testing.AllocsPerRun(100, func() { s.WriteIndexed(idx, 1024, v); idx += 1024 }); n != 0 {
		t.Fatalf("%v allocations per write", n)
	}
}

// With a stage chain that decimates, indexes and dropped counts are at the
// input rate: a block of 5 output samples came from 40 input samples, and
// a gap's capture segment is timed at the input rate.
func TestSigMFGapsAtInputRate(t *testing.T) {
	base := filepath.Join(t.TempDir(), "d")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: "rf32_le", SampleRate: 125, InputRate: 1000, Datetime: t0})
	if err != nil {
		t.Fatal(err)
	}
	block := make([]float32, 5)
	for _, idx := range []uint64{0, 40, 160} { // 80 input samples dropped before 160
		if err := s.WriteIndexed(idx, 40, block); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d := readMeta(t, base+".sigmf-meta")
	if len(d.Captures) != 2 || d.Captures[1]["core:sample_start"] != 10.0 || d.Captures[1]["core:datetime"] != "2026-01-02T03:04:05.16Z" {
		t.Fatalf("captures %v", d.Captures)
	}
	if s.Dropped() != 80 {
		t.Fatalf("dropped %d, want 80 input samples", s.Dropped())
	}
}

// TestSigMFOutputsValidate runs the SigMF outputs of the other tests'
// shapes (gaps, an end gap, input-rate gaps) past the SigMF schema.
func TestSigMFOutputsValidate(t *testing.T) {
	base := filepath.Join(t.TempDir(), "g")
	s, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: "ri16_le", SampleRate: 1000, InputRate: 4000, FrequencyHz: 1e6, Datetime: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	s.WriteIndexed(0, 8, make([]float32, 2))
	s.WriteIndexed(16, 8, make([]float32, 2))
	s.EndInput(40)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sigmftest.ValidateFile(t, base+".sigmf-meta")
}

// TestOutputsThatAreOneFile: two outputs of one sink that are one file
// (a split channel's file linked to another's, a .sigmf-data linked to
// its .sigmf-meta) are refused, even with overwrite, and left as they were.
func TestOutputsThatAreOneFile(t *testing.T) {
	tests := []struct {
		name        string
		target, lnk string // lnk is made a link to target
		hard        bool
		spec        func(dir string) sink.Spec
	}{
		{"split channels, symlink", "out.ch0.cf32", "out.ch1.cf32", false, func(dir string) sink.Spec {
			return sink.Spec{Type: sink.TypeFile, Path: filepath.Join(dir, "out.cf32"), Format: "cf32_le", Complex: true, Channels: 2,
				Split: true, Labels: []string{"ch0", "ch1"}, Centres: []float64{0, 1}, Overwrite: true}
		}},
		{"split channels, hard link", "out.ch0.cf32", "out.ch1.cf32", true, func(dir string) sink.Spec {
			return sink.Spec{Type: sink.TypeFile, Path: filepath.Join(dir, "out.cf32"), Format: "cf32_le", Complex: true, Channels: 2,
				Split: true, Labels: []string{"ch0", "ch1"}, Centres: []float64{0, 1}, Overwrite: true}
		}},
		{"sigmf data linked to its meta", "o.sigmf-meta", "o.sigmf-data", false, func(dir string) sink.Spec {
			return sink.Spec{Type: sink.TypeSigMF, Path: filepath.Join(dir, "o"), Format: "rf32_le", Meta: sink.SigMFMeta{SampleRate: 1}, Overwrite: true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, tt.target)
			if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := os.Symlink
			if tt.hard {
				link = os.Link
			}
			if err := link(target, filepath.Join(dir, tt.lnk)); err != nil {
				t.Fatal(err)
			}
			_, err := sink.Prepare(tt.spec(dir))
			if !errors.Is(err, sink.ErrExists) || !strings.Contains(err.Error(), "are the same file") {
				t.Fatalf("Prepare: %v, want ErrExists: the same file", err)
			}
			if b, _ := os.ReadFile(target); string(b) != "keep" {
				t.Fatalf("the refused sink changed %s to %q", tt.target, b)
			}
		})
	}
}
