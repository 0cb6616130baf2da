package config

import (
	"strings"
	"testing"
)

// alsaBase is a minimal valid alsa config; bad cases edit it.
const alsaBase = `source:
  type: alsa
  device: hw:1,0
  format: s16_le
  channel_count: 2
  complex: true
  sample_rate: 48000
filter:
  taps: [0.5, 0.5]
sink:
  type: null
`

func TestALSAParse(t *testing.T) {
	c, err := Parse([]byte(alsaBase), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Source
	if s.Device != "hw:1,0" || s.Format != "s16_le" || s.ChannelCount != 2 || s.SampleRate != 48000 || s.PeriodSize != 0 {
		t.Errorf("source = %+v", s)
	}
	if cplx, known := s.complexKnown(); !cplx || !known {
		t.Errorf("complexKnown = %t, %t", cplx, known)
	}
	if c.EffectiveOverrun() != OverrunDrop {
		t.Errorf("overrun %s, want drop for a live device", c.EffectiveOverrun())
	}
	for _, dev := range []string{"hw:0", "hw:PCH,3", "hw:CARD=PCH,DEV=0"} {
		if _, err := Parse([]byte(strings.Replace(alsaBase, "hw:1,0", dev, 1)), "a.yaml"); err != nil {
			t.Errorf("%s: %v", dev, err)
		}
	}
	eight := strings.Replace(strings.Replace(alsaBase, "channel_count: 2", "channels: 8", 1), "complex: true", "complex: false", 1)
	if c, err := Parse([]byte(eight), "a.yaml"); err != nil || c.Source.knownChannels() != 8 {
		t.Errorf("8 real channels: %v", err)
	}
	ok := strings.Replace(alsaBase, "  sample_rate: 48000\n", "  sample_rate: 48000\n  period_size: 256\n  buffer_size: 1024\n  num_samples: 10\n", 1)
	if c, err := Parse([]byte(ok), "a.yaml"); err != nil || c.Source.PeriodSize != 256 || c.Source.BufferSize != 1024 {
		t.Errorf("period/buffer: %v", err)
	}
}

func TestALSAParseBad(t *testing.T) {
	tests := []struct{ name, from, to, want string }{
		{"no device", "  device: hw:1,0\n", "", "source.device: required for alsa sources"},
		{"plughw", "hw:1,0", "plughw:1,0", "plughw needs alsa-lib"},
		{"default", "hw:1,0", "default", "want hw:CARD,DEV"},
		{"no format", "  format: s16_le\n", "", "source.format: required for alsa sources"},
		{"raw format", "s16_le", "ri16_le", `"ri16_le" is not an alsa format (allowed: s16_le, s32_le, float_le)`},
		{"upper format", "s16_le", "S16_LE", "not an alsa format"},
		{"no channels", "  channel_count: 2\n", "", "source.channels: must be in 1..8 channels, got 0"},
		{"3 channels paired", "channel_count: 2", "channel_count: 3", "needs an even channel count, got 3"},
		{"9 channels", "channel_count: 2", "channels: 9", "source.channels: must be in 1..8 channels, got 9"},
		{"both spellings", "channel_count: 2", "channel_count: 2\n  channels: 2", "give channels or channel_count, not both"},
		{"old two channels unsaid", "  complex: true\n", "", "source.channel_count: 2 channels: add complex: true for I,Q"},
		{"iio channels", "channel_count: 2", "channels: [voltage0]", "source.channels: a list of names is for iio scan elements"},
		{"no rate", "  sample_rate: 48000\n", "", "source.sample_rate: required for alsa sources"},
		{"fractional rate", "48000", "44100.5", "whole number of frames"},
		{"zero period", "  sample_rate: 48000\n", "  sample_rate: 48000\n  period_size: 0\n", "source.period_size: must be > 0"},
		{"small buffer", "  sample_rate: 48000\n", "  sample_rate: 48000\n  period_size: 512\n  buffer_size: 512\n", "at least two periods (1024 frames)"},
		{"paced", "  sample_rate: 48000\n", "  sample_rate: 48000\n  paced: true\n", "source.paced: not used by source type alsa"},
		{"buffer_length", "  sample_rate: 48000\n", "  sample_rate: 48000\n  buffer_length: 4\n", "not used by source type alsa"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(alsaBase, tc.from, tc.to, 1)
			_, err := Parse([]byte(y), "a.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
