package config

import "github.com/sigproc/sigproc/stage"

// Resample is a polyphase rational resampler by Up/Down with the given
// taps (at the upsampled rate: taps, taps_file or design). Given taps are
// used as they are; designed ones get a passband gain of Up, which keeps
// the signal's amplitude.
type Resample struct {
	// Up is L >= 1, required.
	Up int `yaml:"up"`
	// Down is M >= 1, required.
	Down   int `yaml:"down"`
	Filter `yaml:",inline"`
}

func (r *Resample) params() stage.Stage { return stage.Stage{Up: r.Up, Down: r.Down} }

func (r *Resample) filterOf() *Filter { return &r.Filter }

func (r *Resample) check(_ *Config, path string, _ float64, add addFunc) bool {
	for _, f := range []struct {
		key string
		v   int
	}{{"up", r.Up}, {"down", r.Down}} {
		if f.v < 1 || f.v > stage.MaxFactor {
			add(path+"."+f.key, "must be in 1..%d, got %d", stage.MaxFactor, f.v)
		}
	}
	return r.Up >= 1 && r.Down >= 1
}

func (r *Resample) noMethod() string { return "it always runs its polyphase kernel" }
