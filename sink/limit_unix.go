//go:build unix

package sink

import "syscall"

// openFileLimit returns the process's limit on open files (its soft
// RLIMIT_NOFILE, which Go raises to the hard one at start), 0 if unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
		return 0
	}
	return uint64(r.Cur)
}
