package cuda

import (
	"errors"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestChainKernels: every chain kernel is a stage kind's, and a kind
// without one (it runs on the CPU only) is refused before a GPU is
// touched.
func TestChainKernels(t *testing.T) {
	for k := range chainKernels {
		if _, ok := stage.Lookup(k); !ok {
			t.Errorf("chain kernel for %q, which is no stage kind", k)
		}
	}
	c := stage.Chain{SampleRate: 1e6, Stages: []stage.Stage{stage.NewResample([]float32{1}, 3, 2)}}
	if err := CheckChain(c, Options{Transport: TransportExplicit}); err != nil {
		t.Fatal(err)
	}
	k := chainKernels[stage.KindResample]
	delete(chainKernels, stage.KindResample)
	defer func() { chainKernels[stage.KindResample] = k }()
	if err := CheckChain(c, Options{Transport: TransportExplicit}); !errors.Is(err, ErrKind) {
		t.Errorf("a kind without a kernel: %v, want ErrKind", err)
	}
}
