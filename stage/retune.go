package stage

import (
	"errors"
	"fmt"
	"slices"
)

// Retuning changes a running stage's parameters at an exact sample, with
// nothing lost, repeated or delayed. A retune of stage i at K (an index in
// stage i's input stream, counted from its first sample) means:
//
//   - fir h → h', decimate M: y[m] = Σ_k h[k]·x[m·M − k] for m·M < K and
//     Σ_k h'[k]·x[m·M − k] for m·M ≥ K, over the same input history x (the
//     tap count may change; M may not).
//   - shift f → f': the phase stays continuous, φ[n+1] = φ[n] + 2π·f(n)/fs
//     with f(n) the frequency in force at n, so φ[n] = φ[K] + 2π·f'·(n−K)/fs
//     for n ≥ K, where φ[K] is the old frequency's phase at K.
//   - channelize h → h', M channels, decimate D: the frames at n·D < K use
//     h, those at n·D ≥ K use h', over the same input history (the tap
//     count may change; M and D may not).
//
// Only parameters change: a retune that alters the structure (the stage's
// kind, a fir's decimation, a channelizer's channels or decimation, a
// selection, a resampler, the number of stages) fails with ErrStructure. K is always a block boundary: the first sample of the
// first block the backend processes after the retune was accepted.

// ErrStructure is wrapped by CheckRetune when a retune would change the
// chain's structure rather than a stage's parameters.
var ErrStructure = errors.New("stage: a retune cannot change the chain's structure")

// ErrRetuneUnsupported is wrapped by backends that cannot retune (yet),
// or not this kind of stage.
var ErrRetuneUnsupported = errors.New("stage: retuning is not supported")

// Retune is one retune as every backend receives it, as plain data: new
// parameters for stage Index, taking effect at sample At of that stage's
// input stream.
type Retune struct {
	Index int
	Stage Stage
	// At is K, the first sample of stage Index's input processed with the
	// new parameters.
	At int64
	// ChainAt is the same boundary in the chain's input stream (the
	// samples the backend has taken from the ring, dropped blocks not
	// included): stage Index's At is the count of the stages before it
	// after ChainAt chain inputs.
	ChainAt int64
}

// CheckRetune validates new parameters s for stage i of c, a valid chain
// (a running one): the stage must exist and keep its kind and factors
// (ErrStructure otherwise), and the chain with s in place must validate (a
// *StageError, as Validate returns). Method is kept from the running stage
// when s leaves it empty.
func CheckRetune(c Chain, i int, s Stage) (Stage, error) {
	if i < 0 || i >= len(c.Stages) {
		return s, fmt.Errorf("%w: stage %d does not exist (the chain has %d stages: %s)", ErrStructure, i, len(c.Stages), c)
	}
	old := c.Stages[i]
	if s.Kind != old.Kind {
		return s, fmt.Errorf("%w: stage %d is a %s, not a %s", ErrStructure, i, old.Kind, s.Kind)
	}
	s, err := s.Def().Retune(old, s)
	if err != nil {
		return s, fmt.Errorf("%w: stage %d %v", ErrStructure, i, err)
	}
	if _, fans := s.Def().(Fanout); !fans {
		// The rest of c is valid and keeps its rates, and a stage that
		// makes no channels cannot change the frames: its own check is the
		// chain's. (A retune's time counts: on an H100 host the check took
		// a third of a zero-copy chain's retune call.)
		rate := Chain{SampleRate: c.SampleRate, Stages: c.Stages[:i]}.OutRate()
		if err := s.Def().Check(s, rate); err != nil {
			err.Index = i
			return s, err
		}
		return s, nil
	}
	next := c
	next.Stages = slices.Clone(c.Stages)
	next.Stages[i] = s
	return s, next.Validate()
}

// InputAt returns stage i's input index after n chain inputs: the count
// of the stages before it.
func (c Chain) InputAt(i int, n int64) int64 {
	for _, s := range c.Stages[:i] {
		n = s.Count(n)
	}
	return n
}

// With returns a copy of c with stage i replaced by s; the stage slices
// are not shared with c.
func (c Chain) With(i int, s Stage) Chain {
	c.Stages = slices.Clone(c.Stages)
	c.Stages[i] = s
	return c
}

// SameStructure reports whether b has a's stages with the same kinds and
// factors (it may differ in taps and frequencies), and if not, why.
func SameStructure(a, b Chain) error {
	if len(a.Stages) != len(b.Stages) {
		return fmt.Errorf("%w: %d stages (%s), the running chain has %d (%s)", ErrStructure, len(b.Stages), b, len(a.Stages), a)
	}
	if a.SampleRate != b.SampleRate || a.Complex != b.Complex {
		return fmt.Errorf("%w: input %g S/s complex=%v, the running chain's is %g S/s complex=%v", ErrStructure, b.SampleRate, b.Complex, a.SampleRate, a.Complex)
	}
	for i, s := range b.Stages {
		if _, err := CheckRetune(a, i, s); errors.Is(err, ErrStructure) {
			return err
		}
	}
	return nil
}
