//go:build !unix

package sink

import (
	"context"
	"os"
)

// openFIFO opens path for writing; there are no FIFOs to wait on here.
func openFIFO(_ context.Context, path string, _ func(string)) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}

// appending reports whether f was opened for appending; unknown here, so
// a header is not patched.
func appending(*os.File) bool { return true }
