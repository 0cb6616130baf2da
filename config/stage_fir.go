package config

import "github.com/sigproc/sigproc/stage"

// FIRStage is a FIR filter (taps, taps_file or design, and method, as in
// filter:) that keeps every Decimate-th output: out[m] = Σ h[k]·x[m·M−k].
type FIRStage struct {
	Filter `yaml:",inline"`
	// Decimate is M, default 1 (no decimation).
	Decimate int `yaml:"decimate"`
}

func (f *FIRStage) params() stage.Stage {
	return stage.Stage{Decimate: max(1, f.Decimate), Method: f.Method}
}

func (f *FIRStage) filterOf() *Filter { return &f.Filter }

func (f *FIRStage) check(_ *Config, path string, _ float64, add addFunc) bool {
	if d := f.Decimate; d < 1 || d > stage.MaxFactor {
		add(path+".decimate", "must be in 1..%d, got %d", stage.MaxFactor, d)
	}
	return true // an unusable decimate leaves the rate as it is
}

// setDefaults: an absent decimate is 1.
func (f *FIRStage) setDefaults(c *Config, path string) {
	if f.Decimate == 0 && !c.idx.has(path+".decimate") {
		f.Decimate = 1
	}
}
