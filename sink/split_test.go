package sink_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/sink"
)

// TestSplit: a split sink writes each channel of the frames to a
// recording of its own, named by its label, each SigMF recording with its
// frequencies moved by the channel's centre; the gap it is told of is
// recorded in every one; writing allocates nothing once the buffers fit.
func TestSplit(t *testing.T) {
	dir := t.TempDir()
	labels, centres := []string{"ch63", "ch03", "ch10"}, []float64{-16000, 48000, 160000}
	meta := sink.SigMFMeta{SampleRate: 32000, FrequencyHz: 100e6, HasFrequency: true,
		Captures: []sink.SigMFCapture{{InputStart: 10, FrequencyHz: 101e6, HasFrequency: true}}}
	for _, typ := range []string{sink.TypeSigMF, sink.TypeFile} {
		path := filepath.Join(dir, typ, "out.cf32")
		p, err := sink.Prepare(sink.Spec{Type: typ, Path: path, Format: "cf32_le", Complex: true, Channels: 3, SampleRate: 32000,
			Split: true, Labels: labels, Centres: centres, Meta: meta, MakeDirs: true})
		if err != nil {
			t.Fatal(err)
		}
		d := p.Deferred()
		if err := d.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		frames := make([]float32, 4*3*2) // 4 frames of 3 complex channels
		for i := range frames {
			frames[i] = float32(i)
		}
		if err := d.WriteIndexed(0, 4, frames); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteIndexed(6, 4, frames); err != nil { // 2 input samples lost before
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(10, func() { d.Sink().Write(frames) }); a != 0 {
			t.Errorf("%s: Write allocates %v times", typ, a)
		}
		d.EndInput(10 + 11*4)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if w, ok := d.Written(); !ok || w != 8+11*4 {
			t.Errorf("%s: Written %d, %v; want 52 frames", typ, w, ok)
		}
		for j, label := range labels {
			data := filepath.Join(dir, typ, "out."+label+".cf32")
			if typ == sink.TypeSigMF {
				data = filepath.Join(dir, typ, "out.cf32."+label+".sigmf-data")
			}
			b, err := os.ReadFile(data)
			if err != nil {
				t.Fatal(err)
			}
			for f := range 4 {
				for c := range 2 {
					got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*(2*f+c):]))
					if want := frames[(f*3+j)*2+c]; got != want {
						t.Fatalf("%s %s: frame %d value %d = %v, want %v", typ, label, f, c, got, want)
					}
				}
			}
			if typ != sink.TypeSigMF {
				continue
			}
			m := readMeta(t, data[:len(data)-len("data")]+"meta")
			if _, ok := m.Global["core:num_channels"]; ok || m.Captures[0]["core:frequency"] != 100e6+centres[j] {
				t.Errorf("%s: global %v, captures %v: want one channel at %g", label, m.Global, m.Captures, 100e6+centres[j])
			}
			moved := false
			for _, c := range m.Captures[1:] {
				moved = moved || c["core:frequency"] == 101e6+centres[j]
			}
			if !moved || len(m.Annotations) == 0 {
				t.Errorf("%s: captures %v, annotations %v: want the second segment moved and the gap recorded", label, m.Captures, m.Annotations)
			}
		}
	}
}

// TestSplitRefusals: a split that would overwrite a file, or write to
// standard output or WAV, is refused before any channel's file is made,
// and one that fails while its files are made leaves none of them.
func TestSplitRefusals(t *testing.T) {
	dir := t.TempDir()
	spec := sink.Spec{Type: sink.TypeFile, Path: filepath.Join(dir, "x.cf32"), Format: "cf32_le", Complex: true, Channels: 2,
		Split: true, Labels: []string{"ch0", "ch1"}, Centres: []float64{0, 1}}
	if err := os.WriteFile(filepath.Join(dir, "x.ch1.cf32"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Prepare(spec); !errors.Is(err, sink.ErrExists) {
		t.Errorf("an existing channel file: %v, want ErrExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.ch0.cf32")); !os.IsNotExist(err) {
		t.Errorf("channel 0's file was made: %v", err)
	}
	// A channel's file that appears after the checks fails Create, and
	// the channels made before it are taken away.
	spec.Path = filepath.Join(dir, "z.cf32")
	p, err := sink.Prepare(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "z.ch1.cf32"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(context.Background()); !errors.Is(err, sink.ErrExists) {
		t.Errorf("a file that appeared: %v, want ErrExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "z.ch0.cf32")); !os.IsNotExist(err) {
		t.Errorf("channel 0's file was left: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "z.ch1.cf32")); string(b) != "keep" {
		t.Errorf("the file that appeared holds %q", b)
	}
	for name, mod := range map[string]func(*sink.Spec){
		"wav":      func(s *sink.Spec) { s.Type, s.Format = sink.TypeWAV, sink.WAVFloat32 },
		"stdout":   func(s *sink.Spec) { s.Path = sink.Stdout },
		"labels":   func(s *sink.Spec) { s.Labels = []string{"a"} },
		"repeated": func(s *sink.Spec) { s.Labels = []string{"a", "a"} },
		"slash":    func(s *sink.Spec) { s.Labels = []string{"a", "../b"} },
		"file dir": func(s *sink.Spec) { s.Path = dir + "/" },
		"sigmf dir": func(s *sink.Spec) {
			s.Type, s.Path, s.Meta = sink.TypeSigMF, dir+"/", sink.SigMFMeta{SampleRate: 1}
		},
	} {
		s := spec
		s.Path = filepath.Join(dir, "y.cf32")
		mod(&s)
		if _, err := sink.Prepare(s); err != nil && name == "sigmf dir" && !strings.Contains(err.Error(), "names a directory") {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := sink.Prepare(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSplitWarnsOnce: values clipped in several channels call OnClip
// once for the whole split, and Clipped counts them all.
func TestSplitWarnsOnce(t *testing.T) {
	calls := 0
	p, err := sink.Prepare(sink.Spec{Type: sink.TypeFile, Path: filepath.Join(t.TempDir(), "c.ci16"), Format: "ci16_le", Complex: true,
		Channels: 3, Split: true, Labels: []string{"a", "b", "c"}, Centres: []float64{0, 0, 0}, OnClip: func(uint64) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Deferred()
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.Write([]float32{2, 0, -3, 0, 0, 5}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if calls != 1 || d.Clipped() != 3 {
		t.Errorf("OnClip called %d times, %d clipped; want once, 3", calls, d.Clipped())
	}
}
