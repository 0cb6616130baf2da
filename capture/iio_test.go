package capture_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// elem is one scan element of a fake IIO device.
type elem struct {
	name  string // voltage0
	typ   string // le:s12/16>>4
	index int
	en    bool // initial in_<name>_en
}

// fakeIIO is an IIO device in a temporary directory: a sysfs tree with the
// attributes the driver core creates, and a dev directory whose
// "iio:deviceN" entry stands in for the character device.
type fakeIIO struct {
	sysfs, dev string
	dir        string // sysfs device directory
	chardev    string
}

// newFakeIIO creates iio:device<n> named name; the buffer starts enabled (as
// a previous run could leave it) so that OpenIIO must disable it.
func newFakeIIO(t *testing.T, root string, n int, name string, elems []elem) *fakeIIO {
	t.Helper()
	dev := fmt.Sprintf("iio:device%d", n)
	f := &fakeIIO{sysfs: filepath.Join(root, "sys"), dev: filepath.Join(root, "dev")}
	f.dir = filepath.Join(f.sysfs, dev)
	f.chardev = filepath.Join(f.dev, dev)
	for _, d := range []string{filepath.Join(f.dir, "scan_elements"), filepath.Join(f.dir, "buffer"), f.dev} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.set(t, "name", name)
	f.set(t, "buffer/enable", "1")
	f.set(t, "buffer/length", "2")
	f.set(t, "sampling_frequency", "1000")
	for _, e := range elems {
		en := "0"
		if e.en {
			en = "1"
		}
		f.set(t, "scan_elements/in_"+e.name+"_en", en)
		f.set(t, "scan_elements/in_"+e.name+"_type", e.typ)
		f.set(t, "scan_elements/in_"+e.name+"_index", fmt.Sprint(e.index))
	}
	return f
}

func (f *fakeIIO) set(t *testing.T, rel, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, rel), []byte(value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeIIO) attr(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// data makes the character device a regular file holding b.
func (f *fakeIIO) data(t *testing.T, b []byte) {
	t.Helper()
	if err := os.WriteFile(f.chardev, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeIIO) config(channels ...string) capture.IIOConfig {
	return capture.IIOConfig{SysfsRoot: f.sysfs, DevRoot: f.dev, Device: "iio:device0", Channels: channels}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// twoVoltages is the usual test device: two 12-bit channels in 16-bit
// words, like the ADS1015, and a timestamp left enabled.
var twoVoltages = []elem{
	{name: "voltage0", typ: "le:s12/16>>4", index: 0},
	{name: "voltage1", typ: "le:s12/16>>4", index: 1},
	{name: "timestamp", typ: "le:s64/64>>0", index: 2, en: true},
}

func TestParseIIOType(t *testing.T) {
	valid := []struct {
		in   string
		want capture.ChannelType
	}{
		{"le:s12/16>>4", capture.ChannelType{Signed: true, Bits: 12, StorageBits: 16, Shift: 4, Repeat: 1}},
		{"be:u24/32>>0", capture.ChannelType{BigEndian: true, Bits: 24, StorageBits: 32, Repeat: 1}},
		{"le:s16/16>>0", capture.ChannelType{Signed: true, Bits: 16, StorageBits: 16, Repeat: 1}},
		{"le:u8/8>>0", capture.ChannelType{Bits: 8, StorageBits: 8, Repeat: 1}},
		{"be:s24/32>>8", capture.ChannelType{BigEndian: true, Signed: true, Bits: 24, StorageBits: 32, Shift: 8, Repeat: 1}},
		{"le:s64/64>>0", capture.ChannelType{Signed: true, Bits: 64, StorageBits: 64, Repeat: 1}},
		{"le:s16/16X2>>0", capture.ChannelType{Signed: true, Bits: 16, StorageBits: 16, Repeat: 2}},
		{"le:u1/8>>7", capture.ChannelType{Bits: 1, StorageBits: 8, Shift: 7, Repeat: 1}},
	}
	for _, tc := range valid {
		got, err := capture.ParseIIOType(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.in, got, tc.want)
		}
		if s := got.String(); s != tc.in {
			t.Errorf("%s: String() = %q", tc.in, s)
		}
	}
	invalid := []struct{ in, msg string }{
		{"", "endianness"},
		{"xe:s12/16>>4", "endianness"},
		{"LE:s12/16>>4", "endianness"},
		{"le:", "missing sign"},
		{"le:f32/32>>0", "sign must be s or u"},
		{"le:s12>>4", "missing '/'"},
		{"le:s12/16", "missing '>>SHIFT'"},
		{"le:s12/16>4", "missing '>>SHIFT'"},
		{"le:s/16>>0", "bits:"},
		{"le:s+12/16>>0", "bits:"},
		{"le:s12/ 16>>0", "storage bits:"},
		{"le:s12/16>>", "shift:"},
		{"le:s12/16>>-1", "shift:"},
		{"le:s12/24>>0", "storage bits must be 8, 16, 32 or 64"},
		{"le:s12/0>>0", "storage bits must be 8, 16, 32 or 64"},
		{"le:s17/16>>0", "bits must be in 1..16"},
		{"le:u0/8>>0", "bits must be in 1..8"},
		{"le:s12/16>>5", "shift 5 + bits 12 exceeds the 16 storage bits"},
		{"le:s16/16X0>>0", "repeat must be >= 1"},
		{"le:s16/16X>>0", "repeat:"},
		{"le:s12/16>>4\n", "shift:"},
		{"le:s99999/16>>0", "bits:"},
	}
	for _, tc := range invalid {
		_, err := capture.ParseIIOType(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, capture.ErrFormat) {
			t.Errorf("%q: got %v, want an ErrFormat containing %q", tc.in, err, tc.msg)
		}
	}
}

func TestIIOTypeDecode(t *testing.T) {
	cases := []struct {
		typ   string
		bytes string // hex, storage order
		want  int64
		norm  float32
	}{
		// 12 bits in the top of a 16-bit word: the low nibble is dropped.
		{"le:s12/16>>4", "f0 7f", 2047, 2047.0 / 2048},
		{"le:s12/16>>4", "ff 7f", 2047, 2047.0 / 2048},
		{"le:s12/16>>4", "f0 ff", -1, -1.0 / 2048},
		{"le:s12/16>>4", "00 80", -2048, -1},
		{"le:s12/16>>4", "10 00", 1, 1.0 / 2048},
		// Unshifted: the garbage top nibble is masked off before sign extension.
		{"le:s12/16>>0", "ff f7", 2047, 2047.0 / 2048},
		{"le:s12/16>>0", "00 f8", -2048, -1},
		{"be:s12/16>>4", "7f f0", 2047, 2047.0 / 2048},
		{"be:s12/16>>4", "80 00", -2048, -1},
		{"le:u12/16>>2", "fc 3f", 4095, 4095.0/2048 - 1},
		{"le:u12/16>>2", "00 20", 2048, 0},
		{"le:s16/16>>0", "00 80", -32768, -1},
		{"le:s16/16>>0", "ff 7f", 32767, 32767.0 / 32768},
		{"be:s16/16>>0", "80 00", -32768, -1},
		{"le:u16/16>>0", "00 00", 0, -1},
		{"be:u24/32>>0", "00 12 34 56", 0x123456, 0x123456/float32(1<<23) - 1},
		{"be:u24/32>>0", "ff 80 00 00", 0x800000, 0},
		{"le:u24/32>>0", "56 34 12 ff", 0x123456, 0x123456/float32(1<<23) - 1},
		{"be:s24/32>>8", "80 00 00 ab", -8388608, -1},
		{"be:s24/32>>8", "ff ff ff 00", -1, -1.0 / (1 << 23)},
		{"le:s24/32>>8", "00 00 00 40", 0x400000, 0.5},
		{"le:s32/32>>0", "00 00 00 80", math.MinInt32, -1},
		{"be:s32/32>>0", "c0 00 00 00", -(1 << 30), -0.5},
		{"le:u8/8>>0", "80", 128, 0},
		{"le:u8/8>>0", "00", 0, -1},
		{"le:u8/8>>0", "ff", 255, 255.0/128 - 1},
		{"le:s8/8>>0", "ff", -1, -1.0 / 128},
		{"be:s8/8>>0", "80", -128, -1},
		{"le:u1/8>>7", "80", 1, 0},
		{"le:u4/8>>2", "ff", 15, 15.0/8 - 1},
		{"le:s4/8>>2", "20", -8, -1},
		{"le:s64/64>>0", "fb ff ff ff ff ff ff ff", -5, -5.0 / (1 << 63)},
		{"be:s64/64>>0", "40 00 00 00 00 00 00 00", 1 << 62, 0.5},
		{"le:u64/64>>0", "00 00 00 00 00 00 00 80", math.MinInt64, 0}, // 2^63 wraps in int64
		{"le:s48/64>>16", "00 00 00 00 00 00 00 80", -(1 << 47), -1},
	}
	for _, tc := range cases {
		typ, err := capture.ParseIIOType(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		b := unhex(t, tc.bytes)
		got, err := typ.Decode(b)
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.bytes, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s %s: Decode = %d (%#x), want %d", tc.typ, tc.bytes, got, got, tc.want)
		}
		if n := typ.Normalize(got); n != tc.norm {
			t.Errorf("%s %s: Normalize = %v, want %v", tc.typ, tc.bytes, n, tc.norm)
		}
	}
}

func TestIIOTypeDecodeErrors(t *testing.T) {
	typ, _ := capture.ParseIIOType("le:s24/32>>0")
	if _, err := typ.Decode([]byte{1, 2, 3}); !errors.Is(err, capture.ErrTruncated) {
		t.Errorf("short input: got %v, want ErrTruncated", err)
	}
	for _, bad := range []capture.ChannelType{
		{Bits: 12, StorageBits: 12},
		{Bits: 0, StorageBits: 16},
		{Bits: 16, StorageBits: 16, Shift: 1},
		{Bits: 8, StorageBits: 16, Shift: -1},
	} {
		if _, err := bad.Decode(make([]byte, 8)); !errors.Is(err, capture.ErrFormat) {
			t.Errorf("%+v: got %v, want ErrFormat", bad, err)
		}
	}
}

func TestOpenIIOConfiguresDevice(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "ads1015", twoVoltages)
	f.data(t, nil)
	cfg := f.config("voltage1")
	cfg.SampleRate = 3300
	cfg.BufferLength = 4096
	d, err := capture.OpenIIO(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"buffer/enable":                 "1",
		"buffer/length":                 "4096",
		"sampling_frequency":            "3300",
		"scan_elements/in_voltage0_en":  "0",
		"scan_elements/in_voltage1_en":  "1",
		"scan_elements/in_timestamp_en": "0", // every other element is disabled
	} {
		if got := f.attr(t, rel); got != want {
			t.Errorf("after OpenIIO: %s = %q, want %q", rel, got, want)
		}
	}
	if got := d.Info(); got != (capture.Info{SampleRate: 3300, NumChannels: 1}) {
		t.Errorf("Info = %+v", got)
	}
	if d.ScanBytes() != 2 || d.Device() != "iio:device0" {
		t.Errorf("ScanBytes %d, Device %q", d.ScanBytes(), d.Device())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.attr(t, "buffer/enable"); got != "0" {
		t.Errorf("after Close: buffer/enable = %q, want 0", got)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := d.Read(context.Background(), make([]float32, 2)); !errors.Is(err, capture.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// TestOpenIIOOrder checks the ABI's order: the buffer is disabled before any
// other write, configured while disabled, enabled last, and only then is the
// character device opened; Close disables it again.
func TestOpenIIOOrder(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "ads1015", twoVoltages)
	f.data(t, nil)
	cfg := f.config("voltage1", "voltage0")
	cfg.SampleRate = 1600
	cfg.BufferLength = 512
	var events []string
	d, err := capture.OpenIIOTraced(cfg, func(e string) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"write buffer/enable 0",
		"write scan_elements/in_timestamp_en 0",
		"write scan_elements/in_voltage1_en 1",
		"write scan_elements/in_voltage0_en 1",
		"write buffer/length 512",
		"write sampling_frequency 1600",
		"write buffer/enable 1",
		"open " + f.chardev,
		"write buffer/enable 0",
		"close " + f.chardev,
	}
	if !slices.Equal(events, want) {
		t.Errorf("sysfs operations:\n got %q\nwant %q", events, want)
	}
}

// TestIIOLayout checks the kernel's scan layout rule (index order, natural
// alignment, padding to the largest element) and the I/Q order.
func TestIIOLayout(t *testing.T) {
	cases := []struct {
		name     string
		elems    []elem
		channels []string
		scan     int
		data     string // hex, one or more scans
		want     []float32
	}{
		{"one s16", []elem{{name: "voltage0", typ: "le:s16/16>>0", index: 0}, {name: "timestamp", typ: "le:s64/64>>0", index: 1, en: true}},
			[]string{"voltage0"}, 2, "0040 00c0", []float32{0.5, -0.5}},
		{"I/Q s16", []elem{{name: "voltage0", typ: "le:s16/16>>0", index: 0}, {name: "voltage1", typ: "le:s16/16>>0", index: 1}},
			[]string{"voltage0", "voltage1"}, 4, "0040 00c0 0020 0000", []float32{0.5, -0.5, 0.25, 0}},
		{"Q before I in the scan", []elem{{name: "voltage0", typ: "le:s16/16>>0", index: 0}, {name: "voltage1", typ: "le:s16/16>>0", index: 1}},
			[]string{"voltage1", "voltage0"}, 4, "0040 00c0", []float32{-0.5, 0.5}},
		{"u8 then s16 aligned to 2", []elem{{name: "voltage0", typ: "le:u8/8>>0", index: 0}, {name: "voltage1", typ: "le:s16/16>>0", index: 1}},
			[]string{"voltage0", "voltage1"}, 4, "c0ff 0040", []float32{0.5, 0.5}},
		{"s16 then u8 padded to 2", []elem{{name: "voltage0", typ: "le:s16/16>>0", index: 0}, {name: "voltage1", typ: "le:u8/8>>0", index: 1}},
			[]string{"voltage0", "voltage1"}, 4, "00c0 40ff 0040 c0ee", []float32{-0.5, -0.5, 0.5, 0.5}},
		{"s32 then s16 padded to 4", []elem{{name: "voltage0", typ: "le:s32/32>>0", index: 0}, {name: "voltage1", typ: "be:s12/16>>4", index: 1}},
			[]string{"voltage0", "voltage1"}, 8, "00000040 4000 ffff", []float32{0.5, 0.5}},
		{"indices not contiguous, names out of order", []elem{
			{name: "voltage3", typ: "be:s24/32>>8", index: 7}, {name: "voltage2", typ: "le:u8/8>>0", index: 2},
			{name: "voltage5", typ: "le:s16/16>>0", index: 5, en: true}},
			[]string{"voltage3", "voltage2"}, 8, "c0aaaaaa c0000000", []float32{-0.5, 0.5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeIIO(t, t.TempDir(), 0, "adc", tc.elems)
			f.data(t, unhex(t, tc.data))
			cfg := f.config(tc.channels...)
			cfg.Complex = len(tc.channels) == 2
			d, err := capture.OpenIIO(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.ScanBytes() != tc.scan {
				t.Errorf("ScanBytes = %d, want %d", d.ScanBytes(), tc.scan)
			}
			if d.Info().Complex != (len(tc.channels) == 2) || d.Info().NumChannels != 1 {
				t.Errorf("Info = %+v", d.Info())
			}
			got := make([]float32, len(tc.want)+2*len(tc.channels))
			n, err := d.Read(context.Background(), got)
			if !errors.Is(err, capture.ErrDeviceGone) || errors.Is(err, capture.ErrTruncated) {
				t.Errorf("err = %v, want ErrDeviceGone at end of file, not ErrTruncated", err)
			}
			if !equal(got[:n], tc.want) {
				t.Errorf("got %v, want %v", got[:n], tc.want)
			}
		})
	}
}

func TestIIODeviceLookup(t *testing.T) {
	root := t.TempDir()
	a := newFakeIIO(t, root, 0, "ads1015", twoVoltages)
	newFakeIIO(t, root, 1, "ina3221", twoVoltages)
	b := newFakeIIO(t, root, 2, "ina3221", twoVoltages)
	newFakeIIO(t, root, 3, "ads1015x", twoVoltages)
	for _, dev := range []string{"iio:device0", "iio:device1", "iio:device2", "iio:device3"} {
		if err := os.WriteFile(filepath.Join(a.dev, dev), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(dev string) (*capture.IIO, error) {
		return capture.OpenIIO(capture.IIOConfig{SysfsRoot: a.sysfs, DevRoot: a.dev, Device: dev, Channels: []string{"voltage0"}})
	}
	for dev, dir := range map[string]string{"ads1015": "iio:device0", "iio:device2": "iio:device2", "ads1015x": "iio:device3"} {
		d, err := open(dev)
		if err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		if d.Device() != dir {
			t.Errorf("%s: opened %s, want %s", dev, d.Device(), dir)
		}
		d.Close()
	}
	if got := b.attr(t, "buffer/enable"); got != "0" {
		t.Errorf("iio:device2 buffer/enable = %q after Close", got)
	}
	for dev, msg := range map[string]string{
		"ina3221":     `2 devices are named "ina3221"`,
		"nope":        `no device "nope" in ` + a.sysfs + " (available: iio:device0 (ads1015), iio:device1 (ina3221), iio:device2 (ina3221), iio:device3 (ads1015x))",
		"iio:device9": `no device "iio:device9"`,
		"../device0":  "not a path",
		"":            "no device given",
	} {
		if _, err := open(dev); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: got %v, want %q", dev, err, msg)
		}
	}
}

func TestOpenIIOErrors(t *testing.T) {
	cases := []struct {
		name  string
		elems []elem
		setup func(t *testing.T, f *fakeIIO)
		cfg   func(c *capture.IIOConfig)
		msg   string
		is    error
		early bool // rejected before the device is touched
	}{
		{name: "missing channel", cfg: func(c *capture.IIOConfig) { c.Channels = []string{"voltage7"} },
			msg: `no scan element "voltage7" (available: timestamp, voltage0, voltage1)`},
		{name: "three channels paired", cfg: func(c *capture.IIOConfig) {
			c.Channels = []string{"voltage0", "voltage1", "timestamp"}
			c.Complex = true
		},
			early: true, msg: "3 channels cannot be paired as I,Q"},
		{name: "no channels", cfg: func(c *capture.IIOConfig) { c.Channels = nil }, early: true, msg: "0 channels given"},
		{name: "duplicate channel", cfg: func(c *capture.IIOConfig) { c.Channels = []string{"voltage0", "voltage0"} }, early: true, msg: `"voltage0" given twice`},
		{name: "sysfs file name as channel", cfg: func(c *capture.IIOConfig) { c.Channels = []string{"in_voltage0_en"} }, early: true, msg: "without in_ and _en"},
		{name: "bad channel name", cfg: func(c *capture.IIOConfig) { c.Channels = []string{"../x"} }, early: true, msg: "not a scan element name"},
		{name: "negative rate", cfg: func(c *capture.IIOConfig) { c.SampleRate = -1 }, early: true, msg: "sample rate -1"},
		{name: "negative length", cfg: func(c *capture.IIOConfig) { c.BufferLength = -1 }, early: true, msg: "buffer length -1"},
		{name: "bad type", elems: []elem{{name: "voltage0", typ: "le:s12/24>>0"}}, msg: "voltage0: capture: iio type", is: capture.ErrFormat},
		{name: "repeat", elems: []elem{{name: "voltage0", typ: "le:s16/16X2>>0"}}, msg: "repeated elements are not supported", is: capture.ErrUnsupported},
		{name: "bad index", elems: []elem{{name: "voltage0", typ: "le:s16/16>>0", index: -1}}, msg: `bad scan index "-1"`, is: capture.ErrFormat},
		{name: "shared index", elems: []elem{{name: "voltage0", typ: "le:s16/16>>0"}, {name: "voltage1", typ: "le:s16/16>>0"}},
			cfg: func(c *capture.IIOConfig) { c.Channels = []string{"voltage0", "voltage1"} }, msg: "share index 0", is: capture.ErrFormat},
		{name: "no rate attribute and no rate", setup: func(t *testing.T, f *fakeIIO) { os.Remove(filepath.Join(f.dir, "sampling_frequency")) },
			msg: "no sampling_frequency attribute; give the sample rate"},
		{name: "bad rate attribute", setup: func(t *testing.T, f *fakeIIO) { f.set(t, "sampling_frequency", "fast") },
			msg: `sampling_frequency reads "fast"`, is: capture.ErrFormat},
		{name: "no buffer support", setup: func(t *testing.T, f *fakeIIO) { os.RemoveAll(filepath.Join(f.dir, "buffer")) },
			msg: "does not support buffered capture", is: capture.ErrUnsupported},
		{name: "no length attribute", setup: func(t *testing.T, f *fakeIIO) { os.Remove(filepath.Join(f.dir, "buffer", "length")) },
			cfg: func(c *capture.IIOConfig) { c.BufferLength = 64 }, msg: "set buffer length", is: os.ErrNotExist},
		{name: "no character device", setup: func(t *testing.T, f *fakeIIO) { os.Remove(f.chardev) },
			msg: "open character device", is: os.ErrNotExist},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			elems := tc.elems
			if elems == nil {
				elems = twoVoltages
			}
			f := newFakeIIO(t, t.TempDir(), 0, "adc", elems)
			f.data(t, nil)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			cfg := f.config("voltage0")
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			d, err := capture.OpenIIO(cfg)
			if err == nil {
				d.Close()
				t.Fatal("no error")
			}
			if d != nil {
				t.Error("device returned with the error")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %q, want it to contain %q", err, tc.msg)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("got %v, want errors.Is %v", err, tc.is)
			}
			if _, serr := os.Stat(filepath.Join(f.dir, "buffer")); serr == nil {
				want := "0" // disabled first, never enabled
				if tc.early {
					want = "1" // as the fake starts: not touched
				}
				if got := f.attr(t, "buffer/enable"); got != want {
					t.Errorf("buffer/enable = %q after a failed open, want %s", got, want)
				}
			}
		})
	}
}

func TestIIOSampleRate(t *testing.T) {
	cases := []struct {
		name  string
		attr  string // where the device has its rate; "" = nowhere
		value string // its current content
		rate  float64
		want  float64
	}{
		{"keep device rate", "sampling_frequency", "860", 0, 860},
		{"set device rate", "sampling_frequency", "860", 128, 128},
		{"driver rounds", "sampling_frequency", "860.000000", 0, 860},
		{"per channel type", "in_voltage_sampling_frequency", "2400", 1e6, 1e6},
		{"per channel", "in_voltage0_sampling_frequency", "2400", 0, 2400},
		{"trigger clocked", "", "", 48000, 48000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
			f.data(t, nil)
			os.Remove(filepath.Join(f.dir, "sampling_frequency"))
			if tc.attr != "" {
				f.set(t, tc.attr, tc.value)
			}
			cfg := f.config("voltage0")
			cfg.SampleRate = tc.rate
			d, err := capture.OpenIIO(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := d.Info().SampleRate; got != tc.want {
				t.Errorf("rate %g, want %g", got, tc.want)
			}
			if tc.rate > 0 && tc.attr != "" {
				if got := f.attr(t, tc.attr); got != fmt.Sprint(tc.rate) && got != fmt.Sprintf("%.0f", tc.rate) {
					t.Errorf("%s = %q, want %g", tc.attr, got, tc.rate)
				}
			}
		})
	}
}

// TestIIORead decodes many scans across block boundaries: every value must
// come out once, in order, whatever the block size.
func TestIIORead(t *testing.T) {
	const scans = 40000 // more than the internal buffer holds
	var data []byte
	var want []float32
	for i := range scans {
		i0 := int16(i%4096-2048) << 4
		q0 := int16(2047-i%4096) << 4
		data = append(data, byte(i0)|0x0f, byte(uint16(i0)>>8), byte(q0), byte(uint16(q0)>>8))
		want = append(want, float32(i%4096-2048)/2048, float32(2047-i%4096)/2048)
	}
	for _, block := range []int{1, 7, 256, 65536} {
		f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
		f.data(t, data)
		d, err := capture.OpenIIO(f.config("voltage0", "voltage1"))
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		buf := make([]float32, 2*block)
		for {
			n, err := d.Read(context.Background(), buf)
			got = append(got, buf[:n]...)
			if err != nil {
				if !errors.Is(err, capture.ErrDeviceGone) {
					t.Fatalf("block %d: %v", block, err)
				}
				break
			}
		}
		if !equal(got, want) {
			t.Errorf("block %d: %d values, want %d (or values differ)", block, len(got), len(want))
		}
		if _, err := d.Read(context.Background(), buf); !errors.Is(err, capture.ErrDeviceGone) {
			t.Errorf("block %d: Read after the end: %v, want the same error again", block, err)
		}
		if _, err := d.Read(context.Background(), make([]float32, 3)); !errors.Is(err, capture.ErrDstLength) {
			t.Errorf("odd dst: %v", err)
		}
		d.Close()
	}
}

// TestIIOTruncatedFile: the device ends inside a scan.
func TestIIOTruncatedFile(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
	f.data(t, unhex(t, "1000 2000 3000 4000 50"))
	d, err := capture.OpenIIO(f.config("voltage0", "voltage1"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]float32, 16)
	n, err := d.Read(context.Background(), buf)
	if want := []float32{1.0 / 2048, 2.0 / 2048, 3.0 / 2048, 4.0 / 2048}; !equal(buf[:n], want) {
		t.Errorf("got %v, want %v", buf[:n], want)
	}
	if !errors.Is(err, capture.ErrTruncated) || !errors.Is(err, capture.ErrDeviceGone) || errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want ErrTruncated and ErrDeviceGone, not io.EOF", err)
	}
	for _, s := range []string{"iio: iio:device0 disappeared after 2 scans", "end of file on " + f.chardev, "the last 1 byte(s) are not a whole 4-byte scan"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not say %q", err, s)
		}
	}
}

// TestIIOVanishesMidScan uses a FIFO as the character device: the writer
// checks that the buffer was enabled and configured before the device was
// opened, streams scans, and dies in the middle of one.
func TestIIOVanishesMidScan(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
	if err := syscall.Mkfifo(f.chardev, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	seen := make(chan string, 1)
	go func() {
		w, err := os.OpenFile(f.chardev, os.O_WRONLY, 0) // returns once OpenIIO opens it
		if err != nil {
			seen <- err.Error()
			return
		}
		defer w.Close()
		state := []string{}
		for _, rel := range []string{"buffer/enable", "scan_elements/in_voltage0_en", "scan_elements/in_voltage1_en", "scan_elements/in_timestamp_en", "buffer/length"} {
			b, _ := os.ReadFile(filepath.Join(f.dir, rel))
			state = append(state, rel+"="+strings.TrimSpace(string(b)))
		}
		seen <- strings.Join(state, " ")
		w.Write([]byte{0x10, 0, 0x20, 0})    // scan 1
		w.Write([]byte{0x30, 0, 0x40, 0, 5}) // scan 2 and one byte of scan 3
	}()
	cfg := f.config("voltage0", "voltage1")
	cfg.BufferLength = 64
	d, err := capture.OpenIIO(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, want := <-seen, "buffer/enable=1 scan_elements/in_voltage0_en=1 scan_elements/in_voltage1_en=1 scan_elements/in_timestamp_en=0 buffer/length=64"; got != want {
		t.Errorf("when the character device was opened:\n got %s\nwant %s", got, want)
	}
	var got []float32
	buf := make([]float32, 2)
	for {
		n, err := d.Read(context.Background(), buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if !errors.Is(err, capture.ErrDeviceGone) || !errors.Is(err, capture.ErrTruncated) ||
				!strings.Contains(err.Error(), "iio: iio:device0 disappeared after 2 scans") {
				t.Errorf("err = %v", err)
			}
			break
		}
	}
	if want := []float32{1.0 / 2048, 2.0 / 2048, 3.0 / 2048, 4.0 / 2048}; !equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestIIOReadCancel: cancelling the context wakes a Read that is blocked on
// a live device with no data (it would hang forever otherwise).
func TestIIOReadCancel(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
	if err := syscall.Mkfifo(f.chardev, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	go func() {
		w, err := os.OpenFile(f.chardev, os.O_WRONLY, 0)
		if err != nil {
			cancel()
			return
		}
		defer w.Close()
		w.Write([]byte{0x10, 0}) // one scan, then silence
		cancel()
		<-release // keep the device open: no EOF
	}()
	defer close(release)
	d, err := capture.OpenIIO(f.config("voltage0"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]float32, 8)
	n, err := d.Read(ctx, buf)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > 1 || (n == 1 && buf[0] != 1.0/2048) {
		t.Errorf("n = %d (%v)", n, buf[:n])
	}
	// A fresh context reads on: the deadline the cancellation set is cleared.
	if n == 0 {
		if n, err = d.Read(context.Background(), buf[:1]); n != 1 || err != nil || buf[0] != 1.0/2048 {
			t.Errorf("after cancel: n=%d err=%v v=%v", n, err, buf[0])
		}
	}
}

func TestIIOReadAllocs(t *testing.T) {
	f := newFakeIIO(t, t.TempDir(), 0, "adc", twoVoltages)
	f.data(t, make([]byte, 4<<20))
	d, err := capture.OpenIIO(f.config("voltage0", "voltage1"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	buf := make([]float32, 2*1024)
	d.Read(ctx, buf) // registers the context watch once
	if a := testing.AllocsPerRun(100, func() {
		if _, err := d.Read(ctx, buf); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Read allocates %v times per call", a)
	}
}

func BenchmarkIIORead(b *testing.B) {
	dir := b.TempDir()
	sys := filepath.Join(dir, "sys", "iio:device0")
	dev := filepath.Join(dir, "dev")
	for _, d := range []string{filepath.Join(sys, "scan_elements"), filepath.Join(sys, "buffer"), dev} {
		os.MkdirAll(d, 0o755)
	}
	files := map[string]string{
		"name": "adc", "buffer/enable": "0", "buffer/length": "2", "sampling_frequency": "1000",
		"scan_elements/in_voltage0_en": "0", "scan_elements/in_voltage0_type": "le:s12/16>>4", "scan_elements/in_voltage0_index": "0",
		"scan_elements/in_voltage1_en": "0", "scan_elements/in_voltage1_type": "le:s12/16>>4", "scan_elements/in_voltage1_index": "1",
	}
	for rel, v := range files {
		os.WriteFile(filepath.Join(sys, rel), []byte(v), 0o644)
	}
	const block = 4096
	os.WriteFile(filepath.Join(dev, "iio:device0"), make([]byte, 4*block*256), 0o644) // the end-of-file error allocates, once per 256 reads
	open := func() *capture.IIO {
		d, err := capture.OpenIIO(capture.IIOConfig{SysfsRoot: filepath.Dir(sys), DevRoot: dev, Device: "adc", Channels: []string{"voltage0", "voltage1"}})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	d := open()
	buf := make([]float32, 2*block)
	ctx := context.Background()
	b.SetBytes(4 * block)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Read(ctx, buf); err != nil {
			b.StopTimer()
			d.Close()
			d = open()
			b.StartTimer()
		}
	}
	d.Close()
}

func FuzzIIOType(f *testing.F) {
	for _, s := range []string{"le:s12/16>>4", "be:u24/32>>0", "le:s16/16>>0", "le:s64/64>>0", "le:u16/16X2>>0", "be:s1/8>>7", "le:s12/16>>5", ""} {
		f.Add(s, []byte{0x80, 0xff, 0x01, 0x7f, 0, 0x55, 0xaa, 0xff})
	}
	f.Fuzz(func(t *testing.T, s string, b []byte) {
		typ, err := capture.ParseIIOType(s)
		if err != nil {
			if typ != (capture.ChannelType{}) {
				t.Fatal("type with error")
			}
			return
		}
		back, err := capture.ParseIIOType(typ.String())
		if err != nil || back != typ {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, typ, typ.String(), back, err)
		}
		v, err := typ.Decode(b)
		if len(b) < typ.StorageBytes() {
			if !errors.Is(err, capture.ErrTruncated) {
				t.Fatalf("short input: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if typ.Bits < 64 {
			lo, hi := int64(0), int64(1)<<typ.Bits-1
			if typ.Signed {
				lo, hi = -(int64(1) << (typ.Bits - 1)), int64(1)<<(typ.Bits-1)-1
			}
			if v < lo || v > hi {
				t.Fatalf("%s: %d outside [%d, %d]", typ, v, lo, hi)
			}
		}
		if x := typ.Normalize(v); !(x >= -1 && x <= 1) {
			t.Fatalf("%s: Normalize(%d) = %v", typ, v, x)
		}
	})
}

func ExampleParseIIOType() {
	typ, err := capture.ParseIIOType("le:s12/16>>4") // a 12-bit ADC, left-justified
	if err != nil {
		panic(err)
	}
	v, _ := typ.Decode([]byte{0xf0, 0xff}) // 0xfff0: -1 in the top 12 bits
	fmt.Println(typ.Bits, typ.StorageBytes(), v, typ.Normalize(v)*2048)
	// Output: 12 2 -1 -1
}
