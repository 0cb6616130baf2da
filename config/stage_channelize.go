package config

import (
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

// Channelize is a polyphase filter bank: the stream into Channels
// channels at the rate / Decimate, channel k centred at k·rate/Channels
// (k ≥ Channels/2 the negative frequencies). Its prototype is taps,
// taps_file or design (at the stage's input rate), or else the default
// one of TapsPerChannel taps per channel (filter.BankPrototype).
//
//	stages:
//	  - channelize: {channels: 64, decimate: 32, taps_per_channel: 16}
//
// or, with a prototype of one's own, {channels: 64, taps_file: proto.txt}.
type Channelize struct {
	// Channels is M, 2..4096. Required.
	Channels int `yaml:"channels"`
	// Decimate is D, a divisor of Channels; default Channels (critically
	// sampled). Channels/2 gives 2× oversampled, gapless channels.
	Decimate int `yaml:"decimate"`
	// TapsPerChannel sizes the default prototype; default 16. Not with
	// taps, taps_file or design.
	TapsPerChannel int `yaml:"taps_per_channel"`
	Filter         `yaml:",inline"`
}

func (ch *Channelize) params() stage.Stage {
	return stage.Stage{Bank: ch.Channels, Decimate: ch.Decimate}
}

func (ch *Channelize) filterOf() *Filter { return &ch.Filter }

func (ch *Channelize) noMethod() string { return "it always runs its polyphase filter bank" }

func (ch *Channelize) check(c *Config, path string, _ float64, add addFunc) bool {
	m, d := ch.Channels, ch.Decimate
	ok := true
	switch {
	case !c.idx.has(path+".channels") && c.idx != nil:
		add(path+".channels", "required (the channels M, 2..%d)", filter.MaxBankChannels)
		ok = false
	case m < 2 || m > filter.MaxBankChannels:
		add(path+".channels", "must be in 2..%d, got %d", filter.MaxBankChannels, m)
		ok = false
	case d < 1 || m%d != 0:
		add(path+".decimate", "must divide channels (%s), got %d", stage.DecimateChoices(m), d)
		ok = false
	}
	tp := path + ".taps_per_channel"
	if given := c.tapsGiven(&ch.Filter, path); len(given) > 0 && c.idx.has(tp) {
		add(tp, "give taps_per_channel (the default prototype) or %s, not both", given[0])
	} else if t := ch.TapsPerChannel; ok && (t < 1 || t > filter.MaxTaps/m) {
		add(tp, "must be in 1..%d for %d channels, got %d", filter.MaxTaps/m, m, t)
	}
	return ok
}

// setDefaults: decimate defaults to channels, taps_per_channel to 16.
func (ch *Channelize) setDefaults(c *Config, path string) {
	if ch.Decimate == 0 && !c.idx.has(path+".decimate") {
		ch.Decimate = ch.Channels
	}
	if ch.TapsPerChannel == 0 && !c.idx.has(path+".taps_per_channel") {
		ch.TapsPerChannel = filter.DefaultTapsPerChannel
	}
}

// defaultTaps is the prototype when no taps are given.
func (ch *Channelize) defaultTaps() ([]float32, error) {
	return filter.BankPrototype(ch.Channels, ch.TapsPerChannel)
}

// defaultSpec is its design.
func (ch *Channelize) defaultSpec() filter.Spec {
	return filter.BankSpec(ch.Channels, ch.TapsPerChannel)
}
