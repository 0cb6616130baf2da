package sink_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/internal/sigmftest"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// wantCapture is a capture segment a test expects.
type wantCapture struct {
	start float64
	freq  any    // float64, or nil: absent
	dt    string // "": absent
}

// checkCaptures compares a recording's capture segments with want.
func checkCaptures(t *testing.T, got []map[string]any, want []wantCapture) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("captures %v, want %v", got, want)
	}
	for i, w := range want {
		c := got[i]
		dt, _ := c["core:datetime"].(string)
		if c["core:sample_start"] != w.start || c["core:frequency"] != w.freq || dt != w.dt {
			t.Errorf("capture %d = %v, want %+v", i, c, w)
		}
	}
}

// newRecording creates a cf32_le SigMF recording of src through chain.
func newRecording(t *testing.T, src *capture.Meta, chain stage.Chain) (sm *sink.SigMF, base string) {
	t.Helper()
	m := sink.SigMFMeta{Datatype: "cf32_le"}
	m.Carry(src, chain)
	base = filepath.Join(t.TempDir(), "r")
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: base, Format: "cf32_le", Meta: m})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.(*sink.SigMF), base
}

// writeBlocks writes n input samples in blocks as chain outputs them,
// dropping the block that starts at drop (0: none); before, if set, is
// called with each block's input index first.
func writeBlocks(t *testing.T, sm *sink.SigMF, chain stage.Chain, n, block, drop uint64, before func(uint64)) {
	t.Helper()
	var consumed int64
	for i := uint64(0); i < n; i += block {
		if before != nil {
			before(i)
		}
		inputs := min(block, n-i)
		if drop != 0 && i == drop {
			continue
		}
		outs := chain.Count(consumed+int64(inputs)) - chain.Count(consumed)
		consumed += int64(inputs)
		if err := sm.WriteIndexed(i, inputs, make([]float32, 2*outs)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSigMFCarriesCaptures (issue 27 item 7): an input with several
// capture segments (frequency changes, jumps in time) keeps them in the
// output, against hand-computed metas: each starts at the output sample
// that its first input sample maps to (the first at or after it: input
// n → ceil(n/M) through a ÷M, ceil(n·L/M) through a resampler L/M),
// counting only the samples the chain consumed, so that drops before it do
// not move it; its frequency is moved by the chain's shift; its datetime
// is kept, or, for a gap's segment, that of the input capture the gap
// ends in plus the time since its start. Several segments on one output
// sample: the last describes it. One with no output sample of its own
// is left out.
func TestSigMFCarriesCaptures(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	fir := func(m int) stage.Stage { return stage.Stage{Kind: stage.KindFIR, Taps: []float32{1}, Decimate: m} }
	chain := func(st ...stage.Stage) stage.Chain { return stage.Chain{SampleRate: 1000, Complex: true, Stages: st} }
	const first = "2026-01-02T03:04:05Z"
	tests := []struct {
		name         string
		chain        stage.Chain
		caps         []capture.Capture
		n, block     uint64
		drop         uint64 // the block starting here is dropped (0: none)
		want         []wantCapture
		wantOut      uint64
		wantDropNote int
	}{
		{"no rate change", chain(fir(1)), []capture.Capture{
			{SampleStart: 1000, FrequencyHz: 101e6, HasFrequency: true, Datetime: t0.Add(5 * time.Second)},
			{SampleStart: 2500}},
			4000, 512, 0,
			[]wantCapture{{0, 100e6, first}, {1000, 101e6, "2026-01-02T03:04:10Z"}, {2500, nil, ""}}, 4000, 0},
		{"shift -250 Hz, ÷8", chain(stage.Stage{Kind: stage.KindShift, FrequencyHz: -250}, fir(8)), []capture.Capture{
			{SampleStart: 1001, FrequencyHz: 101e6, HasFrequency: true, Datetime: t0.Add(5 * time.Second)},
			{SampleStart: 2500}},
			4000, 512, 0,
			[]wantCapture{{0, 100000250.0, first}, {126, 101000250.0, "2026-01-02T03:04:10Z"}, {313, 250.0, ""}}, 500, 0},
		{"resample ×3/2", chain(stage.Stage{Kind: stage.KindResample, Taps: []float32{1}, Up: 3, Down: 2}), []capture.Capture{
			{SampleStart: 1001, FrequencyHz: 101e6, HasFrequency: true, Datetime: at("2026-01-02T03:05:00Z")},
			{SampleStart: 2000, FrequencyHz: 102e6, HasFrequency: true}},
			4000, 500, 0,
			[]wantCapture{{0, 100e6, first}, {1502, 101e6, "2026-01-02T03:05:00Z"}, {3000, 102e6, ""}}, 6000, 0},
		{"a capture that starts in a gap", chain(fir(1)), []capture.Capture{
			{SampleStart: 1050, FrequencyHz: 101e6, HasFrequency: true, Datetime: at("2026-01-02T03:05:00Z")}},
			2000, 100, 1000,
			[]wantCapture{{0, 100e6, first}, {1000, 101e6, "2026-01-02T03:05:00.05Z"}}, 1900, 1},
		{"a gap before a capture, ÷4", chain(fir(4)), []capture.Capture{
			{SampleStart: 450, FrequencyHz: 101e6, HasFrequency: true, Datetime: at("2026-01-02T03:06:00Z")}},
			1000, 100, 200,
			[]wantCapture{{0, 100e6, first}, {50, 100e6, "2026-01-02T03:04:05.3Z"}, {88, 101e6, "2026-01-02T03:06:00Z"}}, 225, 1},
		{"two captures on one output sample, ÷8", chain(fir(8)), []capture.Capture{
			{SampleStart: 1001, FrequencyHz: 101e6, HasFrequency: true},
			{SampleStart: 1005, FrequencyHz: 102e6, HasFrequency: true, Datetime: at("2026-01-02T03:07:00Z")}},
			2000, 500, 0,
			[]wantCapture{{0, 100e6, first}, {126, 102e6, "2026-01-02T03:07:00Z"}}, 250, 0},
		{"a capture after a block's last output, ÷8", chain(fir(8)), []capture.Capture{
			{SampleStart: 97, FrequencyHz: 101e6, HasFrequency: true}},
			200, 100, 0,
			[]wantCapture{{0, 100e6, first}, {13, 101e6, ""}}, 25, 0},
		{"a capture after the last output, ÷8", chain(fir(8)), []capture.Capture{
			{SampleStart: 995, FrequencyHz: 101e6, HasFrequency: true}},
			1000, 100, 0,
			[]wantCapture{{0, 100e6, first}}, 125, 0},
		{"a capture after the last output, then samples dropped, ÷8", chain(fir(8)), []capture.Capture{
			{SampleStart: 995, FrequencyHz: 101e6, HasFrequency: true}},
			1100, 100, 1000,
			[]wantCapture{{0, 100e6, first}}, 125, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := capture.Meta{FrequencyHz: 100e6, HasFrequency: true, Datetime: t0, Captures: tt.caps}
			sm, base := newRecording(t, &src, tt.chain)
			writeBlocks(t, sm, tt.chain, tt.n, tt.block, tt.drop, nil)
			sm.EndInput(tt.n)
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			d := readMeta(t, base+".sigmf-meta")
			checkCaptures(t, d.Captures, tt.want)
			if len(d.Annotations) != tt.wantDropNote {
				t.Errorf("annotations %v, want %d gap notes", d.Annotations, tt.wantDropNote)
			}
			if fi, _ := os.Stat(base + ".sigmf-data"); fi.Size() != int64(tt.wantOut)*8 {
				t.Errorf("data %d bytes, want %d samples", fi.Size(), tt.wantOut)
			}
			sigmftest.ValidateFile(t, base+".sigmf-meta")
		})
	}
}

// TestSigMFRecentre: a retune of the chain's shift (Recentre, at a count
// of chain inputs) starts a capture segment at the output sample that
// count maps to, with the frequency moved by the retune, and moves the
// input's later segments too, whether it is reported before its samples
// are written or after (the control API answers once the backend has
// accepted it, while blocks flow). A retune that changes nothing there
// starts none.
func TestSigMFRecentre(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const first = "2026-01-02T03:04:05Z"
	chain := stage.Chain{SampleRate: 1000, Complex: true, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: -250}, {Kind: stage.KindFIR, Taps: []float32{1}, Decimate: 8}}}
	type move struct {
		when, at uint64 // reported before writing the block at input when (≥ n: after the last)
		delta    float64
	}
	tests := []struct {
		name    string
		srcFreq bool
		caps    []capture.Capture
		drop    uint64 // the block starting here is dropped (0: none)
		moves   []move
		want    []wantCapture
	}{
		{"reported before", true, nil, 0, []move{{0, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}}},
		{"reported after its samples", true, nil, 0, []move{{2048, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}}},
		{"reported after the last write", true, nil, 0, []move{{1 << 20, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}}},
		{"an input capture after it is moved too", true,
			[]capture.Capture{{SampleStart: 2500, FrequencyHz: 101e6, HasFrequency: true}}, 0,
			[]move{{0, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}, {313, 100999250.0, ""}}},
		{"retuned and back", true, nil, 0, []move{{0, 1024, -1000}, {1536, 2048, 0}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}, {256, 100000250.0, "2026-01-02T03:04:07.048Z"}}},
		{"no change", true, nil, 0, []move{{0, 1024, 0}},
			[]wantCapture{{0, 100000250.0, first}}},
		{"after a gap: counted in chain inputs", true, nil, 512, []move{{0, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {64, 100000250.0, "2026-01-02T03:04:06.024Z"}, {128, 99999250.0, "2026-01-02T03:04:06.536Z"}}},
		{"reported after a later gap", true, nil, 2048, []move{{3072, 1024, -1000}},
			[]wantCapture{{0, 100000250.0, first}, {128, 99999250.0, "2026-01-02T03:04:06.024Z"}, {256, 99999250.0, "2026-01-02T03:04:07.56Z"}}},
		{"no source frequency: the shift's", false, nil, 0, []move{{0, 1024, -250}},
			[]wantCapture{{0, 250.0, ""}, {128, 0.0, ""}}},
		{"beyond the recording", true, nil, 0, []move{{0, 1 << 20, -1000}},
			[]wantCapture{{0, 100000250.0, first}}},
	}
	const n, block = 4096, 512
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := capture.Meta{Captures: tt.caps}
			if tt.srcFreq {
				src.FrequencyHz, src.HasFrequency, src.Datetime = 100e6, true, t0
			}
			sm, base := newRecording(t, &src, chain)
			report := func(i uint64) {
				for _, mv := range tt.moves {
					if mv.when == i {
						sm.Recentre(mv.at, mv.delta)
					}
				}
			}
			writeBlocks(t, sm, chain, n, block, tt.drop, report)
			report(1 << 20)
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			d := readMeta(t, base+".sigmf-meta")
			checkCaptures(t, d.Captures, tt.want)
			sigmftest.ValidateFile(t, base+".sigmf-meta")
		})
	}
}

// TestDeferredRecentreBeforeOpen: a retune reported before Deferred.Open
// (the control server and SIGHUP reloads run before the outputs are
// created; a FIFO output can wait for its reader for minutes) is kept and
// reaches the recording once it is open.
func TestDeferredRecentreBeforeOpen(t *testing.T) {
	chain := stage.Chain{SampleRate: 1000, Complex: true, Stages: []stage.Stage{{Kind: stage.KindShift, FrequencyHz: -250}}}
	src := capture.Meta{FrequencyHz: 100e6, HasFrequency: true}
	m := sink.SigMFMeta{Datatype: "cf32_le"}
	m.Carry(&src, chain)
	base := filepath.Join(t.TempDir(), "r")
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: base, Format: "cf32_le", Meta: m})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Deferred()
	d.Recentre(0, -1000) // retuned to -1250 Hz before the first block
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(make([]float32, 2*512)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	md := readMeta(t, base+".sigmf-meta")
	if f := md.Captures[0]["core:frequency"]; f != 100000250.0-1000 {
		t.Errorf("core:frequency %v, want %v", f, 100000250.0-1000)
	}
}
