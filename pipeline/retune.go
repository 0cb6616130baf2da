package pipeline

import "github.com/sigproc/sigproc/stage"

// Retuner is a Backend whose stage parameters can change while it runs,
// at an exact sample and with nothing lost (see package stage for the
// semantics). Chain and Retune may be called from any goroutine while the
// consumer calls Next.
type Retuner interface {
	Backend
	// Chain returns the chain as it runs now, retunes accepted so far
	// included.
	Chain() stage.Chain
	// Retune checks each change (new parameters Stage for stage Index,
	// stage.CheckRetune, in order), prepares them off the data path and
	// schedules them all for the first block the backend has not yet
	// started; it returns them with their sample indices (At, ChainAt)
	// filled in. All or none are accepted: an error wraps
	// stage.ErrStructure (a change is structural),
	// stage.ErrRetuneUnsupported (this backend cannot apply it) or is a
	// *stage.StageError (bad parameters), and the run goes on unchanged.
	Retune(changes ...stage.Retune) ([]stage.Retune, error)
}

// Point numbers for a Watcher: the chain's input; stage i's output is
// point i.
const PointInput = -1

// Watcher is a Backend that shows the samples flowing through it: the
// control page's spectra read them.
type Watcher interface {
	// Watch installs w (nil removes it). The backend calls it on the
	// consumer goroutine for every block with the block's input
	// (PointInput) and each stage's output (point i, in that stage's
	// layout). w must not keep samples and must return quickly.
	Watch(w func(point int, samples []float32))
}
