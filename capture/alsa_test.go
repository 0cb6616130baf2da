package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func TestALSAABI(t *testing.T) {
	// Values from asound.h as compiled for the target (checked against
	// alsa-lib's headers on x86_64/arm64 and armhf).
	type want struct {
		params, xferi        uintptr
		refine, hw, readi    uintptr
		prepare, start, drop uintptr
	}
	w := want{608, 24, 0xc2604110, 0xc2604111, 0x80184151, 0x4140, 0x4142, 0x4143}
	if unsafe.Sizeof(uintptr(0)) == 4 {
		w = want{604, 12, 0xc25c4110, 0xc25c4111, 0x800c4151, 0x4140, 0x4142, 0x4143}
	}
	got := want{unsafe.Sizeof(hwParams{}), unsafe.Sizeof(sndXferi{}), ioctlHWRefine, ioctlHWParams, ioctlReadIFrames, ioctlPrepare, ioctlStart, ioctlDrop}
	if got != w {
		t.Errorf("ABI = %#x, want %#x", got, w)
	}
	if off := unsafe.Offsetof(hwParams{}.intervals); off != 260 {
		t.Errorf("intervals at %d, want 260", off)
	}
	if off := unsafe.Offsetof(hwParams{}.rmask); off != 512 {
		t.Errorf("rmask at %d, want 512", off)
	}
}

func TestALSADecode(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]float32, []byte)
		raw    []byte
		want   []float32
	}{
		{"s16", decodeS16LE, le16(-32768, -1, 0, 1, 16384, 32767),
			[]float32{-1, -1.0 / 32768, 0, 1.0 / 32768, 0.5, 32767.0 / 32768}},
		// float32 has 24 bits: 2147483647/2^31 rounds to exactly 1.
		{"s32", decodeS32LE, le32(math.MinInt32, -1, 0, 1, 1<<30, math.MaxInt32, 1<<24),
			[]float32{-1, -1.0 / (1 << 31), 0, 1.0 / (1 << 31), 0.5, 1, 1.0 / 128}},
		{"float", decodeFloatLE, lef(-1, 0.25, 1, 3.5, float32(math.Inf(-1))),
			[]float32{-1, 0.25, 1, 3.5, float32(math.Inf(-1))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]float32, len(tc.want))
			tc.decode(got, tc.raw)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func le16(v ...int16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	}
	return b
}

func le32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func lef(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func TestParseALSADevice(t *testing.T) {
	tests := []struct {
		in, card string
		dev      int
		err      string
	}{
		{"hw:0", "0", 0, ""},
		{"hw:1,3", "1", 3, ""},
		{"hw:PCH,0", "PCH", 0, ""},
		{"hw:tegra-hda,7", "tegra-hda", 7, ""},
		{"hw:CARD=PCH,DEV=2", "PCH", 2, ""},
		{"hw:CARD=1", "1", 0, ""},
		{"plughw:1,0", "", 0, "plughw needs alsa-lib"},
		{"default", "", 0, "want hw:CARD,DEV"},
		{"hw:", "", 0, "want hw:CARD,DEV"},
		{"hw:0,0,1", "", 0, "want hw:CARD,DEV"},
		{"hw:0,x", "", 0, "want hw:CARD,DEV"},
		{"hw:a b,0", "", 0, "want hw:CARD,DEV"},
		{"/dev/snd/pcmC0D0c", "", 0, "want hw:CARD,DEV"},
		{"hw:99999999999999999999,0", "", 0, "bad card index"},
	}
	for _, tc := range tests {
		card, dev, err := ParseALSADevice(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || card != tc.card || dev != tc.dev {
			t.Errorf("%q = %q, %d, %v; want %q, %d", tc.in, card, dev, err, tc.card, tc.dev)
		}
	}
	if _, _, err := ParseALSADevice("plughw:0"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("plughw: %v is not ErrUnsupported", err)
	}
}

const testCards = ` 0 [PCH            ]: HDA-Intel - HDA Intel PCH
                      HDA Intel PCH at 0xf7f10000 irq 32
 1 [tegrasndt19xmob]: tegra-snd-t19x- - tegra-snd-t19x-mobile-rt565x
                      tegra-snd-t19x-mobile-rt565x
`

func TestParseALSACards(t *testing.T) {
	got := parseALSACards(testCards)
	want := []alsaCard{{0, "PCH", "HDA-Intel - HDA Intel PCH"}, {1, "tegrasndt19xmob", "tegra-snd-t19x- - tegra-snd-t19x-mobile-rt565x"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func FuzzParseALSADevice(f *testing.F) {
	for _, s := range []string{"hw:0", "hw:1,3", "hw:CARD=PCH,DEV=2", "plughw:0", "hw:,", "hw:0,0,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		card, dev, err := ParseALSADevice(s)
		if err == nil && (card == "" || dev < 0 || !strings.HasPrefix(s, "hw:")) {
			t.Errorf("%q accepted as card %q dev %d", s, card, dev)
		}
	})
}

func FuzzParseALSACards(f *testing.F) {
	f.Add(testCards)
	f.Add(" 7 [x]: y\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range parseALSACards(s) {
			if c.index < 0 {
				t.Errorf("negative index in %+v", c)
			}
		}
	})
}

// fakePCM implements pcmDev: a device supporting S16_LE and S32_LE, 1..2
// channels (1..maxCh when set), 8..48 kHz, that replays a script of READI
// results.
type fakePCM struct {
	maxCh  uint32
	ch     int // channels set by HW_PARAMS
	calls  []string
	reads  []fakeRead
	next   int16 // next sample value written
	polls  int
	closed bool
	// hwErr fails HW_PARAMS when set.
	hwErr syscall.Errno
}

// fakeRead is one READI outcome: an errno, or up to frames frames.
type fakeRead struct {
	errno  syscall.Errno
	frames int
}

func (f *fakePCM) ioctl(req uintptr, arg unsafe.Pointer) syscall.Errno {
	switch req {
	case ioctlHWRefine:
		f.calls = append(f.calls, "refine")
		p := (*hwParams)(arg)
		p.masks[hwAccess].only(accessRWInterleaved)
		p.masks[hwFormat].only(2)
		p.masks[hwFormat].bits[0] |= 1 << 10
		p.intervals[hwChannels-hwFirstInterval] = sndInterval{min: 1, max: max(2, f.maxCh), flags: intervalInteger}
		p.intervals[hwRate-hwFirstInterval] = sndInterval{min: 8000, max: 48000}
		p.intervals[hwPeriodSize-hwFirstInterval] = sndInterval{min: 16, max: 4096}
		p.intervals[hwBufferSize-hwFirstInterval] = sndInterval{min: 32, max: 65536}
	case ioctlHWParams:
		f.calls = append(f.calls, "hw_params")
		if f.hwErr != 0 {
			return f.hwErr
		}
		p := (*hwParams)(arg)
		if p.masks[hwAccess] != (sndMask{bits: [8]uint32{1 << accessRWInterleaved}}) || p.masks[hwSubformat] != (sndMask{bits: [8]uint32{1}}) {
			return syscall.EINVAL
		}
		if p.interval(hwPeriodSize).max == ^uint32(0) {
			p.setInterval(hwPeriodSize, 64)
		}
		if p.interval(hwBufferSize).max == ^uint32(0) {
			p.setInterval(hwBufferSize, 1024)
		}
		p.rateNum, p.rateDen = p.interval(hwRate).min, 1
		f.ch = int(p.interval(hwChannels).min)
	case ioctlPrepare:
		f.calls = append(f.calls, "prepare")
	case ioctlStart:
		f.calls = append(f.calls, "start")
	case ioctlDrop:
		f.calls = append(f.calls, "drop")
	case ioctlReadIFrames:
		x := (*sndXferi)(arg)
		if len(f.reads) == 0 {
			return syscall.EAGAIN
		}
		r := f.reads[0]
		f.reads = f.reads[1:]
		if r.errno != 0 {
			f.calls = append(f.calls, "read "+r.errno.Error())
			return r.errno
		}
		n := min(r.frames, int(x.frames))
		// S16 frames of the channels HW_PARAMS set: the tests only use
		// s16_le.
		buf := unsafe.Slice((*byte)(x.buf), 2*f.ch*int(x.frames))
		for i := 0; i < n*f.ch; i++ {
			binary.LittleEndian.PutUint16(buf[2*i:], uint16(f.next))
			f.next++
		}
		x.result = n
	default:
		return syscall.ENOTTY
	}
	return 0
}

func (f *fakePCM) poll(int) error { f.polls++; return nil }
func (f *fakePCM) close() error   { f.closed = true; return nil }

func openFake(t *testing.T, f *fakePCM, cfg ALSAConfig) (*ALSA, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cards"), []byte(testCards), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ProcRoot = dir
	return openALSA(cfg, func(path string) (pcmDev, error) {
		f.calls = append(f.calls, "open "+filepath.Base(path))
		return f, nil
	})
}

var stereo = ALSAConfig{Device: "hw:tegrasndt19xmob,0", Format: ALSAFormatS16LE, Channels: 2, Complex: true, SampleRate: 48000}

func TestALSAOpen(t *testing.T) {
	f := &fakePCM{}
	d, err := openFake(t, f, stereo)
	if err != nil {
		t.Fatal(err)
	}
	if d.Device() != "hw:1,0" || d.Info() != (Info{SampleRate: 48000, Complex: true, NumChannels: 1}) || d.PeriodSize() != 64 || d.BufferSize() != 1024 {
		t.Errorf("device %s info %+v period %d buffer %d", d.Device(), d.Info(), d.PeriodSize(), d.BufferSize())
	}
	if err := d.Close(); err != nil || !f.closed {
		t.Errorf("close: %v, closed %t", err, f.closed)
	}
	if want := []string{"open pcmC1D0c", "refine", "hw_params", "prepare", "start", "drop"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if _, err := d.Read(context.Background(), make([]float32, 2)); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
}

func TestALSAOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*ALSAConfig)
		pcm  fakePCM
		want string
		is   error
	}{
		{"format", func(c *ALSAConfig) { c.Format = ALSAFormatFloatLE }, fakePCM{}, "does not support format FLOAT_LE (supported: S16_LE, S32_LE)", ErrUnsupported},
		{"channels", func(c *ALSAConfig) { c.Channels = 9 }, fakePCM{}, "want 1..8", nil},
		{"odd complex", func(c *ALSAConfig) { c.Channels = 3 }, fakePCM{}, "cannot be paired as I,Q", nil},
		{"rate", func(c *ALSAConfig) { c.SampleRate = 96000 }, fakePCM{}, "does not support 96000 Hz (supported: 8000..48000 Hz)", ErrUnsupported},
		{"card", func(c *ALSAConfig) { c.Device = "hw:USB,0" }, fakePCM{}, `no sound card with id "USB"`, nil},
		{"periods", func(c *ALSAConfig) { c.PeriodSize, c.BufferSize = 256, 256 }, fakePCM{}, "at least two periods", nil},
		{"hw_params", func(c *ALSAConfig) { c.PeriodSize = 100 }, fakePCM{hwErr: syscall.EINVAL}, "period 100, buffer auto frames): invalid argument (the device supports period sizes 16..4096", syscall.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stereo
			tc.cfg(&cfg)
			_, err := openFake(t, &tc.pcm, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, not %v", err, tc.is)
			}
			if tc.pcm.hwErr != 0 && !tc.pcm.closed {
				t.Error("device left open after failed setup")
			}
		})
	}
}

func TestALSAOpenMissingDevice(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenALSA(ALSAConfig{Device: "hw:3,0", Format: ALSAFormatS16LE, Channels: 1, SampleRate: 8000, DevRoot: dir})
	if err == nil || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}

func TestALSARead(t *testing.T) {
	epipe := fakeRead{errno: syscall.EPIPE}
	tests := []struct {
		name     string
		reads    []fakeRead
		frames   int
		want     []int16 // sample values
		overruns uint64
		polls    int
		restarts int
		err      error
	}{
		{"whole", []fakeRead{{frames: 8}}, 8, seq(0, 16), 0, 0, 0, nil},
		{"partial reads", []fakeRead{{frames: 3}, {frames: 5}}, 8, seq(0, 16), 0, 0, 0, nil},
		{"again then data", []fakeRead{{errno: syscall.EAGAIN}, {frames: 4}}, 4, seq(0, 8), 0, 1, 0, nil},
		{"interrupted", []fakeRead{{errno: syscall.EINTR}, {frames: 4}}, 4, seq(0, 8), 0, 0, 0, nil},
		{"overrun", []fakeRead{{frames: 2}, epipe, {frames: 2}}, 4, seq(0, 8), 1, 0, 1, nil},
		{"two overruns", []fakeRead{epipe, {frames: 1}, epipe, {frames: 3}}, 4, seq(0, 8), 2, 0, 2, nil},
		{"suspended", []fakeRead{{errno: errnoESTRPIPE}, {frames: 4}}, 4, seq(0, 8), 0, 0, 1, nil},
		{"unplugged", []fakeRead{{frames: 2}, {errno: syscall.ENODEV}}, 4, seq(0, 4), 0, 0, 0, ErrDeviceGone},
		{"io error", []fakeRead{{errno: syscall.EIO}}, 4, nil, 0, 0, 0, syscall.EIO},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePCM{reads: tc.reads}
			var seen []uint64
			cfg := stereo
			cfg.OnOverrun = func(total uint64) { seen = append(seen, total) }
			d, err := openFake(t, f, cfg)
			if err != nil {
				t.Fatal(err)
			}
			f.calls = nil
			dst := make([]float32, 2*tc.frames)
			n, err := d.Read(context.Background(), dst)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			want := make([]float32, len(tc.want))
			for i, v := range tc.want {
				want[i] = float32(v) / 32768
			}
			if !slices.Equal(dst[:n], want) {
				t.Errorf("got %v, want %v", dst[:n], want)
			}
			if d.Overruns() != tc.overruns || len(seen) != int(tc.overruns) {
				t.Errorf("overruns %d, reported %v, want %d", d.Overruns(), seen, tc.overruns)
			}
			for i, v := range seen {
				if v != uint64(i+1) {
					t.Errorf("report %d gave total %d", i, v)
				}
			}
			if f.polls != tc.polls {
				t.Errorf("polls %d, want %d", f.polls, tc.polls)
			}
			// Each recovery is PREPARE then START, right after the failed read.
			restarts := 0
			for i, c := range f.calls {
				if c == "prepare" {
					restarts++
					if i == 0 || !strings.HasPrefix(f.calls[i-1], "read ") || i+1 == len(f.calls) || f.calls[i+1] != "start" {
						t.Errorf("calls %q: prepare not between a failed read and start", f.calls)
					}
				}
			}
			if restarts != tc.restarts {
				t.Errorf("restarts %d, want %d (calls %q)", restarts, tc.restarts, f.calls)
			}
			if tc.err != nil {
				if _, err2 := d.Read(context.Background(), dst); !errors.Is(err2, tc.err) {
					t.Errorf("error not sticky: %v", err2)
				}
			}
		})
	}
}

func seq(from, n int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(from + i)
	}
	return s
}

// TestALSAChannels reads 4 and 8 channels (real, or 8 paired as 4 I,Q
// channels): frames come interleaved as the device wrote them, each
// channel's samples in its own place.
func TestALSAChannels(t *testing.T) {
	for _, tc := range []struct {
		channels int
		complex  bool
		info     Info
	}{
		{4, false, Info{SampleRate: 48000, NumChannels: 4}},
		{8, false, Info{SampleRate: 48000, NumChannels: 8}},
		{8, true, Info{SampleRate: 48000, Complex: true, NumChannels: 4}},
	} {
		t.Run(fmt.Sprintf("%d/complex=%t", tc.channels, tc.complex), func(t *testing.T) {
			f := &fakePCM{maxCh: 8, reads: []fakeRead{{frames: 5}, {frames: 11}}}
			cfg := ALSAConfig{Device: "hw:1,0", Format: ALSAFormatS16LE, Channels: tc.channels, Complex: tc.complex, SampleRate: 48000}
			d, err := openFake(t, f, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d.Info() != tc.info || f.ch != tc.channels {
				t.Fatalf("Info %+v (device set to %d channels), want %+v", d.Info(), f.ch, tc.info)
			}
			const frames = 16
			dst := make([]float32, frames*tc.channels)
			if n, err := d.Read(context.Background(), dst); err != nil || n != len(dst) {
				t.Fatalf("read %d, %v", n, err)
			}
			for fr := range frames {
				for c := range tc.channels {
					if got, want := dst[fr*tc.channels+c], float32(fr*tc.channels+c)/32768; got != want {
						t.Fatalf("frame %d channel %d = %g, want %g", fr, c, got, want)
					}
				}
			}
		})
	}
}

func TestALSAReadCancel(t *testing.T) {
	f := &fakePCM{} // no data: every read is EAGAIN
	d, err := openFake(t, f, stereo)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Read(ctx, make([]float32, 2)); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if _, err := d.Read(context.Background(), make([]float32, 3)); !errors.Is(err, ErrDstLength) {
		t.Errorf("odd dst: %v", err)
	}
}

// TestALSADevice captures from a real sound card when there is one.
func TestALSADevice(t *testing.T) {
	devs, _ := filepath.Glob("/dev/snd/pcmC*D*c")
	if len(devs) == 0 {
		t.Skip("no ALSA capture device (/dev/snd/pcmC*D*c): skipping the real-device test")
	}
	var card, dev int
	if _, err := fmt.Sscanf(filepath.Base(devs[0]), "pcmC%dD%dc", &card, &dev); err != nil {
		t.Fatal(err)
	}
	d, err := OpenALSA(ALSAConfig{Device: fmt.Sprintf("hw:%d,%d", card, dev), Format: ALSAFormatS16LE, Channels: 2, SampleRate: 48000})
	if err != nil {
		t.Skipf("%s cannot capture S16_LE stereo at 48 kHz here: %v", devs[0], err)
	}
	defer d.Close()
	dst := make([]float32, 2*4800)
	n, err := d.Read(context.Background(), dst)
	if err != nil || n != len(dst) {
		t.Fatalf("read %d of %d: %v", n, len(dst), err)
	}
	for _, v := range dst {
		if v < -1 || v >= 1 {
			t.Fatalf("sample %g outside [-1, 1)", v)
		}
	}
	t.Logf("%s: period %d, buffer %d frames, %d overruns", d.Device(), d.PeriodSize(), d.BufferSize(), d.Overruns())
}

func BenchmarkALSARead(b *testing.B) {
	f := &fakePCM{}
	cfg := stereo
	cfg.Device = "hw:1,0"
	d, err := openALSA(cfg, func(string) (pcmDev, error) { return f, nil })
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 2*256)
	reads := make([]fakeRead, 4)
	b.SetBytes(int64(len(dst) * 2))
	b.ReportAllocs()
	for b.Loop() {
		for i := range reads {
			reads[i] = fakeRead{frames: 64}
		}
		f.reads = reads
		if _, err := d.Read(context.Background(), dst); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleParseALSADevice() {
	card, dev, err := ParseALSADevice("hw:CARD=PCH,DEV=0")
	fmt.Println(card, dev, err)
	_, _, err = ParseALSADevice("plughw:1,0")
	fmt.Println(errors.Is(err, ErrUnsupported))
	// Output:
	// PCH 0 <nil>
	// true
}
