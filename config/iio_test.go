package config

import (
	"slices"
	"strings"
	"testing"
)

// iioBase is a minimal valid iio config; bad cases edit it.
const iioBase = `source:
  type: iio
  device: iio:device0
  channels: [voltage0, voltage1]
  complex: true
filter:
  taps: [0.5, 0.5]
sink:
  type: null
`

func TestIIOParseGood(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c *Config)
	}{
		{"minimal complex", iioBase, func(t *testing.T, c *Config) {
			s := c.Source
			if s.Device != "iio:device0" || !slices.Equal(s.Channels.Names, []string{"voltage0", "voltage1"}) || s.SampleRate != 0 || s.BufferLength != 0 {
				t.Errorf("source = %+v", s)
			}
			if cplx, known := s.complexKnown(); !cplx || !known {
				t.Errorf("complexKnown = %t, %t; want complex", cplx, known)
			}
			if c.EffectiveOverrun() != OverrunDrop {
				t.Errorf("overrun = %s, want drop for a live device", c.EffectiveOverrun())
			}
			if f := c.Sink.FormatFor(true); f != FormatCF32 {
				t.Errorf("sink format %s", f)
			}
		}},
		{"all keys, real", strings.Replace(iioBase, "  channels: [voltage0, voltage1]\n  complex: true\n",
			"  channels: [voltage0]\n  sample_rate: 3300\n  buffer_length: 4096\n  sysfs_root: /tmp/sys\n  dev_root: /tmp/dev\n  num_samples: 100\n", 1) + "overrun: block\n",
			func(t *testing.T, c *Config) {
				s := c.Source
				if s.SampleRate != 3300 || s.BufferLength != 4096 || s.SysfsRoot != "/tmp/sys" || s.DevRoot != "/tmp/dev" || s.NumSamples != 100 {
					t.Errorf("source = %+v", s)
				}
				if cplx, known := s.complexKnown(); cplx || !known {
					t.Errorf("complexKnown = %t, %t; want real", cplx, known)
				}
				if c.EffectiveOverrun() != OverrunBlock {
					t.Errorf("overrun = %s, want the explicit block", c.EffectiveOverrun())
				}
			}},
		{"device by name, differential channel", strings.Replace(strings.Replace(iioBase, "iio:device0", "ads1015", 1), "[voltage0, voltage1]\n  complex: true", "[voltage0-voltage1]", 1),
			func(t *testing.T, c *Config) {
				if c.Source.Device != "ads1015" || c.Source.Channels.Names[0] != "voltage0-voltage1" {
					t.Errorf("source = %+v", c.Source)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "x.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestIIOParseErrors(t *testing.T) {
	src := func(lines string) string {
		return "source:\n  type: iio\n" + lines + "filter: {taps: [1]}\nsink: {type: null}\n"
	}
	tests := []struct {
		name string
		yaml string
		line int
		frag string
	}{
		{"no device", src("  channels: [voltage0]\n"), 1, "source.device: required for iio sources"},
		{"device path", src("  device: /sys/bus/iio/devices/iio:device0\n  channels: [voltage0]\n"), 3, "source.device: \"/sys/bus/iio/devices/iio:device0\": give iio:deviceN or the device's name, not a path"},
		{"no channels", src("  device: iio:device0\n"), 1, "source.channels: required for iio sources"},
		{"empty channels", src("  device: iio:device0\n  channels: []\n"), 4, "source.channels: required for iio sources"},
		{"three channels paired", src("  device: iio:device0\n  channels: [voltage0, voltage1, voltage2]\n  complex: true\n"), 5, "source.complex: pairs the channels as I,Q, so it needs an even number of them, got 3"},
		{"a count", src("  device: iio:device0\n  channels: 2\n"), 4, "source.channels: iio needs the scan elements by name"},
		{"sysfs name", src("  device: iio:device0\n  channels: [in_voltage0_en]\n"), 4, `source.channels[0]: "in_voltage0_en": give the scan element name without in_ and _en`},
		{"bad name", src("  device: iio:device0\n  channels: [voltage0, \"a b\"]\n"), 4, `source.channels[1]: "a b" is not a scan element name`},
		{"duplicate", src("  device: iio:device0\n  channels: [voltage0, voltage0]\n"), 4, `source.channels[1]: "voltage0" is given twice`},
		{"channels not a list", src("  device: iio:device0\n  channels: voltage0\n"), 4, "source.channels: want a number of channels (channels: 4) or, for iio, a list of scan elements"},
		{"zero rate", src("  device: iio:device0\n  channels: [voltage0]\n  sample_rate: 0\n"), 5, "source.sample_rate: must be > 0, got 0 (omit it to keep the device's rate)"},
		{"negative rate", src("  device: iio:device0\n  channels: [voltage0]\n  sample_rate: -1\n"), 5, "source.sample_rate: must be > 0, got -1"},
		{"zero buffer length", src("  device: iio:device0\n  channels: [voltage0]\n  buffer_length: 0\n"), 5, "source.buffer_length: must be > 0 scans, got 0"},
		{"fractional buffer length", src("  device: iio:device0\n  channels: [voltage0]\n  buffer_length: 1.5\n"), 5, "source.buffer_length: must be an integer"},
		{"relative sysfs root", src("  device: iio:device0\n  channels: [voltage0]\n  sysfs_root: sys\n"), 5, `source.sysfs_root: must be an absolute path, got "sys"`},
		{"empty dev root", src("  device: iio:device0\n  channels: [voltage0]\n  dev_root: \"\"\n"), 5, "source.dev_root: must not be empty"},
		{"paced", src("  device: iio:device0\n  channels: [voltage0]\n  paced: true\n"), 5, "source.paced: not used by source type iio (keys used: type, device, channels, complex, apply_scale, sample_rate, buffer_length, sysfs_root, dev_root, duration_s, num_samples)"},
		{"format", src("  device: iio:device0\n  channels: [voltage0]\n  format: ci16_le\n"), 5, "source.format: not used by source type iio"},
		{"complex", src("  device: iio:device0\n  channels: [voltage0]\n  complex: true\n"), 5, "source.complex: pairs the channels as I,Q, so it needs an even number of them, got 1"},
		{"path", src("  device: iio:device0\n  channels: [voltage0]\n  path: /dev/iio:device0\n"), 5, "source.path: not used by source type iio"},
		{"iio key on file source", "source:\n  type: file\n  path: x.wav\n  device: iio:device0\nfilter: {taps: [1]}\nsink: {type: null}\n", 4, "source.device: not used by source type file"},
		{"sink format mismatch", strings.Replace(iioBase, "type: null", "type: file\n  path: o\n  format: rf32_le", 1), 11, "sink.format: rf32_le does not match the complex source (use cf32_le)"},
		{"cutoff above nyquist", strings.Replace(strings.Replace(iioBase, "  channels: [voltage0, voltage1]\n  complex: true\n", "  channels: [voltage0]\n  sample_rate: 1000\n", 1),
			"  taps: [0.5, 0.5]\n", "  design: {type: lowpass, cutoff_hz: 600, num_taps: 11}\n", 1), 7, "filter.design.cutoff_hz: 600 must be below Nyquist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "x.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tt.frag)
			}
			prefix := "x.yaml: "
			if tt.line > 0 {
				prefix = "x.yaml:" + itoa(tt.line) + ": "
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.HasPrefix(first, prefix) {
				t.Errorf("error %q: want prefix %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q: want fragment %q", err, tt.frag)
			}
		})
	}
}

// TestIIOValidateOverrides covers what checkKeys cannot see: fields set in
// Go or from flags (--paced).
func TestIIOValidateOverrides(t *testing.T) {
	c, err := Parse([]byte(iioBase), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Source.Paced = true
	c.MarkOverride("source.paced", "--paced")
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--paced: source.paced: only synthetic sources can be paced") {
		t.Errorf("Validate = %v", err)
	}
	g := &Config{
		Source: Source{Type: SourceIIO, Device: "adc", Channels: Channels{Names: []string{"voltage0"}}, Complex: true, BufferLength: -1},
		Filter: Filter{Taps: []float32{1}},
		Sink:   Sink{Type: SinkNull},
	}
	g.SetDefaults()
	err = g.Validate()
	for _, frag := range []string{"source.complex: pairs the channels as I,Q, so it needs an even number of them, got 1", "source.buffer_length: must be > 0 scans, got -1"} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("Validate = %v, want %q", err, frag)
		}
	}
}
