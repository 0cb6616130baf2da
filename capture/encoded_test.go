package capture_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/pipeline"
)

// TestViewEncoded: an integer file's encoded views are its stored bytes,
// whole samples, in order, named with pipeline's encodings; View refuses
// it; a cut file ends with ErrTruncated.
func TestViewEncoded(t *testing.T) {
	cases := []struct {
		format, enc string
		frame, ch   int
	}{
		{"cs8", pipeline.EncInt8, 2, 1},
		{"cu8", pipeline.EncUint8SDR, 2, 1},
		{"ci16_le", pipeline.EncInt16, 4, 1},
		{"ri16_le", pipeline.EncInt16, 6, 3},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			data := make([]byte, 100003*c.frame+1) // a partial frame at the end
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			raw, _ := mappedFile(t, data, c.format, c.ch)
			if raw.Encoding() != c.enc || pipeline.EncodingSize(c.enc)*raw.Info().Channels() != c.frame {
				t.Fatalf("encoding %q, want %q of %d-byte frames", raw.Encoding(), c.enc, c.frame)
			}
			if _, err := raw.View(context.Background(), 4096); err == nil {
				t.Fatal("View gave float32 values of an integer file")
			}
			var got []byte
			for {
				b, err := raw.ViewEncoded(context.Background(), 7000*raw.Info().Channels())
				if len(b)%c.frame != 0 {
					t.Fatalf("%d bytes: not whole frames", len(b))
				}
				got = append(got, b...)
				if err != nil {
					if !errors.Is(err, capture.ErrTruncated) { // the partial frame left over
						t.Fatalf("end: %v", err)
					}
					break
				}
			}
			if string(got) != string(data[:len(data)-1]) {
				t.Fatalf("%d bytes viewed, not the file's %d whole-frame bytes", len(got), len(data)-1)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		raw, path := mappedFile(t, make([]byte, 1<<20), "cs8", 1)
		if _, err := raw.ViewEncoded(context.Background(), 1<<16); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 1<<16); err != nil {
			t.Fatal(err)
		}
		if b, err := raw.ViewEncoded(context.Background(), 1<<16); !errors.Is(err, capture.ErrTruncated) || b != nil {
			t.Fatalf("after the cut: %d bytes, %v", len(b), err)
		}
		if _, err := raw.ViewEncoded(context.Background(), 1<<16); errors.Is(err, io.EOF) {
			t.Fatal("the error is not sticky")
		}
	})
}

// mappedFile writes data as a format file of ch channels, opens it and
// maps it (Region); the source is closed at the end of the test.
func mappedFile(t *testing.T, data []byte, format string, ch int) (*capture.Raw, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec."+format)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: format, SampleRate: 1, Channels: ch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	raw := src.(*capture.Raw)
	if _, err := raw.Region(); err != nil {
		t.Fatal(err)
	}
	return raw, path
}
