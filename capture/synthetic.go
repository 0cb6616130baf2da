package capture

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sigproc/sigproc/internal/tagged"
)

// Synthetic signal names accepted in SyntheticConfig.Signal.
const (
	SignalTone      = "tone"
	SignalMultitone = "multitone"
	SignalChirp     = "chirp"
	SignalNoise     = "noise"
	SignalImpulse   = "impulse"
	SignalSum       = "sum"
)

// Tone is one component of a multitone signal.
type Tone struct {
	FrequencyHz float64 // within ±SampleRate/2
	Amplitude   float64 // peak amplitude
	PhaseRad    float64 // phase at sample 0
}

// SyntheticConfig configures a [Synthetic] source. Fields that the chosen
// Signal does not use must be left zero; a set but unused field is reported
// as an error because it usually means the configuration says something other
// than what the user meant.
type SyntheticConfig struct {
	// Signal is "tone", "multitone", "chirp", "noise", "impulse" or "sum".
	Signal string
	// SampleRate in samples per second; must be > 0. A "sum" component may
	// leave it 0 to inherit the sum's rate.
	SampleRate float64
	// Complex selects a complex output: a tone is A·exp(j(2πft+φ)); a real
	// tone is A·cos(2πft+φ). A "sum" component inherits Complex from the sum.
	Complex bool

	// FrequencyHz is the tone frequency or the chirp start frequency.
	FrequencyHz float64
	// Amplitude is the peak amplitude of tone, chirp and impulse.
	Amplitude float64
	// PhaseRad is the phase at sample 0 of tone and chirp.
	PhaseRad float64

	// Tones are the components of "multitone".
	Tones []Tone

	// ChirpEndHz and ChirpPeriodS define a linear chirp from FrequencyHz to
	// ChirpEndHz over ChirpPeriodS seconds, repeating with continuous phase.
	ChirpEndHz   float64
	ChirpPeriodS float64

	// NoiseStdDev is the standard deviation of white Gaussian noise; for a
	// complex stream I and Q are independent, each with NoiseStdDev/√2, so
	// the total power is NoiseStdDev². Seed seeds the math/rand/v2 PCG
	// generator: equal seeds give equal streams.
	NoiseStdDev float64
	Seed        int64

	// ImpulseEvery puts an impulse of Amplitude at sample 0 and every
	// ImpulseEvery samples after it; 0 means only at sample 0. A complex
	// impulse is real (Q = 0).
	ImpulseEvery int

	// Components of "sum", added sample by sample. A component must not set
	// NumSamples or Paced (the sum's own fields govern the stream).
	Components []SyntheticConfig

	// NumSamples bounds the stream: Read returns io.EOF after exactly this
	// many samples. 0 means unbounded.
	NumSamples int64
	// Paced delivers samples in real time at SampleRate: Read returns when
	// the block's last sample would have been captured. Unpaced sources
	// produce samples as fast as they are read.
	Paced bool
}

// Synthetic generates test signals. Output depends only on the absolute
// sample index (and the noise seed), so reading in blocks of any size gives
// the same values as one large read. It is not safe for concurrent use.
type Synthetic struct {
	firstStamp // paced only
	info       Info
	gen        generator
	limit      int64 // 0 = unbounded
	n          int64 // samples delivered so far
	paced      bool
	start      time.Time // wall-clock time of sample 0, set by the first Read
	timer      *time.Timer
	closed     bool
	scratch    []float32 // ReadWords: one block's values, reused
}

// generator adds the next len(dst)/ch samples of a signal to dst and
// advances its own sample index.
type generator interface {
	add(dst []float32, ch int)
}

// NewSynthetic validates cfg and returns a source for it.
func NewSynthetic(cfg SyntheticConfig) (*Synthetic, error) {
	if err := validateSynthetic(cfg, "", nil); err != nil {
		return nil, err
	}
	if cfg.NumSamples < 0 {
		return nil, fmt.Errorf("capture: synthetic: NumSamples %d is negative (0 = unbounded)", cfg.NumSamples)
	}
	s := &Synthetic{
		info:  Info{SampleRate: cfg.SampleRate, Complex: cfg.Complex},
		gen:   newGenerator(cfg, cfg.SampleRate),
		limit: cfg.NumSamples,
		paced: cfg.Paced,
	}
	if s.paced {
		// Created once so that paced Reads do not allocate.
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
	}
	return s, nil
}

// Info describes the stream.
func (s *Synthetic) Info() Info { return s.info }

// Close stops the source. It never fails.
func (s *Synthetic) Close() error {
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	return nil
}

// Read implements [Source]. A paced Read cancelled while waiting returns the
// block it generated (valid samples) together with ctx.Err().
func (s *Synthetic) Read(ctx context.Context, dst []float32) (int, error) {
	return s.read(ctx, dst, nil, 0)
}

// ReadWords is Read writing the samples straight into a zero-copy
// backend's mapped slot as tagged words (pipeline.WordSource): each block
// is generated into a reused buffer while a paced source waits for the
// block's last sample, then written as {value, tag} words, with no staging
// copy after the block's timestamp.
func (s *Synthetic) ReadWords(ctx context.Context, dst []uint64, tag uint32) (int, error) {
	if cap(s.scratch) < len(dst) {
		s.scratch = make([]float32, len(dst)) // once per block size
	}
	return s.read(ctx, s.scratch[:len(dst)], dst, tag)
}

// read generates the next samples into dst, waits (a paced source) until
// they are due, and, when words is not nil, writes them there as tagged
// words too.
func (s *Synthetic) read(ctx context.Context, dst []float32, words []uint64, tag uint32) (int, error) {
	if s.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := s.info.Channels()
	if err := checkDst(dst, ch); err != nil {
		return 0, err
	}
	want := int64(len(dst) / ch)
	eof := false
	if s.limit > 0 {
		rem := s.limit - s.n
		if rem == 0 {
			return 0, io.EOF
		}
		if want > rem {
			want, eof = rem, true
		}
	}
	if s.paced && s.start.IsZero() {
		s.start = time.Now()
		s.firstStamp.set(s.start) // a paced source's samples are due from now
	}
	out := dst[:want*int64(ch)]
	clear(out)
	s.gen.add(out, ch)
	s.n += want
	if s.paced {
		if err := s.wait(ctx); err != nil {
			return len(out), err
		}
	}
	// Written once the block is due, as a live source's would be: earlier,
	// the kernel (which sees a word the moment its tag lands) would start
	// on samples that have not yet "arrived".
	if words != nil {
		tagged.Write(words[:len(out)], out, tag) // no padding: n counts every word
	}
	if eof {
		return len(out), io.EOF
	}
	return len(out), nil
}

// wait sleeps until the wall-clock time of the last delivered sample,
// measured from the absolute start so that rounding never accumulates.
func (s *Synthetic) wait(ctx context.Context) error {
	due := s.start.Add(time.Duration(float64(s.n) / s.info.SampleRate * 1e9))
	d := time.Until(due)
	if d <= 0 {
		return nil // the reader is behind; never drop or skip samples
	}
	s.timer.Reset(d)
	select {
	case <-ctx.Done():
		s.timer.Stop()
		return ctx.Err()
	case <-s.timer.C:
		return nil
	}
}

// validateSynthetic checks cfg; where names the component for messages.
// parent is the enclosing sum, or nil at the top level.
func validateSynthetic(cfg SyntheticConfig, where string, parent *SyntheticConfig) error {
	// where is "" or "components[i] " (nested); label names the component.
	label := func(sig string) string {
		if l := strings.TrimSpace(where + sig); l != "" {
			return "capture: synthetic " + l
		}
		return "capture: synthetic"
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", label(cfg.Signal), fmt.Sprintf(format, args...))
	}
	rate := cfg.SampleRate
	if parent != nil {
		if cfg.NumSamples != 0 || cfg.Paced {
			return bad("a sum component must not set NumSamples or Paced; set them on the sum")
		}
		if rate == 0 {
			rate = parent.SampleRate
		} else if rate != parent.SampleRate {
			return bad("SampleRate %g differs from the sum's %g", rate, parent.SampleRate)
		}
		if cfg.Complex && !parent.Complex {
			return bad("complex component in a real sum")
		}
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return bad("SampleRate %g must be a positive finite number", rate)
	}
	nyq := rate / 2
	freqOK := func(name string, f float64) error {
		if math.IsNaN(f) || math.Abs(f) > nyq {
			return bad("%s %g Hz is outside ±Nyquist (±%g Hz at %g S/s)", name, f, nyq, rate)
		}
		return nil
	}
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("%s %g is not finite", name, v)
		}
		return nil
	}
	// unused lists fields that are set although this signal ignores them.
	unused := func(fields ...string) error {
		for _, f := range fields {
			set := false
			switch f {
			case "FrequencyHz":
				set = cfg.FrequencyHz != 0
			case "Amplitude":
				set = cfg.Amplitude != 0
			case "PhaseRad":
				set = cfg.PhaseRad != 0
			case "Tones":
				set = len(cfg.Tones) != 0
			case "ChirpEndHz":
				set = cfg.ChirpEndHz != 0
			case "ChirpPeriodS":
				set = cfg.ChirpPeriodS != 0
			case "NoiseStdDev":
				set = cfg.NoiseStdDev != 0
			case "Seed":
				set = cfg.Seed != 0
			case "ImpulseEvery":
				set = cfg.ImpulseEvery != 0
			case "Components":
				set = len(cfg.Components) != 0
			}
			if set {
				return bad("field %s is not used by this signal", f)
			}
		}
		return nil
	}
	switch cfg.Signal {
	case SignalTone:
		if err := freqOK("FrequencyHz", cfg.FrequencyHz); err != nil {
			return err
		}
		if err := finite("Amplitude", cfg.Amplitude); err != nil {
			return err
		}
		if err := finite("PhaseRad", cfg.PhaseRad); err != nil {
			return err
		}
		return unused("Tones", "ChirpEndHz", "ChirpPeriodS", "NoiseStdDev", "Seed", "ImpulseEvery", "Components")
	case SignalMultitone:
		if len(cfg.Tones) == 0 {
			return bad("Tones is empty")
		}
		for i, t := range cfg.Tones {
			if err := freqOK(fmt.Sprintf("Tones[%d].FrequencyHz", i), t.FrequencyHz); err != nil {
				return err
			}
			if err := finite(fmt.Sprintf("Tones[%d].Amplitude", i), t.Amplitude); err != nil {
				return err
			}
			if err := finite(fmt.Sprintf("Tones[%d].PhaseRad", i), t.PhaseRad); err != nil {
				return err
			}
		}
		return unused("FrequencyHz", "Amplitude", "PhaseRad", "ChirpEndHz", "ChirpPeriodS", "NoiseStdDev", "Seed", "ImpulseEvery", "Components")
	case SignalChirp:
		if err := freqOK("FrequencyHz", cfg.FrequencyHz); err != nil {
			return err
		}
		if err := freqOK("ChirpEndHz", cfg.ChirpEndHz); err != nil {
			return err
		}
		if err := finite("Amplitude", cfg.Amplitude); err != nil {
			return err
		}
		if err := finite("PhaseRad", cfg.PhaseRad); err != nil {
			return err
		}
		if !(cfg.ChirpPeriodS > 0) || math.IsInf(cfg.ChirpPeriodS, 0) || cfg.ChirpPeriodS*rate < 1 {
			return bad("ChirpPeriodS %g s must be finite and at least one sample period (%g s)", cfg.ChirpPeriodS, 1/rate)
		}
		return unused("Tones", "NoiseStdDev", "Seed", "ImpulseEvery", "Components")
	case SignalNoise:
		if !(cfg.NoiseStdDev >= 0) || math.IsInf(cfg.NoiseStdDev, 0) {
			return bad("NoiseStdDev %g must be a non-negative finite number", cfg.NoiseStdDev)
		}
		return unused("FrequencyHz", "Amplitude", "PhaseRad", "Tones", "ChirpEndHz", "ChirpPeriodS", "ImpulseEvery", "Components")
	case SignalImpulse:
		if err := finite("Amplitude", cfg.Amplitude); err != nil {
			return err
		}
		if cfg.ImpulseEvery < 0 {
			return bad("ImpulseEvery %d is negative (0 = a single impulse)", cfg.ImpulseEvery)
		}
		return unused("FrequencyHz", "PhaseRad", "Tones", "ChirpEndHz", "ChirpPeriodS", "NoiseStdDev", "Seed", "Components")
	case SignalSum:
		if len(cfg.Components) == 0 {
			return bad("Components is empty")
		}
		self := cfg
		self.SampleRate = rate
		if parent != nil {
			self.Complex = parent.Complex
		}
		for i, c := range cfg.Components {
			if err := validateSynthetic(c, fmt.Sprintf("%scomponents[%d] ", where, i), &self); err != nil {
				return err
			}
		}
		return unused("FrequencyHz", "Amplitude", "PhaseRad", "Tones", "ChirpEndHz", "ChirpPeriodS", "NoiseStdDev", "Seed", "ImpulseEvery")
	case "":
		return fmt.Errorf("%s: Signal is empty (want tone, multitone, chirp, noise, impulse or sum)", label(""))
	default:
		return fmt.Errorf("%s: unknown signal %q (want tone, multitone, chirp, noise, impulse or sum)", label(""), cfg.Signal)
	}
}

// newGenerator builds the generator of a validated cfg at the given rate
// (components inherit the rate of their sum).
func newGenerator(cfg SyntheticConfig, rate float64) generator {
	switch cfg.Signal {
	case SignalTone:
		return newOsc(cfg.FrequencyHz, rate, cfg.Amplitude, cfg.PhaseRad)
	case SignalMultitone:
		g := make(sumGen, len(cfg.Tones))
		for i, t := range cfg.Tones {
			g[i] = newOsc(t.FrequencyHz, rate, t.Amplitude, t.PhaseRad)
		}
		return g
	case SignalChirp:
		return newChirp(cfg, rate)
	case SignalNoise:
		return &noiseGen{
			rng: rand.New(rand.NewPCG(uint64(cfg.Seed), noiseStream)),
			std: cfg.NoiseStdDev,
		}
	case SignalImpulse:
		return &impulseGen{amp: float32(cfg.Amplitude), every: int64(cfg.ImpulseEvery)}
	default: // SignalSum; validated
		g := make(sumGen, len(cfg.Components))
		for i, c := range cfg.Components {
			g[i] = newGenerator(c, rate)
		}
		return g
	}
}

// sumGen adds each of its generators in turn.
type sumGen []generator

func (g sumGen) add(dst []float32, ch int) {
	for _, c := range g {
		c.add(dst, ch)
	}
}

// anchorEvery is how often (in samples, a power of two) an oscillator resets
// its recurrence to the exactly computed phase. Anchors sit at absolute
// sample indices, so output does not depend on how reads are split, and the
// recurrence's rounding error cannot grow beyond anchorEvery steps.
const anchorEvery = 1024

// osc is a complex oscillator: a rotator recurrence re-anchored every
// anchorEvery samples to exp(j·2π·frac(c·n + φ)).
type osc struct {
	cps          float64 // cycles per sample
	phase        float64 // phase at sample 0, in cycles
	amp          float64
	n            int64   // index of the next sample
	re, im       float64 // exp(jθ(n))
	rotRe, rotIm float64 // exp(j2π·cps)
}

func newOsc(freq, rate, amp, phaseRad float64) *osc {
	c := freq / rate
	s, co := math.Sincos(2 * math.Pi * c)
	return &osc{cps: c, phase: phaseRad / (2 * math.Pi), amp: amp, rotRe: co, rotIm: s}
}

func (o *osc) add(dst []float32, ch int) {
	for len(dst) > 0 {
		if o.n&(anchorEvery-1) == 0 {
			cyc := fracMul(o.cps, float64(o.n)) + o.phase
			o.im, o.re = math.Sincos(2 * math.Pi * (cyc - math.Floor(cyc)))
		}
		// Samples up to the next anchor.
		seg := int(anchorEvery - o.n&(anchorEvery-1))
		if seg*ch > len(dst) {
			seg = len(dst) / ch
		}
		re, im, rr, ri, a := o.re, o.im, o.rotRe, o.rotIm, o.amp
		if ch == 2 {
			d := dst[:2*seg]
			for i := 0; i < len(d); i += 2 {
				d[i] += float32(a * re)
				d[i+1] += float32(a * im)
				re, im = re*rr-im*ri, re*ri+im*rr
			}
		} else {
			d := dst[:seg]
			for i := range d {
				d[i] += float32(a * re)
				re, im = re*rr-im*ri, re*ri+im*rr
			}
		}
		o.re, o.im = re, im
		o.n += int64(seg)
		dst = dst[seg*ch:]
	}
}

// fracMul returns c·x modulo 1 (possibly slightly outside [0,1)) with nearly
// full float64 precision even when c·x is large, using an FMA to recover the
// rounding error of the product. x must be an integer below 2^53.
func fracMul(c, x float64) float64 {
	hi := c * x
	lo := math.FMA(c, x, -hi)
	return (hi - math.Floor(hi)) + lo
}

// chirp is a repeating linear chirp computed directly from the sample index.
type chirp struct {
	f0     float64 // start frequency, cycles per sample
	k      float64 // frequency slope, cycles per sample per sample
	period float64 // samples per sweep (need not be an integer)
	cyc    float64 // phase advance over one sweep, cycles
	phase  float64 // phase at sample 0, cycles
	amp    float64
	n      int64
}

func newChirp(cfg SyntheticConfig, rate float64) *chirp {
	f0, f1 := cfg.FrequencyHz/rate, cfg.ChirpEndHz/rate
	p := cfg.ChirpPeriodS * rate
	return &chirp{
		f0: f0, k: (f1 - f0) / p, period: p,
		cyc:   p * (f0 + f1) / 2,
		phase: cfg.PhaseRad / (2 * math.Pi),
		amp:   cfg.Amplitude,
	}
}

func (c *chirp) add(dst []float32, ch int) {
	for i := 0; i < len(dst); i += ch {
		x := float64(c.n)
		m := math.Floor(x / c.period)
		s := math.FMA(-m, c.period, x) // samples into the current sweep
		if s < 0 {
			m--
			s += c.period
		} else if s >= c.period {
			m++
			s -= c.period
		}
		cyc := fracMul(c.cyc, m) + c.phase + s*(c.f0+0.5*c.k*s)
		sin, cos := math.Sincos(2 * math.Pi * (cyc - math.Floor(cyc)))
		dst[i] += float32(c.amp * cos)
		if ch == 2 {
			dst[i+1] += float32(c.amp * sin)
		}
		c.n++
	}
}

// noiseStream is the fixed second PCG seed word; only Seed varies streams.
const noiseStream = 0x9e3779b97f4a7c15

// noiseGen is white Gaussian noise.
type noiseGen struct {
	rng *rand.Rand
	std float64
}

func (g *noiseGen) add(dst []float32, ch int) {
	s := g.std
	if ch == 2 {
		s /= math.Sqrt2
	}
	for i := range dst {
		dst[i] += float32(s * g.rng.NormFloat64())
	}
}

// impulseGen places amp at sample 0 and every `every` samples.
type impulseGen struct {
	amp   float32
	every int64
	n     int64
}

func (g *impulseGen) add(dst []float32, ch int) {
	start := g.n
	end := start + int64(len(dst)/ch)
	g.n = end
	if g.every == 0 {
		if start == 0 && end > 0 {
			dst[0] += g.amp
		}
		return
	}
	first := (start + g.every - 1) / g.every * g.every
	for p := first; p < end; p += g.every {
		dst[(p-start)*int64(ch)] += g.amp
	}
}
