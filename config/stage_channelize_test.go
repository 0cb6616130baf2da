package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

const channelizeBase = `source: {type: synthetic, sample_rate: 1.024e6, complex: true, signal: tone, frequency_hz: 48000}
stages:
  - shift: {frequency_hz: 1000}
  - channelize: {channels: 64, decimate: 32}
sink: {type: null}
`

// TestChannelizeEntry: decimate defaults to channels, and the prototype
// to filter.BankPrototype's of taps_per_channel (16 unless given);
// given taps are used as they are.
func TestChannelizeEntry(t *testing.T) {
	proto := func(m, t int) []float32 { p, _ := filter.BankPrototype(m, t); return p }
	for _, tt := range []struct {
		entry string
		m, d  int
		taps  []float32
	}{
		{"{channels: 64, decimate: 32}", 64, 32, proto(64, 16)},
		{"{channels: 64}", 64, 64, proto(64, 16)},
		{"{channels: 8, taps_per_channel: 5}", 8, 8, proto(8, 5)},
		{"{channels: 6, decimate: 3, taps: [1, 2, 3]}", 6, 3, []float32{1, 2, 3}},
	} {
		t.Run(tt.entry, func(t *testing.T) {
			c, err := Parse([]byte(strings.Replace(channelizeBase, "{channels: 64, decimate: 32}", tt.entry, 1)), "x.yaml")
			if err != nil {
				t.Fatal(err)
			}
			ch, err := c.Chain(1.024e6, true)
			if err != nil {
				t.Fatal(err)
			}
			s := ch.Stages[1]
			if s.Kind != stage.KindChannelize || s.Bank != tt.m || s.Decimate != tt.d || fmt.Sprint(s.Taps) != fmt.Sprint(tt.taps) {
				t.Errorf("stage %+v, want %d channels ÷%d with %d taps", s, tt.m, tt.d, len(tt.taps))
			}
			if ch.OutChannels() != tt.m || ch.OutRate() != 1.024e6/float64(tt.d) || !ch.OutComplex() {
				t.Errorf("chain out: %d channels at %g", ch.OutChannels(), ch.OutRate())
			}
		})
	}
}

// TestChannelizeErrors: each bad channelize entry fails at its line.
func TestChannelizeErrors(t *testing.T) {
	for _, tt := range []struct {
		name, entry, frag string
	}{
		{"no channels", "{decimate: 32}", "stages[1].channelize.channels: required"},
		{"one channel", "{channels: 1}", "stages[1].channelize.channels: must be in 2..4096, got 1"},
		{"too many", "{channels: 8192}", "stages[1].channelize.channels: must be in 2..4096, got 8192"},
		{"decimate not a divisor", "{channels: 64, decimate: 24}", "stages[1].channelize.decimate: must divide channels (64: critically sampled, 32: 2× oversampled), got 24"},
		{"decimate not a divisor of an odd count", "{channels: 15, decimate: 7}", "stages[1].channelize.decimate: must divide channels (15: critically sampled; an odd count's divisors: 1, 3, 5, 15), got 7"},
		{"decimate zero", "{channels: 64, decimate: 0}", "stages[1].channelize.decimate"},
		{"both prototypes", "{channels: 64, taps_per_channel: 8, taps: [1]}", "stages[1].channelize.taps_per_channel: give taps_per_channel (the default prototype) or taps, not both"},
		{"taps per channel zero", "{channels: 64, taps_per_channel: 0}", "stages[1].channelize.taps_per_channel"},
		{"taps per channel overflowing", "{channels: 4, taps_per_channel: 4611686018427387905}", "stages[1].channelize.taps_per_channel: must be in 1..262144 for 4 channels"},
		{"method", "{channels: 64, taps: [1], method: fft}", "stages[1].channelize.method: not used by channelize"},
		{"empty taps", "{channels: 64, taps: []}", "stages[1].channelize.taps: must not be empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(channelizeBase, "{channels: 64, decimate: 32}", tt.entry, 1)), "x.yaml")
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "x.yaml:4: ") || !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %v\nwant x.yaml:4: and %q", err, tt.frag)
			}
		})
	}
}

// TestChannelizeChainErrors: a channelizer takes one channel, and comes
// before the stages that run on each channel, which the chain reports at
// the stage's line.
func TestChannelizeChainErrors(t *testing.T) {
	after := channelizeBase[:strings.Index(channelizeBase, "sink:")] + "  - shift: {frequency_hz: 10}\n  - select: {channels: [1]}\nsink: {type: null}\n"
	c, err := Parse([]byte(after), "x.yaml")
	if err == nil {
		_, err = c.Chain(1.024e6, true)
	}
	if err == nil || !strings.Contains(err.Error(), "x.yaml:6: stages[3].select: select must come before the stages that run on each channel (stage 2 on)") {
		t.Errorf("a select after the stages per channel: %v", err)
	}
	c, err = Parse([]byte(channelizeBase), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chain(1.024e6, true)
	if err != nil {
		t.Fatal(err)
	}
	ch.Channels = 2
	if err := ch.Validate(); err == nil || !strings.Contains(err.Error(), "stage 1: channelize must be the first stage on a stream of 2 channels") {
		t.Errorf("two input channels: %v", err)
	}
	ch.Stages = ch.Stages[1:]
	if err := ch.Validate(); err == nil || !strings.Contains(err.Error(), "stage 0: channelize takes one input channel; the stream has 2") {
		t.Errorf("two input channels: %v", err)
	}
}
