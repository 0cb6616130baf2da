// Package stage describes a chain of signal-processing stages — frequency
// shift, (decimating) FIR, rational resampler — as plain data, with the
// rules every backend shares: what each stage computes, its output rate,
// whether its output is complex, and how many samples it outputs.
//
// A Chain holds no state and no buffers: the CPU backend (backend/cpu) and
// the GPU backend (backend/cuda) each receive the same Chain and build their
// own kernels from it, so one description runs anywhere and the outputs of
// the backends can be compared sample for sample.
//
// The semantics, for an input stream x[n] at rate fs (n counted from the
// stream's first sample, x[n<0] = 0):
//
//   - Shift f: y[n] = x[n]·exp(j·φ[n]), φ[n] = 2π·f·n/fs exactly (no
//     accumulated phase). A real input becomes complex. |f| <= fs/2.
//   - FIR h, decimate M: y[m] = Σ_k h[k]·x[m·M − k], ceil(n/M) outputs for
//     n inputs; equals scipy.signal.lfilter(h, 1, x)[::M]. Rate fs/M.
//   - Resample up L, down M, taps h: y[m] = Σ_k h[k]·u[m·M − k] with u the
//     input with L−1 zeros after each sample; ceil(n·L/M) outputs; equals
//     scipy.signal.upfirdn(h, x, L, M)[:ceil(n·L/M)] (u includes the L−1
//     zeros after the last sample: when len(h) < L scipy's output can end
//     one sample earlier, and the extra output is 0). Rate fs·L/M. No
//     gain is applied to the taps.
//   - Channelize M channels, decimate D, prototype h: channel k, sample m
//     is Σ_i h[i]·x[m·D − i]·exp(−j2πk(m·D − i)/M), ceil(n/D) frames of
//     M complex channels for n inputs; channel k is centred at k·fs/M.
//     Rate fs/D per channel. One input channel.
//   - Select channels c0, c1, …: frame n is input channels c0, c1, … of
//     input frame n: first on a stream of several channels, or after a
//     channelize. The stages after a channelize or select run on each
//     of its channels apart (Chain.FanEnd).
//
// Output counts are causal: after n inputs in total, a stage has output
// exactly its count for n, however the input was split into blocks.
package stage

import (
	"errors"
	"fmt"
	"math"
)

// Kind names a stage kind, as written in a config's stages list. Each
// kind is defined in a file of its own (shift.go, fir.go, resample.go,
// channelize.go, select.go)
// and listed in the table of kind.go; Stage.Def returns its Def.
type Kind string

// Stage is one stage of a chain. Which fields are used depends on Kind
// (Def().Params()).
type Stage struct {
	Kind Kind
	// FrequencyHz is the shift in Hz (shift): the input's content at
	// frequency F appears at F + FrequencyHz.
	FrequencyHz float64
	// Taps are the filter coefficients (fir, resample), as given: no gain
	// is applied.
	Taps []float32
	// Decimate is the fir's decimation factor M >= 1.
	Decimate int
	// Up and Down are the resampler's factors L >= 1 and M >= 1.
	Up, Down int
	// Method is how the CPU convolves a fir with Decimate 1: "auto", "direct"
	// or "fft" ("" = auto). Other stages and backends ignore it.
	Method string
	// Bank is the channelizer's channel count M (channelize); its
	// Decimate is D, a divisor of M.
	Bank int
	// Keep are the input channels a selection keeps, in its output's
	// order (select).
	Keep []int
}

// Chain is a list of stages run in order on a stream of the given input
// rate and complexness. It is what every backend receives.
type Chain struct {
	SampleRate float64 // input rate, S/s
	Complex    bool    // the input is interleaved I/Q
	// Channels is the number of channels in a frame (0 means 1): each
	// channel runs through the same stages independently, with its own
	// state, and the outputs stay interleaved frame by frame. Counts,
	// rates and MaxOut are per channel.
	Channels int
	Stages   []Stage
}

// MaxChannels bounds Chain.Channels (capture.MaxChannels).
const MaxChannels = 4096

// ChannelCount returns the channels of a frame, at least 1.
func (c Chain) ChannelCount() int { return max(1, c.Channels) }

// ErrChain is wrapped by every error Validate returns.
var ErrChain = errors.New("stage: invalid chain")

// MaxFactor bounds decimate, up and down, so that a typo cannot ask for
// gigabytes of polyphase tables.
const MaxFactor = 1 << 16

// MaxTaps bounds the taps of one stage (the filter package's limit).
const MaxTaps = 1 << 20

// StageError is a problem with one stage; Index says which.
type StageError struct {
	Index int // position in Chain.Stages
	Field string
	Msg   string
}

// Error formats the problem as "stage I (kind): field: msg".
func (e *StageError) Error() string {
	s := fmt.Sprintf("stage %d", e.Index)
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Unwrap lets errors.Is match ErrChain.
func (e *StageError) Unwrap() error { return ErrChain }

// Validate checks every stage against the rate it runs at and returns the
// first problem as a *StageError.
func (c Chain) Validate() error {
	if !(c.SampleRate > 0) || math.IsInf(c.SampleRate, 0) {
		return fmt.Errorf("%w: input sample rate %g must be > 0", ErrChain, c.SampleRate)
	}
	if len(c.Stages) == 0 {
		return fmt.Errorf("%w: no stages", ErrChain)
	}
	if c.Channels < 0 || c.Channels > MaxChannels {
		return fmt.Errorf("%w: %d channels: want 1..%d", ErrChain, c.Channels, MaxChannels)
	}
	rate := c.SampleRate
	for i, s := range c.Stages {
		if err := s.Def().Check(s, rate); err != nil {
			err.Index = i
			return err
		}
		rate = s.Rate(rate)
	}
	_, err := c.OutFrame()
	return err
}

// OutFrame returns the channels of the chain's output frames: a shift by
// f moves every centre by −f, and a Fanout kind makes new channels (a
// channelizer's channel k is centred k·fs/M above its input's centre). A
// chain without Fanout stages keeps its input's channels, each centred at
// −Shift(). The Fanout stages come in a row (FanEnd), first on a stream
// of several channels; the stages after them run on each channel apart.
// The error, a *StageError, is a Fanout stage that cannot take its
// input's channels or breaks those rules.
func (c Chain) OutFrame() ([]Channel, error) {
	cs := make([]Channel, c.ChannelCount())
	for i := range cs {
		cs[i].ID = i
	}
	rate, fanned := c.SampleRate, false
	for i, s := range c.Stages {
		f, ok := s.Def().(Fanout)
		switch {
		case ok && i > 0 && len(cs) > 1 && !fanned:
			return nil, &StageError{Index: i, Msg: fmt.Sprintf("%s must be the first stage on a stream of %d channels: the stages before it run on each channel apart", s.Kind, len(cs))}
		case ok && i > c.FanEnd():
			return nil, &StageError{Index: i, Msg: fmt.Sprintf("%s must come before the stages that run on each channel (stage %d on)", s.Kind, c.FanEnd())}
		case ok:
			out, err := f.Fan(s, cs, rate)
			if err != nil {
				return nil, &StageError{Index: i, Msg: err.Error()}
			}
			cs, fanned = out, true
		default:
			for j := range cs {
				cs[j].Centre -= s.Def().Shift(s)
			}
		}
		rate = s.Rate(rate)
	}
	return cs, nil
}

// FanEnd returns the index of the first stage after the chain's Fanout
// stages (those in a row from the first), 0 when it has none. The stages
// from there on run on each channel apart.
func (c Chain) FanEnd() int {
	end, in := 0, false
	for i, s := range c.Stages {
		if _, ok := s.Def().(Fanout); ok {
			if end > 0 && !in {
				break // a later Fanout stage: OutFrame refuses it
			}
			end, in = i+1, true
		} else if in {
			break
		}
	}
	return end
}

// fieldError is a Def's problem with one field of a stage.
func fieldError(field, format string, args ...any) *StageError {
	return &StageError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

func checkTaps(taps []float32) error {
	if len(taps) == 0 {
		return errors.New("no taps")
	}
	if len(taps) > MaxTaps {
		return fmt.Errorf("%d taps exceeds the limit %d", len(taps), MaxTaps)
	}
	for i, t := range taps {
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return fmt.Errorf("tap %d is %v", i, t)
		}
	}
	return nil
}

// Rate returns the stage's output rate for input rate in.
func (s Stage) Rate(in float64) float64 {
	up, down := s.Def().Factors(s)
	return in * float64(up) / float64(down)
}

// OutComplex reports whether the stage's output is complex for an input
// that is (in = true) or is not complex: a shift makes any input complex.
func (s Stage) OutComplex(in bool) bool { return s.Def().OutComplex(s, in) }

// Count returns how many samples the stage has output after n inputs in
// total: n, ceil(n/M) or ceil(n·L/M).
func (s Stage) Count(n int64) int64 {
	up, down := s.Def().Factors(s)
	return ceilMulDiv(n, int64(up), int64(down))
}

// ceilMulDiv returns ceil(n·l/m) without overflow for n < 2^62 and l, m
// up to MaxFactor.
func ceilMulDiv(n, l, m int64) int64 {
	q, r := n/m, n%m
	return q*l + (r*l+m-1)/m
}

// MaxOut returns the most samples the stage outputs for one block of n
// inputs, whatever came before: ceil(n/M) or ceil(n·L/M).
func (s Stage) MaxOut(n int) int { return int(s.Count(int64(n))) }

// OutRate returns the chain's output rate.
func (c Chain) OutRate() float64 {
	r := c.SampleRate
	for _, s := range c.Stages {
		r = s.Rate(r)
	}
	return r
}

// FansFirst reports whether the chain's first stage is a Fanout kind: its
// frames are then taken whole, all channels at once, not run through the
// stages channel by channel.
func (c Chain) FansFirst() bool {
	if len(c.Stages) == 0 {
		return false
	}
	_, ok := c.Stages[0].Def().(Fanout)
	return ok
}

// OutChannels returns the channels of the stage's output frames for an
// input of in channels: in, or a Fanout kind's (in when it cannot take
// them, which Validate reports).
func (s Stage) OutChannels(in int) int {
	f, ok := s.Def().(Fanout)
	if !ok {
		return in
	}
	out, err := f.Fan(s, make([]Channel, max(1, in)), 1)
	if err != nil {
		return in
	}
	return len(out)
}

// OutChannels returns the channels of the chain's output frames: its
// input's, or a channelizer's M, or a selection's; for a chain Validate
// refuses, its input's.
func (c Chain) OutChannels() int {
	if cs, err := c.OutFrame(); err == nil {
		return len(cs)
	}
	return c.ChannelCount()
}

// OutComplex reports whether the chain's output is complex.
func (c Chain) OutComplex() bool {
	cp := c.Complex
	for _, s := range c.Stages {
		cp = s.OutComplex(cp)
	}
	return cp
}

// Count returns how many samples the chain has output after n inputs in
// total.
func (c Chain) Count(n int64) int64 {
	for _, s := range c.Stages {
		n = s.Count(n)
	}
	return n
}

// MaxOut returns the most samples the chain outputs for one block of n
// inputs.
func (c Chain) MaxOut(n int) int {
	for _, s := range c.Stages {
		n = s.MaxOut(n)
	}
	return n
}

// Shift returns the total frequency shift in Hz: content at F in the input
// is at F + Shift() in the output, so a recording's centre frequency moves
// by −Shift().
func (c Chain) Shift() float64 {
	var f float64
	for _, s := range c.Stages {
		f += s.Def().Shift(s)
	}
	return f
}

// String describes the chain in one line, e.g. "shift -250000 Hz → fir 129
// taps ÷8".
func (c Chain) String() string {
	var b []byte
	for i, s := range c.Stages {
		if i > 0 {
			b = append(b, " → "...)
		}
		b = append(b, s.Def().Describe(s)...)
	}
	return string(b)
}
