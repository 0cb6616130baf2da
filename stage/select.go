package stage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sigproc/sigproc/filter"
)

// KindSelect keeps some channels of its input's frames: output channel j
// is input channel Keep[j]. After a channelizer it keeps the channels
// wanted of M.
const KindSelect Kind = "select"

// NewSelect returns a select stage keeping the given channels, in that
// order.
func NewSelect(keep ...int) Stage { return Stage{Kind: KindSelect, Keep: keep} }

// MaxKeep bounds a selection's channels (filter.MaxBankChannels).
const MaxKeep = 4096

// selection is KindSelect's Def; its CPU kernel copies the kept channels
// of each frame.
type selection struct{}

func (selection) Kind() Kind                                    { return KindSelect }
func (selection) Params() Param                                 { return ParamKeep }
func (selection) Factors(Stage) (int, int)                      { return 1, 1 }
func (selection) OutComplex(_ Stage, in bool) bool              { return in }
func (selection) Shift(Stage) float64                           { return 0 }
func (selection) Design(_ Stage, in float64) (float64, float64) { return in, 1 }

func (selection) Check(s Stage, _ float64) *StageError {
	switch {
	case len(s.Keep) == 0:
		return fieldError("channels", "must list at least one channel")
	case len(s.Keep) > MaxKeep:
		return fieldError("channels", "%d channels listed; at most %d", len(s.Keep), MaxKeep)
	}
	seen := make(map[int]bool, len(s.Keep))
	for _, k := range s.Keep {
		switch {
		case k < 0:
			return fieldError("channels", "channel %d: channels count from 0", k)
		case seen[k]:
			return fieldError("channels", "channel %d is listed twice", k)
		}
		seen[k] = true
	}
	return nil
}

// Fan keeps the channels listed.
func (selection) Fan(s Stage, in []Channel, rate float64) ([]Channel, error) {
	if err := (selection{}).Check(s, rate); err != nil { // Fan may come before Check
		return nil, err
	}
	out := make([]Channel, len(s.Keep))
	for j, k := range s.Keep {
		if k >= len(in) {
			return nil, fmt.Errorf("channel %d is not one of the stream's %d channels (0..%d)", k, len(in), len(in)-1)
		}
		out[j] = in[k]
	}
	return out, nil
}

// Retune keeps the selection, which may not change: each output channel
// stays the same channel.
func (selection) Retune(old, s Stage) (Stage, error) {
	if s.Keep == nil {
		s.Keep = old.Keep
	}
	if !slices.Equal(s.Keep, old.Keep) {
		return s, fmt.Errorf("keeps channels %v; a retune cannot change them", old.Keep)
	}
	return s, nil
}

func (selection) Describe(s Stage) string {
	if len(s.Keep) > 8 {
		return fmt.Sprintf("select %d channels", len(s.Keep))
	}
	var b strings.Builder
	for i, k := range s.Keep {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, k)
	}
	return "select channels " + b.String()
}

func (selection) NewProcessor(s Stage, in Input) (Processor, error) {
	v := 1
	if in.Complex {
		v = 2
	}
	n := max(1, in.Channels)
	for _, k := range s.Keep {
		if k < 0 || k >= n {
			return nil, fmt.Errorf("channel %d is not one of the stream's %d channels (0..%d)", k, n, n-1)
		}
	}
	return &selector{keep: slices.Clone(s.Keep), in: n * v, v: v}, nil
}

// selector is the select kind's CPU kernel.
type selector struct {
	keep []int
	in   int // values of an input frame
	v    int // values of a channel's sample: 1 or 2
}

func (p *selector) Process(dst, src []float32) (int, error) {
	frames := len(src) / p.in
	out := len(p.keep) * p.v
	switch {
	case len(src)%p.in != 0:
		return 0, fmt.Errorf("%w: select: %d values are not whole frames of %d", filter.ErrBlockLength, len(src), p.in)
	case len(dst) < frames*out:
		return 0, fmt.Errorf("%w: select: dst holds %d values, need %d", filter.ErrBlockLength, len(dst), frames*out)
	}
	for f := range frames {
		fr, o := src[f*p.in:(f+1)*p.in], dst[f*out:(f+1)*out]
		if p.v == 2 {
			for j, k := range p.keep {
				o[2*j], o[2*j+1] = fr[2*k], fr[2*k+1]
			}
		} else {
			for j, k := range p.keep {
				o[j] = fr[k]
			}
		}
	}
	return frames * out, nil
}

func (p *selector) Reset() {}
