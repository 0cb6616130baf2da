//go:build cuda

package cudrv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gorgonia.org/cu"
)

// LoadModule loads one kernel module into the current context: the PTX
// file at path, or the embedded PTX when path is "". what names the
// kernels in messages.
func LoadModule(path, embedded, what string) (Module, error) {
	ptx := embedded
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Module{}, fmt.Errorf("gpu: read %s PTX: %w", what, err)
		}
		ptx = string(data)
	}
	if len(ptx) == 0 {
		return Module{}, fmt.Errorf("gpu: no %s PTX embedded in this build; run `make ptx` (needs nvcc) or set cuda.ptx_dir", what)
	}
	if err := RequireContext("load " + what + " kernels"); err != nil {
		return Module{}, err
	}
	mod, err := cu.LoadData(ptx)
	switch {
	case err == nil:
		return Module{mod}, nil
	case jitFailed(err):
		return Module{}, fmt.Errorf("gpu: load %s kernels (JIT of the PTX failed; a driver older than the PTX needs `make ptx` with its own toolkit, then cuda.ptx_dir: kernels): %w", what, err)
	}
	return Module{}, fmt.Errorf("gpu: load %s kernels: %w", what, err)
}

// jitFailed reports whether a module load failed in the PTX JIT (an old
// driver, a PTX it cannot read: `make ptx` is the way out) rather than for
// want of a context or of memory. cuModuleLoadData has many JIT codes,
// some newer than the pinned headers (222, unsupported PTX version), so
// the others are the ones named.
func jitFailed(err error) bool {
	for _, r := range []error{cu.InvalidContext, cu.ContextIsDestroyed, cu.OutOfMemory, cu.NotInitialized, cu.Deinitialized} {
		if errors.Is(err, r) {
			return false
		}
	}
	return true
}

// PTXFile is file inside dir, or "" (the embedded PTX) when dir is "".
func PTXFile(dir, file string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, file)
}
