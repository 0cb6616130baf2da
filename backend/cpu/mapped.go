package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"unsafe"

	"github.com/sigproc/sigproc/capture"
)

// mapped is the source's memory the backend takes blocks from in place
// (UseRegion): a recording mapped from its file. The source's scan for
// NaN (its own, or the check it left to the chain, checkViews) reads each
// block first and reports a truncated file, but a file truncated after
// that takes the pages away, and reading one raises SIGBUS. So everything
// that reads a block (the consumer's goroutine, the pool's) runs under
// guard, which turns such a fault into an error wrapping
// capture.ErrTruncated, as the source's own reads report it, instead of
// the process dying. The zero value guards nothing: blocks read into the
// ring cannot fault.
type mapped struct{ lo, n uintptr }

func newMapped(region []byte) mapped {
	return mapped{lo: uintptr(unsafe.Pointer(unsafe.SliceData(region))), n: uintptr(len(region))}
}

// guard returns f(lo, hi), or, where f faulted on a page of the mapping,
// the truncation's error (fault). Other panics go on.
func (m mapped) guard(f func(lo, hi int) error, lo, hi int) (err error) {
	if m.n == 0 {
		return f(lo, hi)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer m.recovered(&err)
	return f(lo, hi)
}

// recovered, deferred by a reader of the mapping that set
// debug.SetPanicOnFault, sets *err to the fault it recovers (fault).
func (m mapped) recovered(err *error) {
	if e := recover(); e != nil {
		*err = m.fault(e)
	}
}

// fault returns the error for e, a recovered panic, where it is a fault
// on the mapping, and panics with e again otherwise: a fault whose address
// is not known (qemu-user does not pass it on) included, as nothing here
// can tell it from a bug. The chain is then in the middle of a block: the
// run ends.
func (m mapped) fault(e any) error {
	if _, memory := e.(runtime.Error); memory {
		if fe, ok := e.(interface{ Addr() uintptr }); ok && fe.Addr()-m.lo < m.n {
			return fmt.Errorf("a read of the source's memory faulted, %d bytes into its mapping: the file was truncated during the run: %w",
				fe.Addr()-m.lo, capture.ErrTruncated)
		}
	}
	panic(e)
}
