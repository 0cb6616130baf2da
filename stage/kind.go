package stage

import (
	"fmt"
	"strings"
)

// A stage kind is one type in one table, as image.RegisterFormat's
// formats and database/sql's drivers are, and as liquid-dsp has one
// object per block: each kind's Def (shift.go, fir.go, resample.go,
// channelize.go, select.go) says what its stages compute — validation,
// output rate and complexness, the rate its taps are designed at, what a
// retune may change — and builds its CPU kernel. The rest of the code asks the table (Stage.Def) instead
// of switching on the kind. The table is a literal list, not a registry
// filled by init functions, so that it is complete in every binary and
// there is no order of registration to get wrong.
//
// A new kind is: its file here (its Kind constant, a constructor, its
// Def) and its line in the table below; its CPU kernel (package filter
// or mixer, built by NewProcessor); its config entry (a field of
// config.Stage, keyed by the kind's name, and its type in
// config/stage_NAME.go); its GPU kernel, registered in backend/cuda's
// kinds.go (a kind without one runs on the CPU only); and their tests.
// A kind with parameters other than Stage's adds them to Stage, Param
// and control's StageStatus. A kind whose CPU kernel can resume a stream
// implements Resumer (retunes), and one whose block can be cut into
// segments on several cores Splitter.

// Def is a stage kind: the rules its stages follow on every backend and
// its CPU kernel. The methods take the stage they are asked about, which
// is of the Def's kind.
type Def interface {
	// Kind is the kind's name, as a config's stages list writes it.
	Kind() Kind
	// Params says which of Stage's parameters the kind uses.
	Params() Param
	// Check returns the first problem with s for an input at rate S/s, or
	// nil. Its Index is left 0 (Chain.Validate sets it).
	Check(s Stage, rate float64) *StageError
	// Factors are the stage's rate change up/down: it outputs
	// ceil(n·up/down) samples for n inputs, at rate in·up/down.
	Factors(s Stage) (up, down int)
	// OutComplex reports whether the output is complex for an input that
	// is (in = true) or is not complex.
	OutComplex(s Stage, in bool) bool
	// Shift is how far the stage moves its input's content, in Hz.
	Shift(s Stage) float64
	// Design returns the rate the stage's taps run at for an input at in
	// S/s (what a design of them is computed at), and the passband gain
	// designed taps get.
	Design(s Stage, in float64) (rate, gain float64)
	// Retune returns s, new parameters for the running stage old, with
	// those s leaves out (zero) taken from old; the error says how s
	// would change the chain's structure (CheckRetune wraps it in
	// ErrStructure).
	Retune(old, s Stage) (Stage, error)
	// Describe says what s does in a few words, e.g. "fir 129 taps ÷8".
	Describe(s Stage) string
	// NewProcessor builds s's CPU kernel for the input in.
	NewProcessor(s Stage, in Input) (Processor, error)
}

// Param is a set of Stage's parameters.
type Param uint8

// The parameters of a stage (Stage's fields besides Kind).
const (
	ParamFrequency Param = 1 << iota // FrequencyHz
	ParamTaps                        // Taps
	ParamDecimate                    // Decimate
	ParamFactors                     // Up and Down
	ParamMethod                      // Method
	ParamBank                        // Bank
	ParamKeep                        // Keep
)

// Input is what a stage's CPU kernel is built for: its input's rate (S/s)
// and complexness, the most input samples (frames) of a block, and the
// channels of a frame (0 means 1; more than 1 only after a Fanout stage).
type Input struct {
	Rate     float64
	Complex  bool
	MaxIn    int
	Channels int
}

// Processor is a stage's CPU kernel: Process writes the stage's output
// for src (interleaved I/Q when complex) to dst and returns the number of
// float32 values written; Reset restarts the stream. Process allocates
// nothing.
type Processor interface {
	Process(dst, src []float32) (int, error)
	Reset()
}

// Resumer is implemented by the Def of a kind whose CPU kernel a retune
// can replace while the stream runs; the CPU backend refuses to retune
// the other kinds (ErrRetuneUnsupported).
type Resumer interface {
	// KeepsHistory reports whether Resume reads the stage's recent input:
	// the CPU backend then keeps it from the start of the stream.
	KeepsHistory() bool
	// Resume makes next, the kernel NewProcessor built for the new
	// parameters, continue the stream of prev, the running kernel it
	// replaces (of the same kind and structure): at is the index of the
	// stage's next input sample, history its most recent input samples,
	// oldest first (nil unless KeepsHistory). It runs between two blocks
	// and allocates nothing.
	Resume(next, prev Processor, history []float32, at int64)
}

// Splitter is implemented by the Def of a kind whose CPU kernel can run
// one block as segments at once, each by a copy of the kernel (one that
// NewProcessor built for the same stage and Input), with output
// bit-identical to the running kernel on the whole block. The CPU backend
// runs the other kinds whole.
type Splitter interface {
	// Cut appends to starts where at most k segments of a block of n
	// input samples, each at least minSeg long, start (0 first) when run,
	// s's kernel, processes the block; one start means the block runs
	// whole. It allocates nothing when starts has room for k values.
	Cut(s Stage, run Processor, n, k, minSeg int, starts []int) []int
	// History is the input samples before its segment that a copy needs.
	History(s Stage, run Processor) int
	// Seek makes p, a copy of run, continue run's stream at the stage's
	// input sample at, history being the input samples just before it
	// (at least History's, in the stream's layout). p may be run, to move
	// it past samples its copies processed. It allocates nothing.
	Seek(p, run Processor, history []float32, at int64)
}

// Fanout is implemented by the Def of a kind whose output frames hold
// other channels than its input's: a channelizer makes M of one, a
// selection keeps some.
type Fanout interface {
	// Fan returns s's output channels for the input channels in and an
	// input at rate S/s, or why s cannot take in's channels.
	Fan(s Stage, in []Channel, rate float64) ([]Channel, error)
}

// Channel is one channel of a chain's frames, as Chain.Channels gives it.
type Channel struct {
	// ID names the channel: its index in the chain's input frames, or in
	// the output of the Fanout stage that made it (a channelizer's k).
	ID int
	// Centre is the frequency of the chain's input stream that the
	// channel's baseband 0 shows, in Hz.
	Centre float64
}

// kinds is the table of stage kinds, in the order messages list them.
var kinds = [...]Def{shift{}, fir{}, resample{}, channelize{}, selection{}}

// Kinds returns every stage kind, in the order messages list them.
func Kinds() []Def { return append([]Def(nil), kinds[:]...) }

// Lookup returns the kind named k.
func Lookup(k Kind) (Def, bool) {
	for _, d := range kinds {
		if d.Kind() == k {
			return d, true
		}
	}
	return nil, false
}

// Def returns the stage's kind. A kind that is not in the table gets one
// that passes its input through and that Check refuses, so that a chain's
// rates and counts stay defined until Validate reports it.
func (s Stage) Def() Def {
	if d, ok := Lookup(s.Kind); ok {
		return d
	}
	return unknown{s.Kind}
}

// unknown is the Def of a kind not in the table.
type unknown struct{ kind Kind }

func (u unknown) Kind() Kind                                  { return u.kind }
func (unknown) Params() Param                                 { return 0 }
func (u unknown) Describe(Stage) string                       { return string(u.kind) }
func (unknown) Factors(Stage) (int, int)                      { return 1, 1 }
func (unknown) OutComplex(_ Stage, in bool) bool              { return in }
func (unknown) Shift(Stage) float64                           { return 0 }
func (unknown) Design(_ Stage, in float64) (float64, float64) { return in, 1 }
func (unknown) Retune(_, s Stage) (Stage, error)              { return s, nil }

func (u unknown) Check(Stage, float64) *StageError {
	return &StageError{Msg: fmt.Sprintf("unknown kind %q (want %s)", u.kind, kindNames())}
}

func (u unknown) NewProcessor(Stage, Input) (Processor, error) {
	return nil, fmt.Errorf("unknown stage kind %q", u.kind)
}

// kindNames lists the kinds for a message: "shift, fir, … or select".
func kindNames() string {
	var b strings.Builder
	for i, d := range kinds {
		switch {
		case i == len(kinds)-1 && i > 0:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(string(d.Kind()))
	}
	return b.String()
}
