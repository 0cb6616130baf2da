//go:build cuda

// Package cuinit initialises the CUDA driver before gorgonia.org/cu does.
//
// gorgonia.org/cu calls cuInit in its package init and exits the process
// with a terse message when that fails (no device, driver mismatch). Go
// initialises packages in import-path order among those whose imports are
// ready; this package imports only what cu imports too and sorts first
// (github.com/... < gorgonia.org/...), so its init runs before cu's. When
// cuInit fails here, the process either re-executes the CPU-only sigproc
// that `make cuda` installs beside the cuda binary (with
// SIGPROC_CUDA_UNAVAILABLE set to the reason, so `backend: auto` falls back
// with a log line and `backend: cuda` fails with that reason), or, if there
// is none, exits with a message that says what failed and what to run
// instead. Either way no user sees cu's exit or a hang.
//
// A machine without the NVIDIA driver at all lacks libcuda.so.1, and the
// dynamic loader refuses the cuda binary before any Go code runs; the README
// says to use the pure-Go binary there.
package cuinit

/*
#include <cuda.h>
static int sp_cuinit(void) { return (int)cuInit(0); }
static const char* sp_errname(int r) {
	const char* s = 0;
	if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS || s == 0) return "unknown CUDA error";
	return s;
}
static const char* sp_errstr(int r) {
	const char* s = 0;
	if (cuGetErrorString((CUresult)r, &s) != CUDA_SUCCESS || s == 0) return "";
	return s;
}
*/
import "C"

import (
	"os"
	"syscall"
)

// FallbackEnv names the variable that carries the reason to the CPU-only
// binary.
const FallbackEnv = "SIGPROC_CUDA_UNAVAILABLE" // same as gpu.FallbackEnv

// CPUBinary is the name of the CPU-only binary looked for beside this one.
const CPUBinary = "sigproc"

func init() {
	r := C.sp_cuinit()
	if r == 0 {
		return
	}
	reason := "cuInit failed: " + C.GoString(C.sp_errname(r)) + " (" + C.GoString(C.sp_errstr(r)) + ")"
	if exe, err := os.Executable(); err == nil {
		cpu := dir(exe) + "/" + CPUBinary
		if cpu != exe {
			if _, err := os.Stat(cpu); err == nil {
				env := append(os.Environ(), FallbackEnv+"="+reason)
				_ = syscall.Exec(cpu, append([]string{cpu}, os.Args[1:]...), env)
			}
		}
	}
	os.Stderr.WriteString("sigproc: CUDA is not usable on this machine: " + reason + "\n" +
		"  This is the CUDA build of sigproc. Run the pure-Go binary instead (go build ./cmd/sigproc, backend: cpu),\n" +
		"  or install it beside this one as '" + CPUBinary + "' so that backend: auto falls back to the CPU by itself.\n")
	os.Exit(3)
}

// dir is filepath.Dir for absolute Linux paths, written out so this package
// imports nothing beyond what gorgonia.org/cu already does.
func dir(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "."
}
