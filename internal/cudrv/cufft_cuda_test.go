//go:build cuda

package cudrv

import (
	"errors"
	"strings"
	"testing"
)

// TestCuFFTLoad opens the library as sigproc does and logs which one; the
// failure message must name what was tried and the way out.
func TestCuFFTLoad(t *testing.T) {
	lib, err := LoadCuFFT()
	if err != nil {
		t.Fatalf("%v (set %s or LD_LIBRARY_PATH; scripts/find-cufft.py finds it)", err, CuFFTEnv)
	}
	t.Logf("cuFFT %s, version %d", lib.Path, lib.Version)

	_, err = openCuFFT("/nonexistent/dir-or-file", []string{"libcufft-not-there.so.99"})
	if !errors.Is(err, ErrNoCuFFT) {
		t.Fatalf("missing library: got %v, want ErrNoCuFFT", err)
	}
	for _, want := range []string{"/nonexistent/dir-or-file", "libcufft-not-there.so.99", CuFFTEnv, "method: direct"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// A folder hint is searched for the sonames; a good file hint wins.
	if lib2, err := openCuFFT(lib.Path, nil); err != nil || lib2.Version != lib.Version {
		t.Errorf("file hint %s: %v", lib.Path, err)
	}
}
