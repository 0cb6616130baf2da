//go:build unix

package main

import "golang.org/x/sys/unix"

// stdioBroken reports whether stdout or stderr is a pipe (or socket) whose
// reader has gone: poll reports POLLERR (or POLLHUP) on its write end.
func stdioBroken() bool {
	fds := []unix.PollFd{{Fd: 1}, {Fd: 2}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return false
	}
	for _, p := range fds {
		if p.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
