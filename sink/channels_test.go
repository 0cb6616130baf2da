package sink

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestManyChannels: a sink takes frames of up to MaxChannels channels (a
// channelizer's output, beyond a source's 64) in every file format, and
// refuses more.
func TestManyChannels(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		typ, format string
		channels    int
		ok          bool
	}{
		{TypeSigMF, "cf32_le", MaxChannels, true},
		{TypeFile, "ci16_le", MaxChannels, true},
		{TypeWAV, WAVFloat32, MaxChannels, true}, // 8192 WAV channels: I and Q of each
		{TypeSigMF, "cf32_le", MaxChannels + 1, false},
		{TypeFile, "cf32_le", -1, false},
	} {
		p, err := Prepare(Spec{Type: tt.typ, Path: filepath.Join(dir, tt.typ), Format: tt.format, Complex: true,
			Channels: tt.channels, SampleRate: 1000, Meta: SigMFMeta{SampleRate: 1000, Channels: tt.channels}})
		if tt.ok != (err == nil) {
			t.Errorf("%s %s, %d channels: %v", tt.typ, tt.format, tt.channels, err)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "want 1..4096") {
				t.Errorf("%d channels: %v, want the limit named", tt.channels, err)
			}
			continue
		}
		s, err := p.Create(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]float32, 2*tt.channels)
		if err := s.Write(frame); err != nil {
			t.Errorf("%s: write one frame: %v", tt.typ, err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if n := s.(Counter).Samples(); n != 1 {
			t.Errorf("%s: %d samples written, want 1 frame", tt.typ, n)
		}
	}
}
