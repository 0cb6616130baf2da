package config

import (
	"slices"

	"github.com/sigproc/sigproc/stage"
)

// Select keeps some channels of its input, in the order listed: after a
// channelizer, the channels wanted of its M.
//
//	stages:
//	  - channelize: {channels: 64}
//	  - select: {channels: [3, 17, 40]}
type Select struct {
	// Channels are the input channels kept, counted from 0. Required.
	Channels []int `yaml:"channels"`
}

func (s *Select) params() stage.Stage { return stage.Stage{Keep: slices.Clone(s.Channels)} }

func (s *Select) filterOf() *Filter { return nil }

// check: the list's own rules are the kind's (stage's Check, reported
// when the chain is built, at the stage's line); only its absence is
// caught here, by name.
func (s *Select) check(c *Config, path string, _ float64, add addFunc) bool {
	if len(s.Channels) == 0 && c.idx != nil {
		add(path+".channels", "required: the channels kept, e.g. [3, 17, 40] (counted from 0)")
	}
	return true
}
