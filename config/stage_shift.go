package config

import (
	"math"

	"github.com/sigproc/sigproc/stage"
)

// Shift is a frequency shift: x[n]·exp(j·2π·f·n/fs), phase 0 at the
// stream's first sample.
type Shift struct {
	// FrequencyHz is the shift; |f| <= the stage's sample rate / 2.
	// Required.
	FrequencyHz float64 `yaml:"frequency_hz"`
}

func (s *Shift) params() stage.Stage { return stage.Stage{FrequencyHz: s.FrequencyHz} }

func (s *Shift) filterOf() *Filter { return nil }

func (s *Shift) check(c *Config, path string, rate float64, add addFunc) bool {
	f := s.FrequencyHz
	fp := path + ".frequency_hz"
	switch {
	case !c.idx.has(fp) && f == 0 && c.idx != nil:
		add(fp, "required (the shift in Hz; |f| <= sample_rate/2)")
	case math.IsNaN(f) || math.IsInf(f, 0):
		add(fp, "must be a finite number, got %s", num(f))
	case rate > 0 && math.Abs(f) > rate/2:
		add(fp, "|%s| is above Nyquist (%s S/s / 2 = %s Hz at this stage)", num(f), num(rate), num(rate/2))
	}
	return true
}
