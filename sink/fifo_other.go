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
