package sink_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/internal/sigmftest"
	"github.com/sigproc/sigproc/sink"
)

// TestSigMFMetaThroughDirHandle (issue 27 item 3): the metadata is
// rewritten during the run and at its end through the directory handle
// opened when the recording was created. Whatever happens to the path of
// that directory meanwhile — renamed, replaced by a symlink to another
// directory, replaced by a new directory — no file other than the
// recording's own meta is written: the foreign files keep their bytes,
// no temporary file is left anywhere, and the moved directory holds the
// final metadata, valid and describing every sample of the data.
func TestSigMFMetaThroughDirHandle(t *testing.T) {
	const foreign = "not yours"
	tests := []struct {
		name string
		swap func(t *testing.T, dir, moved, victim string)
	}{
		{"directory renamed", func(t *testing.T, dir, moved, victim string) {
			mustDo(t, os.Rename(dir, moved))
		}},
		{"renamed, a symlink to another directory in its place", func(t *testing.T, dir, moved, victim string) {
			mustDo(t, os.Rename(dir, moved))
			mustDo(t, os.Symlink(victim, dir))
		}},
		{"renamed, a new directory with a foreign meta in its place", func(t *testing.T, dir, moved, victim string) {
			mustDo(t, os.Rename(dir, moved))
			mustDo(t, os.Mkdir(dir, 0o755))
			mustDo(t, os.WriteFile(filepath.Join(dir, "rec.sigmf-meta"), []byte(foreign), 0o644))
		}},
		{"the meta replaced by a symlink to a foreign file", func(t *testing.T, dir, moved, victim string) {
			mustDo(t, os.Rename(dir, moved))
			mustDo(t, os.Remove(filepath.Join(moved, "rec.sigmf-meta")))
			mustDo(t, os.Symlink(filepath.Join(victim, "rec.sigmf-meta"), filepath.Join(moved, "rec.sigmf-meta")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir, moved, victim := filepath.Join(root, "out"), filepath.Join(root, "moved"), filepath.Join(root, "victim")
			mustDo(t, os.Mkdir(dir, 0o755))
			mustDo(t, os.Mkdir(victim, 0o755))
			mustDo(t, os.WriteFile(filepath.Join(victim, "rec.sigmf-meta"), []byte(foreign), 0o644))
			p, err := sink.Prepare(sink.Spec{Type: sink.TypeSigMF, Path: filepath.Join(dir, "rec"), Format: "rf32_le",
				Meta: sink.SigMFMeta{SampleRate: 1000, Datetime: time.Unix(0, 0)}, MetaEvery: time.Nanosecond})
			mustDo(t, err)
			s, err := p.Create(context.Background())
			mustDo(t, err)
			sm := s.(*sink.SigMF)
			mustDo(t, sm.WriteIndexed(0, 10, make([]float32, 10)))
			tt.swap(t, dir, moved, victim)
			mustDo(t, sm.WriteIndexed(20, 10, make([]float32, 10))) // a gap: the meta is rewritten now
			mustDo(t, sm.WriteIndexed(30, 10, make([]float32, 10)))
			mustDo(t, sm.Close())

			for _, p := range []string{filepath.Join(victim, "rec.sigmf-meta"), filepath.Join(dir, "rec.sigmf-meta")} {
				if b, err := os.ReadFile(p); err == nil && string(b) != foreign {
					t.Errorf("%s was written: %.60q", p, b)
				}
			}
			for _, d := range []string{victim, moved} {
				entries, _ := os.ReadDir(d)
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".tmp") {
						t.Errorf("temporary file %s left in %s", e.Name(), d)
					}
				}
			}
			meta := filepath.Join(moved, "rec.sigmf-meta")
			if fi, err := os.Lstat(meta); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("final meta %s: %v, %v", meta, fi, err)
			}
			d := readMeta(t, meta)
			if len(d.Captures) != 2 || d.Captures[1]["core:sample_start"] != 10.0 || len(d.Annotations) != 1 {
				t.Errorf("final meta %+v: want the gap's capture at 10", d)
			}
			sigmftest.ValidateFile(t, meta)
			if fi, _ := os.Stat(filepath.Join(moved, "rec.sigmf-data")); fi == nil || fi.Size() != 30*4 {
				t.Errorf("data %v, want 120 bytes", fi)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
