//go:build !unix

package capture

import (
	"errors"
	"os"
)

// mapFile is not available here: float32 files are read instead.
func mapFile(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("capture: memory-mapped files are not supported on this system")
}

func unmap([]byte) error { return nil }

// fileSize is f's size now.
func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
