package stage

import (
	"fmt"

	"github.com/sigproc/sigproc/filter"
)

// KindResample is the rational resampler by Up/Down with taps h at the
// upsampled rate: y[m] = Σ_k h[k]·u[m·M − k], u the input with L−1 zeros
// after each sample.
const KindResample Kind = "resample"

// NewResample returns a resample stage by up/down with taps.
func NewResample(taps []float32, up, down int) Stage {
	return Stage{Kind: KindResample, Taps: taps, Up: up, Down: down}
}

// resample is KindResample's Def; its CPU kernel is a filter.Resampler,
// which a retune cannot replace yet (resample is no Resumer), and which
// a block's segments can run at once (Splitter).
type resample struct{}

func (resample) Kind() Kind                       { return KindResample }
func (resample) Params() Param                    { return ParamTaps | ParamFactors }
func (resample) Factors(s Stage) (int, int)       { return max(1, s.Up), max(1, s.Down) }
func (resample) OutComplex(_ Stage, in bool) bool { return in }
func (resample) Shift(Stage) float64              { return 0 }

// Design: the taps run at the upsampled rate, and designed ones get a
// passband gain of up, which keeps the signal's amplitude.
func (resample) Design(s Stage, in float64) (float64, float64) {
	return in * float64(s.Up), float64(s.Up)
}

func (resample) Check(s Stage, _ float64) *StageError {
	if err := checkTaps(s.Taps); err != nil {
		return fieldError("taps", "%s", err)
	}
	if s.Up < 1 || s.Up > MaxFactor {
		return fieldError("up", "must be in 1..%d, got %d", MaxFactor, s.Up)
	}
	if s.Down < 1 || s.Down > MaxFactor {
		return fieldError("down", "must be in 1..%d, got %d", MaxFactor, s.Down)
	}
	return nil
}

// Retune keeps the factors, which may not change.
func (resample) Retune(old, s Stage) (Stage, error) {
	if s.Up != old.Up || s.Down != old.Down {
		return s, fmt.Errorf("resamples by %d/%d; a retune cannot change it to %d/%d", old.Up, old.Down, s.Up, s.Down)
	}
	return s, nil
}

func (resample) Describe(s Stage) string {
	return fmt.Sprintf("resample %d taps ×%d/%d", len(s.Taps), s.Up, s.Down)
}

func (resample) NewProcessor(s Stage, in Input) (Processor, error) {
	return filter.NewResampler(s.Taps, s.Up, s.Down, in.Complex, in.MaxIn)
}

// Cut: segments start where every output class's kernel groups its
// outputs as in one call (filter.Resampler.Cut).
func (resample) Cut(_ Stage, run Processor, n, k, minSeg int, starts []int) []int {
	return run.(*filter.Resampler).Cut(n, k, minSeg, starts)
}

// History is the longest branch's history with the kernel's padding.
func (resample) History(_ Stage, run Processor) int { return run.(*filter.Resampler).HistoryLen() }

// Seek gives p the input before sample at and the outputs made by then.
func (resample) Seek(p, _ Processor, history []float32, at int64) {
	p.(*filter.Resampler).SetHistory(history, at)
}
