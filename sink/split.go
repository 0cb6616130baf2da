package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Split writes each channel of a stream's frames to a recording of its
// own (Spec.Split): a file or SigMF recording per channel, each written
// as one channel alone. Its counts are frames.
type Split struct {
	parts []Sink
	v     int         // values of one channel's sample: 1, or 2 (I/Q)
	buf   [][]float32 // each channel's samples of the block being written
}

// prepareSplit checks a split Spec: one plan per channel, each a Spec of
// one channel with its labelled path and, for SigMF, its frequencies
// moved by the channel's centre.
func prepareSplit(s Spec) (*Plan, error) {
	n := max(1, s.Channels)
	switch {
	case s.Type != TypeFile && s.Type != TypeSigMF:
		return nil, fmt.Errorf("sink: split writes file or sigmf recordings, not %s", s.Type)
	case s.Path == Stdout:
		return nil, errors.New("sink: split writes a recording per channel, not standard output")
	case len(s.Labels) != n || len(s.Centres) != n:
		return nil, fmt.Errorf("sink: split: %d labels and %d centres for %d channels", len(s.Labels), len(s.Centres), n)
	}
	// The path must name a file (or a SigMF base) before labels are put
	// in: "dir/" would become the hidden dir/.ch0.
	if s.Type == TypeSigMF {
		if _, err := sigmfBase(s.Path); err != nil {
			return nil, err
		}
	} else if last := filepath.Base(s.Path); s.Path == "" || strings.HasSuffix(s.Path, "/") || last == "." || last == ".." {
		return nil, fmt.Errorf("sink: file path %q names a directory, not a file", s.Path)
	}
	files := n // each channel's open files: data, and a SigMF recording's directory
	if s.Type == TypeSigMF {
		files = 2 * n
	}
	if limit := openFileLimit(); limit > 0 && uint64(files)+64 > limit {
		return nil, fmt.Errorf("sink: split: %d channels keep %d files open, and the limit is %d (ulimit -n)", n, files, limit)
	}
	if clip := s.OnClip; clip != nil {
		var once sync.Once // warned once for the whole split, not once a channel
		s.OnClip = func(total uint64) { once.Do(func() { clip(total) }) }
	}
	p := &Plan{spec: s}
	seen := map[string]bool{}
	for j, label := range s.Labels {
		if label == "" || strings.ContainsAny(label, `/\`) || seen[label] {
			return nil, fmt.Errorf("sink: split: channel %d's label %q is empty, repeated or has a path separator", j, label)
		}
		seen[label] = true
		cs := s
		cs.Split, cs.Labels, cs.Centres, cs.Channels = false, nil, nil, 1
		cs.MakeDirs = false // createSplit makes the directory once, and takes it back on failure
		cs.Path = labelPath(s.Path, s.Type, label)
		cs.Meta = s.Meta.moved(s.Centres[j])
		cs.Meta.Channels = 1
		part, err := Prepare(cs)
		if err != nil {
			return nil, err
		}
		p.parts = append(p.parts, part)
		p.outputs = append(p.outputs, part.outputs...)
	}
	if err := distinct(p.outputs); err != nil {
		return nil, err
	}
	return p, nil
}

// labelPath is path with label before its extension (out/x.cf32 becomes
// out/x.LABEL.cf32), or, for a SigMF recording, after its base.
func labelPath(path, typ, label string) string {
	if typ == TypeSigMF {
		base := strings.TrimSuffix(strings.TrimSuffix(path, ".sigmf-data"), ".sigmf-meta")
		return base + "." + label
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + label + ext
}

// moved returns a copy of m with every frequency moved by df Hz.
func (m SigMFMeta) moved(df float64) SigMFMeta {
	m.FrequencyHz += df
	m.Captures = append([]SigMFCapture(nil), m.Captures...)
	for i := range m.Captures {
		m.Captures[i].FrequencyHz += df
	}
	return m
}

// createSplit creates every channel's recording, or none: on a failure
// the ones created are closed and their new files removed, and the
// directories made for them.
func (p *Plan) createSplit(ctx context.Context) (Sink, error) {
	s := &Split{v: 1, buf: make([][]float32, len(p.parts))}
	if p.spec.Complex {
		s.v = 2
	}
	var dirs []string
	if p.spec.MakeDirs {
		var err error
		if dirs, err = mkdirTracked(filepath.Dir(p.outputs[0].path)); err != nil {
			removeDirs(dirs)
			return nil, fmt.Errorf("sink: create output directory: %w", err)
		}
	}
	for _, part := range p.parts {
		ps, err := part.Create(ctx)
		if err != nil {
			for k, made := range s.parts {
				made.Close()
				p.parts[k].removeCreated()
			}
			removeDirs(dirs)
			return nil, err
		}
		s.parts = append(s.parts, ps)
	}
	return s, nil
}

// removeCreated removes the files Create made that did not exist before.
func (p *Plan) removeCreated() {
	for _, o := range p.outputs {
		if !o.existing && !o.special {
			os.Remove(o.path)
		}
	}
}

// split copies each channel of samples' frames into s.buf; the buffers
// grow to the largest block once, then writing allocates nothing.
func (s *Split) split(samples []float32) error {
	n := len(s.parts)
	if len(samples)%(n*s.v) != 0 {
		return fmt.Errorf("split: %d values are not whole frames of %d channels", len(samples), n)
	}
	frames := len(samples) / (n * s.v)
	for j := range s.buf {
		if cap(s.buf[j]) < frames*s.v {
			s.buf[j] = make([]float32, frames*s.v)
		}
		s.buf[j] = s.buf[j][:frames*s.v]
	}
	if s.v == 2 {
		for f := range frames {
			fr := samples[f*2*n : (f+1)*2*n]
			for j, b := range s.buf {
				b[2*f], b[2*f+1] = fr[2*j], fr[2*j+1]
			}
		}
		return nil
	}
	for f := range frames {
		fr := samples[f*n : (f+1)*n]
		for j, b := range s.buf {
			b[f] = fr[j]
		}
	}
	return nil
}

// Write writes each channel of the frames to its recording.
func (s *Split) Write(samples []float32) error {
	if err := s.split(samples); err != nil {
		return err
	}
	for j, p := range s.parts {
		if err := p.Write(s.buf[j]); err != nil {
			return err
		}
	}
	return nil
}

// WriteIndexed is Write with the input index of the first frame, which
// SigMF recordings use to record gaps (SigMF.WriteIndexed).
func (s *Split) WriteIndexed(index, inputs uint64, samples []float32) error {
	if err := s.split(samples); err != nil {
		return err
	}
	for j, p := range s.parts {
		var err error
		if sm, ok := p.(*SigMF); ok {
			err = sm.WriteIndexed(index, inputs, s.buf[j])
		} else {
			err = p.Write(s.buf[j])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes every recording.
func (s *Split) Close() error {
	var errs []error
	for _, p := range s.parts {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Samples returns the frames written to every recording (buffered ones
// included, as Raw.Samples counts them).
func (s *Split) Samples() uint64 {
	var w uint64
	for j, p := range s.parts {
		if n := p.(Counter).Samples(); j == 0 || n < w {
			w = n
		}
	}
	return w
}

// Written returns the frames that reached every recording.
func (s *Split) Written() uint64 {
	var w uint64
	for j, p := range s.parts {
		if n := rawOf(p).Written(); j == 0 || n < w {
			w = n
		}
	}
	return w
}

// Clipped returns the values clipped in all the recordings.
func (s *Split) Clipped() uint64 {
	var c uint64
	for _, p := range s.parts {
		c += rawOf(p).Clipped()
	}
	return c
}

// sigmfs calls f on each SigMF recording.
func (s *Split) sigmfs(f func(*SigMF)) {
	for _, p := range s.parts {
		if sm, ok := p.(*SigMF); ok {
			f(sm)
		}
	}
}

// SetDatetime sets each SigMF recording's first-sample time.
func (s *Split) SetDatetime(t time.Time) { s.sigmfs(func(sm *SigMF) { sm.SetDatetime(t) }) }

// Recentre passes a retune of the chain's shift to each SigMF recording
// (SigMF.Recentre).
func (s *Split) Recentre(at uint64, delta float64) {
	s.sigmfs(func(sm *SigMF) { sm.Recentre(at, delta) })
}

// EndInput passes the source's total to each SigMF recording.
func (s *Split) EndInput(total uint64) { s.sigmfs(func(sm *SigMF) { sm.EndInput(total) }) }

// Dropped returns the samples the SigMF recordings recorded as dropped
// (the same in each), and false for raw files.
func (s *Split) Dropped() (uint64, bool) {
	if sm, ok := s.parts[0].(*SigMF); ok {
		return sm.Dropped(), true
	}
	return 0, false
}

// rawOf returns the encoder of a file sink this package created.
func rawOf(s Sink) *Raw {
	switch s := s.(type) {
	case *Raw:
		return s
	case *SigMF:
		return s.Raw
	case *WAV:
		return s.Raw
	}
	return nil
}
