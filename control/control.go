package control

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// Options describe the run a Control watches and retunes.
type Options struct {
	// Backend runs the chain. When it is a pipeline.Retuner, stages can be
	// retuned; when it is a pipeline.Watcher, every point's spectrum is
	// available (otherwise only the output's, from the blocks written).
	Backend pipeline.Backend
	// Chain is the chain the backend was built for.
	Chain stage.Chain
	// BlockSize and Slots are the ring's geometry, for its fill.
	BlockSize, Slots int
	// Log receives a line per retune and reload.
	Log zerolog.Logger
	// Watch feeds the spectra: the backend copies every point's recent
	// samples (pipeline.Watcher). Off, a Control only retunes and reloads,
	// and costs the data path nothing.
	Watch bool
	// AllowedHosts are the host names served besides IP literals and
	// localhost (control.allowed_hosts); other names get 421.
	AllowedHosts []string
	// Token, when not empty, is what writes must carry (control.token).
	Token string
	// Retuned, if set, is told of each accepted retune, with the chain as
	// it runs from then on (a SigMF sink records a shift's new centre
	// frequency). Calls are serialised.
	Retuned func(now stage.Chain, done []stage.Retune)
}

// Control is the live view of one run and its retuning. Its methods are
// safe for concurrent use.
type Control struct {
	o       Options
	start   time.Time
	retuner pipeline.Retuner // nil when the backend cannot retune
	watched bool             // the backend feeds every point

	stats  atomic.Pointer[pipeline.Stats]
	lat    latencies
	scopes []*scope // scopes[0] the input, scopes[i+1] stage i's output

	mu      sync.Mutex // serialises retunes, guards what follows
	retunes uint64
	last    []stage.Retune
	version atomic.Uint64 // counts retunes applied, for the cached responses

	work    chan struct{} // one expensive API computation at a time
	bodies  chan struct{} // bodies decoded at once
	reads   *limiter      // the API's reads
	cacheMu sync.Mutex
	cache   map[renderKey]*rendered
	// channelAnswers counts the cache's keys of channels other than 0.
	channelAnswers int
}

// maxBodies is how many request bodies are decoded at once; each holds
// up to a body's worth of buffer and its taps (about 4 MB at 1 MiB).
const maxBodies = 2

// New returns the control of a run; call it before the run starts and
// pass its Instrument'ed options to pipeline.Run.
func New(o Options) *Control {
	c := &Control{o: o, start: time.Now(), work: make(chan struct{}, 1), bodies: make(chan struct{}, maxBodies),
		reads: newLimiter(readRate, readBurst), cache: map[renderKey]*rendered{}}
	c.retuner, _ = o.Backend.(pipeline.Retuner)
	rate, cplx, chans := o.Chain.SampleRate, o.Chain.Complex, o.Chain.ChannelCount()
	c.scopes = append(c.scopes, newScope(rate, cplx, chans))
	for _, s := range o.Chain.Stages {
		rate, cplx, chans = s.Rate(rate), s.OutComplex(cplx), s.OutChannels(chans)
		c.scopes = append(c.scopes, newScope(rate, cplx, chans))
	}
	if w, ok := o.Backend.(pipeline.Watcher); ok && o.Watch {
		c.watched = true
		w.Watch(func(point int, samples []float32) {
			if point+1 >= 0 && point+1 < len(c.scopes) {
				c.scopes[point+1].write(samples)
			}
		})
	}
	return c
}

// Instrument returns opts with Progress and OnBlock also feeding the
// control's status (hooks already set are called first). The OnBlock
// hook allocates nothing.
func (c *Control) Instrument(opts pipeline.Options) pipeline.Options {
	prog := opts.Progress
	opts.Progress = func(st pipeline.Stats) {
		if prog != nil {
			prog(st)
		}
		c.stats.Store(&st)
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 200 * time.Millisecond
	}
	onBlock := opts.OnBlock
	out := c.scopes[len(c.scopes)-1]
	opts.OnBlock = func(o pipeline.Output, seenNs int64) {
		if onBlock != nil {
			onBlock(o, seenNs)
		}
		c.lat.add(seenNs - o.Timestamp)
		if !c.watched && c.o.Watch {
			out.write(o.Samples)
		}
	}
	return opts
}

// Update stores the final stats of the run.
func (c *Control) Update(st pipeline.Stats) { c.stats.Store(&st) }

// Chain returns the chain as it runs now.
func (c *Control) Chain() stage.Chain {
	if c.retuner != nil {
		return c.retuner.Chain()
	}
	return c.o.Chain
}

// ErrNoRetune wraps the refusal of a backend that cannot retune at all.
var ErrNoRetune = fmt.Errorf("%w on this backend", stage.ErrRetuneUnsupported)

// Retune applies the changes at one block boundary (see
// pipeline.Retuner) and logs them; errors are the backend's.
func (c *Control) Retune(changes ...stage.Retune) ([]stage.Retune, error) {
	if c.retuner == nil {
		return nil, fmt.Errorf("%w (%s)", ErrNoRetune, c.o.Backend.Name())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	done, err := c.retuner.Retune(changes...)
	if err != nil {
		return nil, err
	}
	c.retunes += uint64(len(done))
	c.last = done
	c.version.Add(1)
	if c.o.Retuned != nil {
		c.o.Retuned(c.retuner.Chain(), done)
	}
	for _, r := range done {
		c.o.Log.Info().Int("stage", r.Index).Str("to", describe(r.Stage)).Int64("at_sample", r.At).
			Int64("chain_input_sample", r.ChainAt).Msg("stage retuned")
	}
	return done, nil
}

// Reload retunes the stages whose parameters differ in next, a chain
// built from the config file again, all at one block boundary. A change
// of structure is refused (stage.ErrStructure) and the run goes on.
// Nothing changed returns no retunes and no error.
func (c *Control) Reload(next stage.Chain) ([]stage.Retune, error) {
	cur := c.Chain()
	if err := stage.SameStructure(cur, next); err != nil {
		return nil, err
	}
	var changes []stage.Retune
	for i, s := range next.Stages {
		if !sameParams(cur.Stages[i], s) {
			changes = append(changes, stage.Retune{Index: i, Stage: s})
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	return c.Retune(changes...)
}

// sameParams reports whether two stages of one structure have the same
// parameters.
func sameParams(a, b stage.Stage) bool {
	return a.Kind == b.Kind && a.FrequencyHz == b.FrequencyHz && slices.Equal(a.Taps, b.Taps) &&
		a.Decimate == b.Decimate && a.Up == b.Up && a.Down == b.Down && methodOf(a) == methodOf(b)
}

func methodOf(s stage.Stage) string {
	if s.Method == "" {
		return "auto"
	}
	return s.Method
}

// describe is a stage in a few words for the log.
func describe(s stage.Stage) string {
	return stage.Chain{Stages: []stage.Stage{s}}.String()
}

// retuneClass maps a retune error to its HTTP status: 409 for a change
// the running chain or backend cannot take, 422 for bad parameters.
func retuneClass(err error) int {
	var se *stage.StageError
	switch {
	case errors.Is(err, stage.ErrStructure), errors.Is(err, stage.ErrRetuneUnsupported):
		return 409
	case errors.As(err, &se), errors.Is(err, stage.ErrChain):
		return 422
	}
	return 500
}

// backendParts splits a backend name such as "cuda/zero-copy" into the
// backend and its transport.
func backendParts(name string) (string, string) {
	b, t, _ := strings.Cut(name, "/")
	return b, t
}
