package capture

import (
	"encoding/json"
	"sync/atomic"
	"time"
)

// Meta is what a source knows about its signal beyond the rate and layout:
// a SigMF recording's descriptive fields and annotations, a live source's
// capture time, an IIO device's scales. A SigMF sink carries it to its
// output (see sink.SigMFMeta).
type Meta struct {
	Author      string // core:author
	Description string // core:description
	HW          string // core:hw
	// FrequencyHz is the centre frequency (captures[0] core:frequency);
	// HasFrequency says it was given.
	FrequencyHz  float64
	HasFrequency bool
	// Datetime is the time of the first sample read (captures[0]
	// core:datetime of a recording); zero when unknown.
	Datetime time.Time
	// Captures are the recording's capture segments after the first
	// (SigMF captures[1:]: a change of frequency, a jump in time), their
	// sample indices relative to the first sample read; FrequencyHz,
	// HasFrequency and Datetime above describe the first.
	Captures []Capture
	// Annotations are the recording's annotations, their sample indices
	// relative to the first sample read.
	Annotations []Annotation
	// Extensions are the recording's core:extensions entries, kept so
	// that namespaced annotation fields stay declared.
	Extensions []json.RawMessage
	// Global holds further namespaced global fields a source records
	// (the IIO source's "sigproc:iio").
	Global map[string]any
}

// Capture is one capture segment of a recording after the first: from
// SampleStart on, the samples were taken at FrequencyHz (when
// HasFrequency), the first of them at Datetime (when not zero).
type Capture struct {
	// SampleStart is the segment's first sample, counted from the first
	// sample read.
	SampleStart  uint64
	FrequencyHz  float64
	HasFrequency bool
	Datetime     time.Time
}

// Annotation is one SigMF annotation.
type Annotation struct {
	// SampleStart is the first sample annotated, counted from the first
	// sample read.
	SampleStart uint64
	// SampleCount is the number of samples annotated; HasCount says it was
	// given (an annotation without it marks a point).
	SampleCount uint64
	HasCount    bool
	// Fields are every other field, as written in the recording
	// (core:label, core:comment, core:freq_lower_edge, ...): frequencies
	// are absolute, so no stage changes them.
	Fields map[string]json.RawMessage
}

// MetaSource is a source that carries metadata (see [Meta]).
type MetaSource interface {
	SignalMeta() *Meta
}

// Timestamped is a live source that knows when its first sample was
// captured: the wall-clock time, or the zero time before the first read.
// It is safe to call from any goroutine.
type Timestamped interface {
	FirstSampleTime() time.Time
}

// firstStamp records the capture time of a live source's first sample: the
// time its first read returned, less the samples it returned at the rate.
type firstStamp struct {
	ns atomic.Int64 // Unix nanoseconds, 0 before the first read
}

// note records the first read of n frames at rate, once.
func (f *firstStamp) note(frames int, rate float64) {
	if frames > 0 && f.ns.Load() == 0 {
		f.set(time.Now().Add(-time.Duration(float64(frames) / rate * 1e9)))
	}
}

// set records t as the first sample's time.
func (f *firstStamp) set(t time.Time) { f.ns.Store(t.UnixNano()) }

// FirstSampleTime returns the capture time of the first sample, or the
// zero time.
func (f *firstStamp) FirstSampleTime() time.Time {
	if ns := f.ns.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}
