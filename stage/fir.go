package stage

import (
	"fmt"

	"github.com/sigproc/sigproc/filter"
)

// KindFIR is the FIR filter with taps h that keeps every Decimate-th
// output: y[m] = Σ_k h[k]·x[m·M − k].
const KindFIR Kind = "fir"

// NewFIR returns a fir stage with taps that decimates by decimate (0
// leaves it to CheckRetune to keep the running stage's).
func NewFIR(taps []float32, decimate int) Stage {
	return Stage{Kind: KindFIR, Taps: taps, Decimate: decimate}
}

// FIR returns the chain of one plain FIR stage with the given taps, the
// shorthand a config's filter: section stands for.
func FIR(rate float64, complex bool, taps []float32) Chain {
	return Chain{SampleRate: rate, Complex: complex, Stages: []Stage{NewFIR(taps, 1)}}
}

// PlainFIR returns the taps when the chain is a single fir stage without
// decimation — the one chain every backend has always run.
func (c Chain) PlainFIR() ([]float32, bool) {
	if len(c.Stages) == 1 && c.Stages[0].Kind == KindFIR && c.Stages[0].Decimate <= 1 {
		return c.Stages[0].Taps, true
	}
	return nil, false
}

// fir is KindFIR's Def; its CPU kernel is a filter.FIR (Decimate 1) or a
// filter.Decimator, by Method.
type fir struct{}

func (fir) Kind() Kind                                    { return KindFIR }
func (fir) Params() Param                                 { return ParamTaps | ParamDecimate | ParamMethod }
func (fir) Factors(s Stage) (int, int)                    { return 1, max(1, s.Decimate) }
func (fir) OutComplex(_ Stage, in bool) bool              { return in }
func (fir) Shift(Stage) float64                           { return 0 }
func (fir) Design(_ Stage, in float64) (float64, float64) { return in, 1 }

func (fir) Check(s Stage, _ float64) *StageError {
	if err := checkTaps(s.Taps); err != nil {
		return fieldError("taps", "%s", err)
	}
	if s.Decimate < 1 || s.Decimate > MaxFactor {
		return fieldError("decimate", "must be in 1..%d, got %d", MaxFactor, s.Decimate)
	}
	switch s.Method {
	case "", "auto", "direct", "fft":
	default:
		return fieldError("method", "unknown value %q (want auto, direct or fft)", s.Method)
	}
	return nil
}

// Retune keeps the decimation, which may not change, and the method when
// s leaves them out.
func (fir) Retune(old, s Stage) (Stage, error) {
	if s.Decimate == 0 {
		s.Decimate = old.Decimate
	}
	if s.Decimate != old.Decimate {
		return s, fmt.Errorf("decimates by %d; a retune cannot change it to %d", old.Decimate, s.Decimate)
	}
	if s.Method == "" {
		s.Method = old.Method
	}
	return s, nil
}

func (fir) Describe(s Stage) string {
	d := fmt.Sprintf("fir %d taps", len(s.Taps))
	if s.Decimate > 1 {
		d += fmt.Sprintf(" ÷%d", s.Decimate)
	}
	return d
}

func (fir) NewProcessor(s Stage, in Input) (Processor, error) {
	m, err := filter.ParseMethod(s.Method)
	if err != nil {
		return nil, err
	}
	if s.Decimate <= 1 {
		f, err := filter.NewFIRMethod(s.Taps, in.Complex, in.MaxIn, m)
		if err != nil {
			return nil, err
		}
		return firProc{f}, nil
	}
	return filter.NewDecimatorMethod(s.Taps, s.Decimate, in.Complex, in.MaxIn, m)
}

// KeepsHistory is true: new taps see the input the old ones saw.
func (fir) KeepsHistory() bool { return true }

// Resume gives next the stream's recent input, and a decimator the phase
// of its decimation at.
func (fir) Resume(next, _ Processor, history []float32, at int64) {
	switch p := next.(type) {
	case firProc:
		p.SetHistory(history)
	case *filter.Decimator:
		p.SetHistory(history, at)
	}
}

// FIRProcessor returns the fir kind's CPU kernel around f, a plain FIR
// built elsewhere.
func FIRProcessor(f *filter.FIR) Processor { return firProc{f} }

// firProc adapts filter.FIR, which outputs one sample per input.
type firProc struct{ *filter.FIR }

func (f firProc) Process(dst, src []float32) (int, error) {
	if len(dst) < len(src) {
		return 0, fmt.Errorf("%w: dst holds %d values, need %d", filter.ErrBlockLength, len(dst), len(src))
	}
	return len(src), f.FIR.Process(dst[:len(src)], src)
}

// Cut: the filter says where its segments may start (filter.FIR.Cut).
func (fir) Cut(_ Stage, run Processor, n, k, minSeg int, starts []int) []int {
	switch p := run.(type) {
	case firProc:
		return p.FIR.Cut(n, k, minSeg, 1, starts)
	case *filter.Decimator:
		return p.Cut(n, k, minSeg, starts)
	}
	return append(starts, 0)
}

// History is the taps' history (a decimator's padding included).
func (fir) History(_ Stage, run Processor) int {
	switch p := run.(type) {
	case firProc:
		return p.HistoryLen()
	case *filter.Decimator:
		return p.HistoryLen()
	}
	return 0
}

// Seek gives p the input before sample at, and a decimator its phase.
func (d fir) Seek(p, _ Processor, history []float32, at int64) {
	d.Resume(p, nil, history, at)
}
