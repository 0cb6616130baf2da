//go:build cuda

package cudrv

import (
	"errors"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/kernels"
)

// TestLoadModuleOnAnotherThread loads kernels from a goroutine other than
// the context's owner, as a subtest does: without Bind the load must fail
// naming the thread (the H200 run's chain subtests got the driver's bare
// InvalidContext under a hint to rebuild the PTX); with Bind it loads.
func TestLoadModuleOnAnotherThread(t *testing.T) {
	ctx, err := NewContext(0, SchedBlockingSync)
	if err != nil {
		t.Skipf("no usable CUDA context: %v", err)
	}
	defer func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
	}()
	load := func(bind bool) error {
		done := make(chan error)
		go func() {
			if bind {
				release, err := ctx.Bind()
				if err != nil {
					done <- err
					return
				}
				defer release()
			}
			mod, err := LoadModule("", kernels.BatchPTX, "batch")
			if err == nil {
				err = mod.Unload()
			}
			done <- err
		}()
		return <-done
	}
	err = load(false)
	if !errors.Is(err, ErrNoContext) || strings.Contains(err.Error(), "make ptx") {
		t.Fatalf("unbound goroutine: got %v, want ErrNoContext without the PTX hint", err)
	}
	t.Logf("unbound: %v", err)
	if err := load(true); err != nil {
		t.Fatalf("bound goroutine: %v", err)
	}
	// The owner's thread still has its context.
	mod, err := LoadModule("", kernels.BatchPTX, "batch")
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	if err := mod.Unload(); err != nil {
		t.Fatal(err)
	}
}
