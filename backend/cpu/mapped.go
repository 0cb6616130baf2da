package cpu

import (
	"errors"
	"fmt"
	"runtime/debug"
	"unsafe"
)

// ErrSourceFault is the error for a block taken in place whose memory
// faulted: its recording, mapped from a file, was truncated during the
// run.
var ErrSourceFault = errors.New("the source's memory faulted: its file was truncated during the run")

// mapped is the source's memory the backend takes blocks from in place
// (UseRegion): a recording mapped from its file. The source scans each
// block before it is published, but a file truncated after that takes
// the pages away, and reading one raises SIGBUS. So everything that reads
// a block (the consumer's goroutine, the pool's) runs under guard, which
// turns such a fault into ErrSourceFault instead of the process dying.
// The zero value guards nothing: blocks read into the ring cannot fault.
type mapped struct{ lo, n uintptr }

func newMapped(region []byte) mapped {
	return mapped{lo: uintptr(unsafe.Pointer(unsafe.SliceData(region))), n: uintptr(len(region))}
}

// guard returns f(lo, hi), or, where f faulted on a page of the mapping,
// ErrSourceFault. Other panics go on.
func (m mapped) guard(f func(lo, hi int) error, lo, hi int) (err error) {
	if m.n == 0 {
		return f(lo, hi)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			err = m.fault(e)
		}
	}()
	return f(lo, hi)
}

// fault returns ErrSourceFault for e, a recovered panic, where it is a
// fault on the mapping, and panics with e again otherwise.
func (m mapped) fault(e any) error {
	if fe, ok := e.(interface{ Addr() uintptr }); ok && fe.Addr()-m.lo < m.n {
		return fmt.Errorf("%w (byte %d of its mapping)", ErrSourceFault, fe.Addr()-m.lo)
	}
	panic(e)
}
