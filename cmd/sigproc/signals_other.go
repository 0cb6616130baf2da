//go:build !unix

package main

// stdioBroken cannot tell on this platform; a SIGPIPE there stops the run.
func stdioBroken() bool { return true }
