// Package regfile opens files that are read whole, such as configs and
// taps files, without ever blocking: a FIFO, a device or a socket at the
// path is refused with a clear error instead of hanging the caller (a
// config reload, or the shutdown waiting for it).
package regfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrNotRegular means the path names something other than a regular file
// (after symlinks).
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading. The open itself cannot wait (O_NONBLOCK:
// a FIFO with no writer opens at once) and the descriptor is checked to
// be a regular file, so that what is read is what was checked. Reads of a
// regular file are unaffected by O_NONBLOCK.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A unix socket cannot be opened (ENXIO): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi.Mode())
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	return f, nil
}

func notRegular(path string, m os.FileMode) error {
	return &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s): sigproc reads it whole, and again on a reload", ErrNotRegular, kind(m))}
}

// kind names a file type for the error.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}
