package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

// Stage is one item of the stages list: exactly one of its fields, each
// the config entry of a stage kind, whose YAML key is the stage.Kind it
// builds (see stageEntry).
//
//	stages:
//	  - shift: {frequency_hz: -250000}
//	  - fir: {design: {type: lowpass, cutoff_hz: 100000, num_taps: 129}, decimate: 8}
//	  - resample: {up: 3, down: 2, taps_file: taps.txt}
//	  - channelize: {channels: 64, decimate: 32}
type Stage struct {
	// Shift moves the stream in frequency; a real stream becomes complex.
	Shift *Shift `yaml:"shift"`
	// FIR filters, then keeps every decimate-th output.
	FIR *FIRStage `yaml:"fir"`
	// Resample changes the rate by up/down (polyphase).
	Resample *Resample `yaml:"resample"`
	// Channelize splits the stream into channels (polyphase filter bank).
	Channelize *Channelize `yaml:"channelize"`
	// Select keeps some of the stream's channels.
	Select *Select `yaml:"select"`
}

// stageEntry is a stage kind's config entry: the type of its field in
// Stage (stage_shift.go, stage_fir.go, stage_resample.go,
// stage_channelize.go, stage_select.go). What is the same for every kind — which kind an
// item is, its taps, its rates, its errors' positions — is done here,
// asking the kind's stage.Def.
type stageEntry interface {
	// params returns the stage as the chain runs it, without its kind
	// and taps.
	params() stage.Stage
	// filterOf returns the entry's taps (taps, taps_file or design), nil
	// for a kind without taps.
	filterOf() *Filter
	// check reports the problems with the entry's own keys, the filter's
	// aside, for the entry written at path and an input at rate S/s (0
	// when not known), and whether its factors are usable to carry the
	// rate on to the next stage.
	check(c *Config, path string, rate float64, add addFunc) bool
}

// methodless is a stage entry whose filter takes no method key:
// noMethod says why.
type methodless interface{ noMethod() string }

// tapsDefaulter is a stage entry whose taps may be left out: defaultTaps
// are then the stage's, the design defaultSpec gives.
type tapsDefaulter interface {
	defaultTaps() ([]float32, error)
	defaultSpec() filter.Spec
}

// defaulter is a stage entry with defaults of its own, which SetDefaults
// fills for the entry written at path.
type defaulter interface{ setDefaults(c *Config, path string) }

// stageField is one field of Stage: a kind's key and its entry (nil when
// absent or null).
type stageField struct {
	key   string
	entry stageEntry
}

// fields lists Stage's kinds in the order of its fields.
func (s *Stage) fields() []stageField {
	v := reflect.ValueOf(s).Elem()
	out := make([]stageField, v.NumField())
	for i := range out {
		out[i].key, _, _ = strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if f := v.Field(i); !f.IsNil() {
			out[i].entry = f.Interface().(stageEntry)
		}
	}
	return out
}

// given returns the first kind given in s (nil entry when none), and the
// stage its entry describes, without taps.
func (s *Stage) given() (stageField, stage.Stage) {
	for _, f := range s.fields() {
		if f.entry != nil {
			st := f.entry.params()
			st.Kind = stage.Kind(f.key)
			return f, st
		}
	}
	return stageField{}, stage.Stage{}
}

// Filter returns the stage's taps (taps, taps_file or design): nil for a
// kind without taps, such as a shift, or an empty stage.
func (s *Stage) Filter() *Filter {
	if k, _ := s.given(); k.entry != nil {
		return k.entry.filterOf()
	}
	return nil
}

// kindList lists Stage's kinds for a message: "shift, fir, … or select".
func kindList() string {
	var keys []string
	for _, f := range (&Stage{}).fields() {
		keys = append(keys, f.key)
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// bySpec reports whether the design is by transition width and
// attenuation.
func (d *Design) bySpec() bool { return d.TransitionHz != 0 || d.AttenuationDB != 0 }

// filterAt is one filter of the config: the filter: section or a stage
// with taps, with its YAML path. noMethod is why its method key is not
// used, when it is not (then allowed lists the keys that are).
type filterAt struct {
	f        *Filter
	path     string
	noMethod string
	allowed  []string
}

// filters lists the filter: section (when written) and the filter of
// every stage that has one.
func (c *Config) filters() []filterAt {
	var out []filterAt
	if len(c.Stages) == 0 || c.filterGiven() {
		out = append(out, filterAt{f: &c.Filter, path: "filter"})
	}
	for i := range c.Stages {
		for _, k := range c.Stages[i].fields() {
			if k.entry == nil || k.entry.filterOf() == nil {
				continue
			}
			fa := filterAt{f: k.entry.filterOf(), path: fmt.Sprintf("stages[%d].%s", i, k.key)}
			if m, ok := k.entry.(methodless); ok {
				fa.noMethod = k.key + " (" + m.noMethod() + ")"
				fa.allowed = slices.DeleteFunc(yamlKeys(reflect.TypeOf(k.entry).Elem()), func(key string) bool { return key == "method" })
			}
			out = append(out, fa)
		}
	}
	return out
}

// defaultTaps reports whether the entry written at path takes its
// kind's default taps: it has them (tapsDefaulter) and none are given.
func (c *Config) defaultTaps(e stageEntry, path string) bool {
	_, ok := e.(tapsDefaulter)
	return ok && len(c.tapsGiven(e.filterOf(), path)) == 0
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
		c.validateFilter(&c.Filter, "filter", rate, true, errs, add, enum)
		return
	case len(c.Stages) == 0:
		add("stages", "must not be empty: list %s stages", kindList())
		return
	}
	if c.idx != nil {
		// The decoder drops null items (a bare "-"), which would shift
		// the list against the file: report them and stop.
		nulls := false
		for i := 0; c.idx.has(fmt.Sprintf("stages[%d]", i)); i++ {
			p := fmt.Sprintf("stages[%d]", i)
			if _, ok := c.idx.null[p]; ok {
				add(p, "empty stage: give one of %s", kindList())
				nulls = true
			}
		}
		if nulls {
			return
		}
	}
	for i := range c.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		var kinds []stageField
		for _, f := range c.Stages[i].fields() {
			if f.entry != nil || c.idx.has(p+"."+f.key) {
				kinds = append(kinds, f)
			}
		}
		switch {
		case len(kinds) == 0:
			add(p, "empty stage: give one of %s", kindList())
			rate = 0
			continue
		case len(kinds) > 1:
			var keys []string
			for _, k := range kinds {
				keys = append(keys, k.key)
			}
			add(p+"."+keys[1], "a stage has exactly one kind (found %s); list them as separate stages", strings.Join(keys, " and "))
			rate = 0
			continue
		}
		k := kinds[0]
		p += "." + k.key
		if k.entry == nil {
			add(p, "must be a mapping (see the stages example in the README)")
			rate = 0
			continue
		}
		st := k.entry.params()
		st.Kind = stage.Kind(k.key)
		ok := k.entry.check(c, p, rate, add) && rate > 0
		if f := k.entry.filterOf(); f != nil && !c.defaultTaps(k.entry, p) {
			tapRate := 0.0
			if ok {
				tapRate, _ = st.Def().Design(st, rate)
			}
			_, noMethod := k.entry.(methodless)
			c.validateFilter(f, p, tapRate, !noMethod, errs, add, enum)
		}
		if ok {
			rate = st.Rate(rate)
		} else {
			rate = 0
		}
	}
}

// OutComplex reports whether the run's output is complex for a source that
// is (or is not) complex: a shift stage makes a real stream complex.
func (c *Config) OutComplex(sourceComplex bool) bool {
	cp, _ := c.outComplex(sourceComplex)
	return cp
}

// outComplex is OutComplex, and the kind of the last stage that made the
// stream complex ("" for none).
func (c *Config) outComplex(cp bool) (bool, string) {
	by := ""
	for i := range c.Stages {
		if k, st := c.Stages[i].given(); k.entry != nil {
			if next := st.OutComplex(cp); next != cp {
				cp, by = next, k.key
			}
		}
	}
	return cp, by
}

// Chain returns the stage chain the backends run, for a source at
// sampleRate (known once it is opened) that is or is not complex: the
// stages list, or the filter: shorthand as one fir stage. Taps files are
// read and designs computed here, at the rate the stage's kind runs its
// taps at and with the gain it gives designed taps (stage.Def.Design:
// for a resampler, the upsampled rate and a gain of up). Errors name the
// config file and line of the stage. The source has one channel; see
// ChainOf.
func (c *Config) Chain(sampleRate float64, complex bool) (stage.Chain, error) {
	return c.ChainOf(sampleRate, complex, 1)
}

// ChainOf is Chain for a source of channels channels (0 means 1), which
// the chain's stages are checked against (a select's channels).
func (c *Config) ChainOf(sampleRate float64, complex bool, channels int) (stage.Chain, error) {
	ch := stage.Chain{SampleRate: sampleRate, Complex: complex, Channels: channels}
	if len(c.Stages) == 0 {
		taps, err := c.tapsOf(&c.Filter, "filter", sampleRate)
		if err != nil {
			return ch, err
		}
		ch.Stages = []stage.Stage{stage.NewFIR(taps, 1)}
		ch.Stages[0].Method = c.Filter.Method
		return ch, c.chainErr(ch.Validate())
	}
	rate := sampleRate
	for i := range c.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		k, st := c.Stages[i].given()
		if k.entry == nil {
			return ch, c.wrap(p, errors.New("empty stage"))
		}
		if d, ok := k.entry.(tapsDefaulter); ok && c.defaultTaps(k.entry, p+"."+k.key) {
			taps, err := d.defaultTaps()
			if err != nil {
				return ch, c.wrap(p+"."+k.key, err)
			}
			st.Taps = taps
		} else if f := k.entry.filterOf(); f != nil {
			tapRate, gain := st.Def().Design(st, rate)
			taps, err := c.tapsOf(f, p+"."+k.key, tapRate)
			if err != nil {
				return ch, err
			}
			if f.Design != nil && gain != 1 {
				for j := range taps {
					taps[j] *= float32(gain)
				}
			}
			st.Taps = taps
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
		if k, _ := c.Stages[se.Index].given(); k.entry != nil {
			path += "." + k.key
		}
	}
	if se.Field != "" && se.Field != "taps" {
		path += "." + se.Field
	}
	return &Error{File: c.name, Line: c.idx.lineOf(path), Field: path, Msg: se.Msg, Err: err}
}

// FirstDesign returns the design the config's filter uses: filter.design,
// or the first stage with a design, and the factor its taps' rate is the
// source rate times (the rate changes of the stages before it, times up
// for a resampler), and the gain the run applies to the designed taps (up
// for a resampler, else 1): both as the stage's kind says
// (stage.Def.Design). nil when no filter is designed.
func (c *Config) FirstDesign() (d *Design, scale, gain float64) {
	d, _, scale, gain = c.firstDesign()
	return d, scale, gain
}

// FirstPrototype returns the design of the default taps of the first
// stage that takes them (a channelizer's prototype, filter.BankSpec)
// when no stage before it has a design (FirstDesign), and the factor
// the stage's input rate is the source rate times.
func (c *Config) FirstPrototype() (spec filter.Spec, scale float64, ok bool) {
	_, p, scale, _ := c.firstDesign()
	if p == nil {
		return spec, 1, false
	}
	return *p, scale, true
}

// firstDesign is the first stage with a design or its kind's default
// taps (then d is nil), as FirstDesign describes it.
func (c *Config) firstDesign() (d *Design, proto *filter.Spec, scale, gain float64) {
	if len(c.Stages) == 0 {
		return c.Filter.Design, nil, 1, 1
	}
	scale = 1.0
	for i := range c.Stages {
		k, st := c.Stages[i].given()
		if k.entry == nil {
			continue
		}
		if f := k.entry.filterOf(); f != nil && f.Design != nil {
			scale, gain = st.Def().Design(st, scale)
			return f.Design, nil, scale, gain
		}
		if d, ok := k.entry.(tapsDefaulter); ok && c.defaultTaps(k.entry, fmt.Sprintf("stages[%d].%s", i, k.key)) {
			spec := d.defaultSpec()
			return nil, &spec, scale, 1
		}
		scale = st.Rate(scale)
	}
	return nil, nil, 1, 1
}
