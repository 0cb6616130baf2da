package stage

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/filter"
)

// KindChannelize is the polyphase channelizer: one stream at fs into
// Bank = M channels at fs/D (D = Decimate, a divisor of M), channel k
// centred at k·fs/M (k ≥ M/2 the negative frequencies). Output channel
// k, sample n is y_k[n] = Σ_i h[i]·x[nD − i]·exp(−j2πk(nD − i)/M): the
// input shifted by −k·fs/M, filtered with the prototype h and kept at
// samples 0, D, 2D, …. The output is complex, in frames of M channels.
//
// GNU Radio's pfb.channelizer_ccf(M, h, M/D) computes the same channels
// in the same order (output k centred at k·fs/M), but one input sample
// later and turned by a fixed phase: its output k, sample n, is
// exp(−j2πkD/M)·y'_k[n+1], y' this stage's output for the input delayed
// by one sample (cmd/sigproc's TestChannelizeGNURadio checks it).
const KindChannelize Kind = "channelize"

// NewChannelize returns a channelize stage of m channels decimating by d
// with prototype taps.
func NewChannelize(taps []float32, m, d int) Stage {
	return Stage{Kind: KindChannelize, Taps: taps, Bank: m, Decimate: d}
}

// channelize is KindChannelize's Def; its CPU kernel is a
// filter.Channelizer. It takes one input channel; the stages after it
// (but a select) run on each of its channels (Chain.OutFrame).
type channelize struct{}

func (channelize) Kind() Kind                                    { return KindChannelize }
func (channelize) Params() Param                                 { return ParamTaps | ParamDecimate | ParamBank }
func (channelize) Factors(s Stage) (int, int)                    { return 1, max(1, s.Decimate) }
func (channelize) OutComplex(Stage, bool) bool                   { return true }
func (channelize) Shift(Stage) float64                           { return 0 }
func (channelize) Design(_ Stage, in float64) (float64, float64) { return in, 1 }

func (channelize) Check(s Stage, _ float64) *StageError {
	if err := checkTaps(s.Taps); err != nil {
		return fieldError("taps", "%s", err)
	}
	if s.Bank < 2 || s.Bank > filter.MaxBankChannels {
		return fieldError("channels", "must be in 2..%d, got %d", filter.MaxBankChannels, s.Bank)
	}
	if s.Decimate < 1 || s.Bank%s.Decimate != 0 {
		return fieldError("decimate", "must divide the %d channels (%s), got %d", s.Bank, DecimateChoices(s.Bank), s.Decimate)
	}
	return nil
}

// DecimateChoices says which decimations a bank of m channels takes, for
// messages: "64: critically sampled, 32: 2× oversampled", or for an odd
// m its divisors.
func DecimateChoices(m int) string {
	if m%2 == 0 {
		return fmt.Sprintf("%d: critically sampled, %d: 2× oversampled", m, m/2)
	}
	var d []string
	for k := 1; k <= m && len(d) < 12; k++ {
		if m%k == 0 {
			d = append(d, strconv.Itoa(k))
		}
	}
	return fmt.Sprintf("%d: critically sampled; an odd count's divisors: %s", m, strings.Join(d, ", "))
}

// Retune takes new taps; the channels and decimation may not change, and
// s keeps them when it leaves them out.
func (channelize) Retune(old, s Stage) (Stage, error) {
	if s.Bank == 0 {
		s.Bank = old.Bank
	}
	if s.Decimate == 0 {
		s.Decimate = old.Decimate
	}
	if s.Bank != old.Bank || s.Decimate != old.Decimate {
		return s, fmt.Errorf("channelizes into %d channels ÷%d; a retune cannot change it to %d ÷%d", old.Bank, old.Decimate, s.Bank, s.Decimate)
	}
	return s, nil
}

func (channelize) Describe(s Stage) string {
	return fmt.Sprintf("channelize %d channels ÷%d, %d taps", s.Bank, s.Decimate, len(s.Taps))
}

func (channelize) NewProcessor(s Stage, in Input) (Processor, error) {
	return filter.NewChannelizer(s.Taps, s.Bank, s.Decimate, in.Complex, in.MaxIn)
}

// Fan: channel k is centred k·fs/M above the input's centre, k ≥ M/2
// below it ((k − M)·fs/M).
func (channelize) Fan(s Stage, in []Channel, rate float64) ([]Channel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("channelize takes one input channel; the stream has %d", len(in))
	}
	if err := (channelize{}).Check(s, rate); err != nil { // Fan may come before Check
		return nil, err
	}
	out := make([]Channel, s.Bank)
	for k := range out {
		b := k
		if 2*k >= s.Bank {
			b -= s.Bank
		}
		out[k] = Channel{ID: k, Centre: in[0].Centre + float64(b)*rate/float64(s.Bank)}
	}
	return out, nil
}

// KeepsHistory is true: new taps see the input the old ones saw.
func (channelize) KeepsHistory() bool { return true }

// Resume gives next the stream's recent input and position.
func (channelize) Resume(next, _ Processor, history []float32, at int64) {
	next.(*filter.Channelizer).Seek(history, at)
}

// Cut: any start works (each copy finds the frames at multiples of D
// itself); segments of whole frames keep them about even.
func (channelize) Cut(s Stage, _ Processor, n, k, minSeg int, starts []int) []int {
	return filter.EvenCuts(n, k, minSeg, max(1, s.Decimate), starts)
}

// History is the bank's window less one sample.
func (channelize) History(_ Stage, run Processor) int { return run.(*filter.Channelizer).HistoryLen() }

// Seek gives p the input before sample at.
func (c channelize) Seek(p, _ Processor, history []float32, at int64) { c.Resume(p, nil, history, at) }
