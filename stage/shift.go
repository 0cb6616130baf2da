package stage

import (
	"fmt"
	"math"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/mixer"
)

// KindShift is the frequency shift: y[n] = x[n]·exp(j·2π·f·n/fs) by
// FrequencyHz f, whose output is complex.
const KindShift Kind = "shift"

// NewShift returns a shift stage by hz.
func NewShift(hz float64) Stage { return Stage{Kind: KindShift, FrequencyHz: hz} }

// shift is KindShift's Def; its CPU kernel is a mixer.Shifter.
type shift struct{}

func (shift) Kind() Kind                                    { return KindShift }
func (shift) Params() Param                                 { return ParamFrequency }
func (shift) Factors(Stage) (int, int)                      { return 1, 1 }
func (shift) OutComplex(Stage, bool) bool                   { return true }
func (shift) Shift(s Stage) float64                         { return s.FrequencyHz }
func (shift) Design(_ Stage, in float64) (float64, float64) { return in, 1 }
func (shift) Retune(_, s Stage) (Stage, error)              { return s, nil }
func (shift) Describe(s Stage) string                       { return fmt.Sprintf("shift %g Hz", s.FrequencyHz) }

func (shift) Check(s Stage, rate float64) *StageError {
	switch f := s.FrequencyHz; {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return fieldError("frequency_hz", "must be a finite number, got %g", f)
	case math.Abs(f) > rate/2:
		return fieldError("frequency_hz", "|%g| is above Nyquist (%g S/s / 2 = %g Hz at this stage)", f, rate, rate/2)
	}
	return nil
}

func (shift) NewProcessor(s Stage, in Input) (Processor, error) {
	return mixer.New(s.FrequencyHz, in.Rate, in.Complex)
}

// KeepsHistory is false: a shift resumes from the old shifter's phase.
func (shift) KeepsHistory() bool { return false }

// Resume continues the phase of prev at its position: the frequency
// changes with a continuous phase.
func (shift) Resume(next, prev Processor, _ []float32, _ int64) {
	old := prev.(*mixer.Shifter)
	next.(*mixer.Shifter).Resume(old.Pos(), old.Phase(old.Pos()))
}

// Cut: a shifter's rotation depends only on the sample index and the
// chunk of mixer.ChunkLen it falls in, so segments start at chunks.
func (shift) Cut(_ Stage, _ Processor, n, k, minSeg int, starts []int) []int {
	return filter.EvenCuts(n, k, minSeg, mixer.ChunkLen, starts)
}

// History is 0: a shifter needs no input history.
func (shift) History(Stage, Processor) int { return 0 }

// Seek positions p at sample at of run's stream, with run's phase.
func (shift) Seek(p, run Processor, _ []float32, at int64) {
	p.(*mixer.Shifter).Seek(run.(*mixer.Shifter), at)
}
