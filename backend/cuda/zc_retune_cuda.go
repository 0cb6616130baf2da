//go:build cuda

package cuda

// Stubs of the zero-copy transport's retune, which its own change
// replaces (see retune_cuda.go for the dispatch).

// retuneZeroCopy refuses: the persistent kernel does not yet read new taps.
func (b *backend) retuneZeroCopy(taps []float32) (int64, error) { return 0, ErrRetune }

// zeroCopyRetuneRefusal is the zero-copy transport's standing refusal.
func (b *backend) zeroCopyRetuneRefusal() error { return ErrRetune }
