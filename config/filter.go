package config

import (
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/filter"
)

// ErrNoDesign is returned by FilterSpec when the filter is not a design.
var ErrNoDesign = errors.New("config: filter has no design")

// Spec returns the filter.Spec for this design at sampleRate.
func (d *Design) Spec(sampleRate float64) filter.Spec {
	return filter.Spec{
		Type:       d.Type,
		SampleRate: sampleRate,
		CutoffHz:   d.CutoffHz,
		LowHz:      d.LowHz,
		HighHz:     d.HighHz,
		NumTaps:    d.NumTaps,
		Window:     d.Window,
		KaiserBeta: d.KaiserBeta,

		TransitionHz:  d.TransitionHz,
		AttenuationDB: d.AttenuationDB,
	}
}

// FilterSpec returns the filter.Spec of filter.design at sampleRate (the
// source's rate, known only after opening wav and sigmf files), or
// ErrNoDesign when the taps are given inline or in a file.
func (c *Config) FilterSpec(sampleRate float64) (filter.Spec, error) {
	if c.Filter.Design == nil {
		return filter.Spec{}, ErrNoDesign
	}
	return c.Filter.Design.Spec(sampleRate), nil
}

// Taps returns the FIR coefficients: the inline taps, the taps file's
// contents, or the designed filter at sampleRate. Errors name the config
// file and line of the filter key.
func (c *Config) Taps(sampleRate float64) ([]float32, error) {
	if len(c.Stages) > 0 {
		return nil, c.wrap("stages", errors.New("config: the filter is a stages list; use Chain"))
	}
	return c.tapsOf(&c.Filter, "filter", sampleRate)
}

// tapsOf returns the taps of the filter f written at path, designed at
// sampleRate when f is a design.
func (c *Config) tapsOf(f *Filter, path string, sampleRate float64) ([]float32, error) {
	switch {
	case f.Design != nil:
		taps, err := filter.Design(f.Design.Spec(sampleRate))
		if err != nil {
			return nil, c.wrap(path+".design", fmt.Errorf("design at sample rate %s: %w", num(sampleRate), err))
		}
		return taps, nil
	case f.TapsFile != "":
		taps, err := filter.LoadTaps(f.TapsFile)
		if err != nil {
			return nil, c.wrap(path+".taps_file", err)
		}
		return taps, nil
	case len(f.Taps) > 0:
		return append([]float32(nil), f.Taps...), nil
	}
	return nil, c.wrap(path, errors.New("config: no taps, taps_file or design"))
}

func (c *Config) wrap(path string, err error) error {
	return &Error{File: c.name, Line: c.idx.lineOf(path), Field: path, Flag: c.origin[path], Msg: err.Error(), Err: err}
}

// Wrap annotates err with the file and line of the field at path, e.g.
// Wrap("source.path", err) gives "configs/x.yaml:3: source.path: open ...".
// The result unwraps to err.
func (c *Config) Wrap(path string, err error) error {
	if err == nil {
		return nil
	}
	return c.wrap(path, err)
}
