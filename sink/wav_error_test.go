package sink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullFile is a regular file that takes only limit bytes, like a disk
// that fills up: a write past it is cut short with ENOSPC.
type fullFile struct {
	*os.File
	limit int64
}

func (f *fullFile) Write(p []byte) (int, error) {
	off, err := f.File.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	n := max(0, min(int64(len(p)), f.limit-off))
	m, err := f.File.Write(p[:n])
	if err == nil && m < len(p) {
		err = &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return m, err
}

// TestWAVSizesAfterWriteError (issue 27 item 8): a WAV whose writes fail
// part way (a full disk, here cut inside a sample, at a sample's end, at
// the header, with and without room for the pad byte) still gets its
// header patched on Close: the data size is the whole samples that
// reached the file, the RIFF size matches, never 0xFFFFFFFF, and Python's
// wave module reads exactly those samples (float WAV, which it cannot
// open, is checked by its header alone).
func TestWAVSizesAfterWriteError(t *testing.T) {
	py := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import wave").Run() == nil {
			py = p
			break
		}
	}
	tests := []struct {
		name     string
		format   string
		channels int
		samples  int   // frames written
		room     int64 // data bytes the file takes after the header
		frames   int   // frames that reach the file
	}{
		{"pcm16, cut inside a sample", WAVPCM16, 1, 100000, 2*3000 + 1, 3000},
		{"pcm16 stereo, no room after the header", WAVPCM16, 2, 1000, 0, 0},
		{"pcm24, odd data, room for the pad", WAVPCM24, 1, 100000, 3*3333 + 2, 3333},
		{"pcm24, odd data, no room for the pad", WAVPCM24, 1, 100000, 3 * 3333, 3333},
		{"float32 stereo, cut inside a frame", WAVFloat32, 2, 100000, 8*2000 + 5, 2000},
		// 6-byte frames do not divide the 64 KiB buffer: the cut falls in
		// a later flush than the first.
		{"pcm24 stereo, cut after a full buffer", WAVPCM24, 2, 100000, 6*12000 + 4, 12000},
		{"pcm24, cut after two buffers", WAVPCM24, 1, 100000, 3*30000 + 1, 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := lookupWAVFormat(tt.format, false, tt.channels)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, tt.samples*tt.channels)
			for i := range x {
				x[i] = float32(i%200-100) / 128
			}
			write := func(path string, limit int64) (*WAV, error) {
				file, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				ff := &fullFile{File: file, limit: limit}
				raw := newRaw(ff, file, path, f)
				raw.file = file
				w, err := newWAV(raw, 48000, ff)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(x); i += 999 * tt.channels {
					if w.Write(x[i:min(i+999*tt.channels, len(x))]) != nil {
						break
					}
				}
				return w, w.Close()
			}
			dir := t.TempDir()
			ref, path := filepath.Join(dir, "ref.wav"), filepath.Join(dir, "full.wav")
			if _, err := write(ref, 1<<40); err != nil {
				t.Fatal(err)
			}
			hdr := int64(len(wavHeader(f, 48000, 0)))
			w, err := write(path, hdr+tt.room)
			if err == nil || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("Close: %v, want the write error", err)
			}
			frame := int64(f.frameValues() * f.size())
			data := int64(tt.frames) * frame
			if w.Written() != uint64(tt.frames) {
				t.Errorf("Written %d, want %d", w.Written(), tt.frames)
			}
			b, _ := os.ReadFile(path)
			want, _ := os.ReadFile(ref)
			le := binary.LittleEndian
			riff, size := le.Uint32(b[4:]), le.Uint32(b[hdr-4:])
			if size != uint32(data) || riff != uint32(hdr-8+data+data&1) {
				t.Errorf("header: RIFF size %#x, data size %#x; want %#x and %#x", riff, size, hdr-8+data+data&1, data)
			}
			if !bytes.Equal(b[hdr:hdr+data], want[hdr:hdr+data]) || int64(len(b)) > hdr+data+data&1 {
				t.Errorf("file %d bytes: want the reference's first %d data bytes (and a pad)", len(b), data)
			}
			if f.float || py == "" {
				return
			}
			script := `import sys, wave
w = wave.open(sys.argv[1])
print(w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes(), w.readframes(w.getnframes()).hex())`
			out, err := exec.Command(py, "-c", script, path).CombinedOutput()
			if err != nil {
				t.Fatalf("python wave: %v\n%s", err, out)
			}
			exp := fmt.Sprintf("%d %d 48000 %d %x\n", tt.channels, f.size(), tt.frames, want[hdr:hdr+data])
			if string(out) != exp {
				t.Errorf("python wave read %.80q, want %.80q", out, exp)
			}
		})
	}
	if py == "" {
		t.Log("no python3: Python's wave module not run")
	}
}

// countingWriter records the size of every write it is given.
type countingWriter struct{ sizes []int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return len(p), nil
}

// TestFlushesAreWholeFrames: every write a Raw makes holds whole frames,
// also where a frame does not divide the buffer (3 or 5 channels of 16 or
// 24 bits, frames larger than the buffer), so that an output cut short
// by kill -9 between two writes holds whole frames only.
func TestFlushesAreWholeFrames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complex  bool
		channels int
	}{
		{WAVPCM16, false, 3},
		{WAVPCM24, true, 1},
		{WAVPCM24, false, 5},
		{WAVFloat32, true, 9000}, // 72000-byte frames
	} {
		f, err := lookupWAVFormat(tc.name, tc.complex, tc.channels)
		if err != nil {
			t.Fatal(err)
		}
		w := &countingWriter{}
		r := newRaw(w, nil, "test", f)
		fv, frame := f.frameValues(), f.frameValues()*f.size()
		x := make([]float32, 37*fv)
		for range 2000 {
			if err := r.Write(x); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range w.sizes {
			if n%frame != 0 {
				t.Errorf("%s × %d: a write of %d bytes, not whole %d-byte frames", tc.name, tc.channels, n, frame)
				break
			}
			total += n
		}
		if total != 2000*37*frame || len(w.sizes) < 2 {
			t.Errorf("%s × %d: %d bytes in %d writes, want %d", tc.name, tc.channels, total, len(w.sizes), 2000*37*frame)
		}
	}
}
