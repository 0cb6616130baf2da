package config

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/sigproc/sigproc/stage"
)

// Stage is one item of the stages list: exactly one of Shift, FIR and
// Resample.
//
//	stages:
//	  - shift: {frequency_hz: -250000}
//	  - fir: {design: {type: lowpass, cutoff_hz: 100000, num_taps: 129}, decimate: 8}
//	  - resample: {up: 3, down: 2, taps_file: taps.txt}
type Stage struct {
	// Shift moves the stream in frequency; a real stream becomes complex.
	Shift *Shift `yaml:"shift"`
	// FIR filters, then keeps every decimate-th output.
	FIR *FIRStage `yaml:"fir"`
	// Resample changes the rate by up/down (polyphase).
	Resample *Resample `yaml:"resample"`
}

// Shift is a frequency shift: x[n]·exp(j·2π·f·n/fs), phase 0 at the
// stream's first sample.
type Shift struct {
	// FrequencyHz is the shift; |f| <= the stage's sample rate / 2.
	// Required.
	FrequencyHz float64 `yaml:"frequency_hz"`
}

// FIRStage is a FIR filter (taps, taps_file or design, and method, as in
// filter:) that keeps every Decimate-th output: out[m] = Σ h[k]·x[m·M−k].
type FIRStage struct {
	Filter `yaml:",inline"`
	// Decimate is M, default 1 (no decimation).
	Decimate int `yaml:"decimate"`
}

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

// bySpec reports whether the design is by transition width and
// attenuation.
func (d *Design) bySpec() bool { return d.TransitionHz != 0 || d.AttenuationDB != 0 }

// filterAt is one filter of the config: the filter: section or a fir or
// resample stage, with its YAML path.
type filterAt struct {
	f    *Filter
	path string
	kind stage.Kind
}

// filters lists the filter: section (when written) and every fir and
// resample stage.
func (c *Config) filters() []filterAt {
	var out []filterAt
	if len(c.Stages) == 0 || c.filterGiven() {
		out = append(out, filterAt{&c.Filter, "filter", stage.KindFIR})
	}
	for i := range c.Stages {
		s := &c.Stages[i]
		if s.FIR != nil {
			out = append(out, filterAt{&s.FIR.Filter, fmt.Sprintf("stages[%d].fir", i), stage.KindFIR})
		}
		if s.Resample != nil {
			out = append(out, filterAt{&s.Resample.Filter, fmt.Sprintf("stages[%d].resample", i), stage.KindResample})
		}
	}
	return out
}

// filterGiven reports whether the filter: section was written.
func (c *Config) filterGiven() bool {
	f := &c.Filter
	return c.idx.has("filter") || f.Taps != nil || f.TapsFile != "" || f.Design != nil
}

// validateStages checks the stages list (or that filter: is given
// instead). rate and cplx are the source's, when known before opening it
// (rate 0 otherwise).
func (c *Config) validateStages(rate float64, errs *errorList, add addFunc, enum enumFunc) {
	given := c.idx.has("stages") || c.Stages != nil
	switch {
	case given && c.filterGiven():
		add("stages", "give filter or stages, not both (filter: is shorthand for a single fir stage)")
		return
	case !given:
		c.validateFilter(&c.Filter, "filter", rate, stage.KindFIR, errs, add, enum)
		return
	case len(c.Stages) == 0:
		add("stages", "must not be empty: list shift, fir or resample stages")
		return
	}
	if c.idx != nil {
		// The decoder drops null items (a bare "-"), which would shift
		// the list against the file: report them and stop.
		nulls := false
		for i := 0; c.idx.has(fmt.Sprintf("stages[%d]", i)); i++ {
			p := fmt.Sprintf("stages[%d]", i)
			if _, ok := c.idx.null[p]; ok {
				add(p, "empty stage: give one of shift, fir or resample")
				nulls = true
			}
		}
		if nulls {
			return
		}
	}
	for i := range c.Stages {
		s := &c.Stages[i]
		p := fmt.Sprintf("stages[%d]", i)
		var kinds []string
		for _, k := range []struct {
			name string
			set  bool
		}{{"shift", s.Shift != nil}, {"fir", s.FIR != nil}, {"resample", s.Resample != nil}} {
			if k.set || c.idx.has(p+"."+k.name) {
				kinds = append(kinds, k.name)
			}
		}
		switch {
		case len(kinds) == 0:
			add(p, "empty stage: give one of shift, fir or resample")
			rate = 0
			continue
		case len(kinds) > 1:
			add(p+"."+kinds[1], "a stage has exactly one kind (found %s); list them as separate stages", strings.Join(kinds, " and "))
			rate = 0
			continue
		}
		k := kinds[0]
		switch {
		case k == "shift" && s.Shift == nil, k == "fir" && s.FIR == nil, k == "resample" && s.Resample == nil:
			add(p+"."+k, "must be a mapping (see the stages example in the README)")
			rate = 0
			continue
		}
		switch k {
		case "shift":
			f := s.Shift.FrequencyHz
			fp := p + ".shift.frequency_hz"
			switch {
			case !c.idx.has(fp) && f == 0 && c.idx != nil:
				add(fp, "required (the shift in Hz; |f| <= sample_rate/2)")
			case math.IsNaN(f) || math.IsInf(f, 0):
				add(fp, "must be a finite number, got %s", num(f))
			case rate > 0 && math.Abs(f) > rate/2:
				add(fp, "|%s| is above Nyquist (%s S/s / 2 = %s Hz at this stage)", num(f), num(rate), num(rate/2))
			}
		case "fir":
			if d := s.FIR.Decimate; d < 1 || d > stage.MaxFactor {
				add(p+".fir.decimate", "must be in 1..%d, got %d", stage.MaxFactor, d)
			}
			c.validateFilter(&s.FIR.Filter, p+".fir", rate, stage.KindFIR, errs, add, enum)
			if rate > 0 && s.FIR.Decimate >= 1 {
				rate /= float64(s.FIR.Decimate)
			}
		case "resample":
			r := s.Resample
			for _, f := range []struct {
				key string
				v   int
			}{{"up", r.Up}, {"down", r.Down}} {
				if f.v < 1 || f.v > stage.MaxFactor {
					add(p+".resample."+f.key, "must be in 1..%d, got %d", stage.MaxFactor, f.v)
				}
			}
			ok := r.Up >= 1 && r.Down >= 1
			designRate := 0.0
			if rate > 0 && ok {
				designRate = rate * float64(r.Up) // the taps run at the upsampled rate
			}
			c.validateFilter(&r.Filter, p+".resample", designRate, stage.KindResample, errs, add, enum)
			if rate > 0 && ok {
				rate = rate * float64(r.Up) / float64(r.Down)
			} else {
				rate = 0
			}
		}
	}
}

// hasShift reports whether a stage shifts (a real stream becomes complex).
func (c *Config) hasShift() bool {
	for _, s := range c.Stages {
		if s.Shift != nil {
			return true
		}
	}
	return false
}

// OutComplex reports whether the run's output is complex for a source that
// is (or is not) complex: a shift stage makes a real stream complex.
func (c *Config) OutComplex(sourceComplex bool) bool { return sourceComplex || c.hasShift() }

// Chain returns the stage chain the backends run, for a source at
// sampleRate (known once it is opened) that is or is not complex: the
// stages list, or the filter: shorthand as one fir stage. Taps files are
// read and designs computed here; designed resampling taps get a passband
// gain of up. Errors name the config file and line of the stage.
func (c *Config) Chain(sampleRate float64, complex bool) (stage.Chain, error) {
	ch := stage.Chain{SampleRate: sampleRate, Complex: complex}
	if len(c.Stages) == 0 {
		taps, err := c.tapsOf(&c.Filter, "filter", sampleRate)
		if err != nil {
			return ch, err
		}
		ch.Stages = []stage.Stage{{Kind: stage.KindFIR, Taps: taps, Decimate: 1, Method: c.Filter.Method}}
		return ch, c.chainErr(ch.Validate())
	}
	rate := sampleRate
	for i, s := range c.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		var st stage.Stage
		switch {
		case s.Shift != nil:
			st = stage.Stage{Kind: stage.KindShift, FrequencyHz: s.Shift.FrequencyHz}
		case s.FIR != nil:
			taps, err := c.tapsOf(&s.FIR.Filter, p+".fir", rate)
			if err != nil {
				return ch, err
			}
			st = stage.Stage{Kind: stage.KindFIR, Taps: taps, Decimate: max(1, s.FIR.Decimate), Method: s.FIR.Method}
		case s.Resample != nil:
			r := s.Resample
			taps, err := c.tapsOf(&r.Filter, p+".resample", rate*float64(r.Up))
			if err != nil {
				return ch, err
			}
			if r.Design != nil {
				for k := range taps {
					taps[k] *= float32(r.Up)
				}
			}
			st = stage.Stage{Kind: stage.KindResample, Taps: taps, Up: r.Up, Down: r.Down}
		default:
			return ch, c.wrap(p, errors.New("empty stage"))
		}
		ch.Stages = append(ch.Stages, st)
		rate = st.Rate(rate)
	}
	return ch, c.chainErr(ch.Validate())
}

// chainErr positions a stage.Chain error at its stage's line.
func (c *Config) chainErr(err error) error {
	var se *stage.StageError
	if !errors.As(err, &se) {
		if err != nil && len(c.Stages) == 0 {
			return c.wrap("filter", err)
		}
		if err != nil {
			return c.wrap("stages", err)
		}
		return nil
	}
	path := "filter"
	if len(c.Stages) > 0 {
		path = fmt.Sprintf("stages[%d]", se.Index)
		switch s := c.Stages[se.Index]; {
		case s.Shift != nil:
			path += ".shift"
		case s.FIR != nil:
			path += ".fir"
		case s.Resample != nil:
			path += ".resample"
		}
	}
	if se.Field != "" && se.Field != "taps" {
		path += "." + se.Field
	}
	return &Error{File: c.name, Line: c.idx.lineOf(path), Field: path, Msg: se.Msg, Err: err}
}

// FirstDesign returns the design the config's filter uses: filter.design,
// or the first fir or resample stage with a design, and the factor its
// taps' rate is the source rate times (the product of the decimations and
// resampling ratios before it, times up for a resampler), and the gain
// the run applies to the designed taps (up for a resampler, else 1). nil
// when no filter is designed.
func (c *Config) FirstDesign() (d *Design, scale, gain float64) {
	if len(c.Stages) == 0 {
		return c.Filter.Design, 1, 1
	}
	scale = 1.0
	for _, s := range c.Stages {
		switch {
		case s.FIR != nil:
			if s.FIR.Design != nil {
				return s.FIR.Design, scale, 1
			}
			scale /= float64(max(1, s.FIR.Decimate))
		case s.Resample != nil:
			if s.Resample.Design != nil {
				up := float64(max(1, s.Resample.Up))
				return s.Resample.Design, scale * up, up
			}
			scale *= float64(max(1, s.Resample.Up)) / float64(max(1, s.Resample.Down))
		}
	}
	return nil, 1, 1
}
