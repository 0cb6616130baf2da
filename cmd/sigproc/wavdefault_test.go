package main

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/sink"
)

// TestWAVOutputTakesInputWidth (issue 27 item 9): a WAV output without
// sink.format takes the input's PCM width when the input is stored as
// integers (16 bits and fewer: pcm16; 24 and 32: pcm24), so that Python's
// wave module opens it; float input still gives float32; a format given
// is kept.
func TestWAVOutputTakesInputWidth(t *testing.T) {
	py := pythonWith(t, "import wave")
	dir := t.TempDir()
	wavIn := func(name, format string) string {
		p := filepath.Join(dir, name)
		pl, err := sink.Prepare(sink.Spec{Type: sink.TypeWAV, Path: p, Format: format, SampleRate: 8000})
		if err != nil {
			t.Fatal(err)
		}
		s, err := pl.Create(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 800)
		for i := range x {
			x[i] = float32(i%50) / 100
		}
		if err := s.Write(x); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := func(name string, n int) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, make([]byte, n), 0o644)
		return p
	}
	tests := []struct {
		name, source, sinkFormat string
		wantBits                 int // 32 = float32
	}{
		{"wav pcm16 in", "{type: file, path: " + wavIn("a.wav", sink.WAVPCM16) + "}", "", 16},
		{"wav pcm24 in", "{type: file, path: " + wavIn("b.wav", sink.WAVPCM24) + "}", "", 24},
		{"wav float in", "{type: file, path: " + wavIn("c.wav", sink.WAVFloat32) + "}", "", 32},
		{"raw ri16_le in", "{type: file, path: " + raw("d.s16", 1600) + ", format: ri16_le, sample_rate: 8000}", "", 16},
		{"raw cu8 in (rtl_sdr)", "{type: file, path: " + raw("e.cu8", 1600) + ", format: cu8, sample_rate: 8000}", "", 16},
		{"raw rf32_le in", "{type: file, path: " + raw("f.f32", 3200) + ", format: rf32_le, sample_rate: 8000}", "", 32},
		{"wav pcm16 in, float32 asked for", "{type: file, path: " + filepath.Join(dir, "a.wav") + "}", ", format: float32", 32},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out"+string(rune('0'+i))+".wav")
			cfg := writeConfig(t, "source: "+tt.source+"\nfilter: {taps: [1]}\nsink: {type: wav, path: "+out+tt.sinkFormat+"}\n")
			if code, _, errs := runCLI(t, "", "run", cfg); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			b, _ := os.ReadFile(out)
			if len(b) < 44 {
				t.Fatalf("output %d bytes", len(b))
			}
			tag, bits := binary.LittleEndian.Uint16(b[20:]), int(binary.LittleEndian.Uint16(b[34:]))
			if bits != tt.wantBits || (tag == 3) != (tt.wantBits == 32) {
				t.Fatalf("output format tag %d, %d bits; want %d bits", tag, bits, tt.wantBits)
			}
			if tt.wantBits == 32 {
				return // float: Python's wave module cannot open it
			}
			got, err := exec.Command(py, "-c", "import sys, wave; w = wave.open(sys.argv[1]); print(w.getsampwidth(), w.getnframes())", out).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(got), string(rune('0'+tt.wantBits/8))+" ") {
				t.Errorf("python wave: %v: %s", err, got)
			}
		})
	}
}
