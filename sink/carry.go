package sink

import (
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/stage"
)

// Carry fills m from what the source knows (src, may be nil) as the
// stage chain c changes it: core:sample_rate is c's output rate and the
// input rate is kept for gap times; core:num_channels is c's output's; core:author,
// core:hw and core:description are kept (the description, when the source
// has one, before m's own); core:frequency is the source's centre less
// the chain's shift (shifting by f moves a component at baseband offset b
// to b + f, and its RF frequency does not change, so the centre that
// baseband 0 stands for moves by −f); core:datetime and the source's
// namespaced global fields are kept; the source's further capture
// segments (a SigMF recording's captures[1:]) are kept, each with its
// frequency moved likewise and its datetime, starting at the output
// sample its first input sample maps to; annotations are kept with their
// indices mapped through every decimation and resampling (input index n
// becomes output index c.Count(n), the first output at or after it).
func (m *SigMFMeta) Carry(src *capture.Meta, c stage.Chain) {
	m.SampleRate = c.OutRate()
	m.InputRate = c.SampleRate
	m.Channels = c.OutChannels()
	shift := c.Shift()
	m.FrequencyHz = -shift
	m.OutputIndex = func(n uint64) uint64 { return uint64(c.Count(int64(n))) }
	if src == nil {
		return
	}
	if src.HasFrequency {
		m.FrequencyHz += src.FrequencyHz
		m.HasFrequency = true
	}
	m.Author, m.HW = src.Author, src.HW
	if src.Description != "" {
		if m.Description != "" {
			m.Description = src.Description + " (" + m.Description + ")"
		} else {
			m.Description = src.Description
		}
	}
	m.Datetime = src.Datetime
	for _, c := range src.Captures {
		m.Captures = append(m.Captures, SigMFCapture{InputStart: c.SampleStart,
			FrequencyHz: c.FrequencyHz - shift, HasFrequency: c.HasFrequency, Datetime: c.Datetime})
	}
	m.Annotations = src.Annotations
	m.Extensions = src.Extensions
	if len(src.Global) > 0 && m.Extra == nil {
		m.Extra = make(map[string]any, len(src.Global))
	}
	for k, v := range src.Global {
		m.Extra[k] = v
	}
}
