package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sigproc/sigproc/stage"
)

// MaxStageBodySize bounds a stage document ParseStage accepts: room for
// MaxRetune-sized tap lists written out in full.
const MaxStageBodySize = 1 << 20

// ParseStage parses one stage in the stages list's schema —
// {"fir": {"taps": [...]}}, {"fir": {"design": {...}}},
// {"shift": {"frequency_hz": ...}} — as JSON or YAML, as strictly as a
// config file, and returns it resolved for a stage whose input runs at
// rate S/s (designs are computed at that rate). name prefixes error
// messages (e.g. "request body"). Keys left out stay zero where the
// running stage's value applies: a fir's decimate and method (see
// stage.CheckRetune). taps_file is refused: a remote client must not name
// files on this machine.
func ParseStage(data []byte, name string, rate float64) (stage.Stage, error) {
	if len(data) > MaxStageBodySize {
		return stage.Stage{}, &Error{File: name, Msg: fmt.Sprintf("larger than %d bytes", MaxStageBodySize)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return stage.Stage{}, &Error{File: name, Msg: `empty: send a stage, e.g. {"fir": {"taps": [0.25, 0.5, 0.25]}} or {"shift": {"frequency_hz": 1000}}`}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return stage.Stage{}, yamlError(name, err, nil)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return stage.Stage{}, &Error{File: name, Msg: `must be a mapping such as {"fir": {"taps": [1]}}`}
	}
	var s Stage
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return stage.Stage{}, yamlError(name, err, nil)
	}
	var ierrs errorList
	checkIntegers(doc.Content[0], reflect.TypeOf(s), "", &Config{name: name}, &ierrs)
	if err := ierrs.err(); err != nil {
		return stage.Stage{}, err
	}
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"shift", s.Shift != nil}, {"fir", s.FIR != nil}, {"resample", s.Resample != nil}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) != 1 {
		return stage.Stage{}, &Error{File: name, Msg: fmt.Sprintf("want exactly one of shift, fir or resample, found %d (%s)", len(kinds), strings.Join(kinds, ", "))}
	}
	var f *Filter
	decimate, method := 0, ""
	switch {
	case s.FIR != nil:
		f, decimate, method = &s.FIR.Filter, s.FIR.Decimate, s.FIR.Method
		if decimate == 0 {
			s.FIR.Decimate = 1 // checked against the running stage later
		}
		if method == "" {
			s.FIR.Method = DefaultMethod
		}
	case s.Resample != nil:
		f = &s.Resample.Filter
	}
	if f != nil {
		if f.TapsFile != "" {
			return stage.Stage{}, &Error{File: name, Field: kinds[0] + ".taps_file", Msg: "not accepted here: send the taps themselves (taps) or a design"}
		}
		if d := f.Design; d != nil {
			if d.Window == "" {
				d.Window = DefaultWindow
			}
			if d.Window == "kaiser" && d.KaiserBeta == 0 {
				d.KaiserBeta = DefaultKaiserBeta
			}
		}
	}
	if s.Shift != nil && (math.IsNaN(s.Shift.FrequencyHz) || math.IsInf(s.Shift.FrequencyHz, 0)) {
		return stage.Stage{}, &Error{File: name, Field: "shift.frequency_hz", Msg: "must be a finite number"}
	}
	c := &Config{name: name, Stages: []Stage{s}}
	var errs errorList
	add := func(path, format string, args ...any) {
		errs.add(&Error{File: name, Field: strings.TrimPrefix(path, "stages[0]."), Msg: fmt.Sprintf(format, args...)})
	}
	enum := enumOf(add)
	c.validateStages(rate, &errs, add, enum)
	if err := errs.err(); err != nil {
		return stage.Stage{}, err
	}
	ch, err := c.Chain(rate, true)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.Field = strings.TrimPrefix(ce.Field, "stages[0].")
			ce.Field = strings.TrimPrefix(ce.Field, "stages[0]")
		}
		return stage.Stage{}, err
	}
	st := ch.Stages[0]
	if st.Kind == stage.KindFIR {
		st.Decimate, st.Method = decimate, method
	}
	return st, nil
}
