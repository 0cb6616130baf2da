//go:build cuda

package cudrv

/*
#cgo LDFLAGS: -ldl
#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>

// cuFFT's types, declared here so the build needs no cufft.h: the library
// is opened at run time (its soname differs between CUDA releases).
typedef int sp_cufftHandle;
typedef int sp_cufftResult;

typedef sp_cufftResult (*sp_planMany_t)(sp_cufftHandle*, int, int*, int*, int, int, int*, int, int, int, int);
typedef sp_cufftResult (*sp_execR2C_t)(sp_cufftHandle, void*, void*);
typedef sp_cufftResult (*sp_execC2R_t)(sp_cufftHandle, void*, void*);
typedef sp_cufftResult (*sp_execC2C_t)(sp_cufftHandle, void*, void*, int);
typedef sp_cufftResult (*sp_setStream_t)(sp_cufftHandle, CUstream);
typedef sp_cufftResult (*sp_destroy_t)(sp_cufftHandle);
typedef sp_cufftResult (*sp_version_t)(int*);

static void* sp_dlopen(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static const char* sp_dlerror(void) { const char* e = dlerror(); return e ? e : "unknown dlopen error"; }
static void* sp_dlsym(void* h, const char* name) { return dlsym(h, name); }

static int sp_planMany(void* fn, sp_cufftHandle* plan, int n, int inembed, int idist, int onembed, int odist, int type, int batch) {
	int nn[1] = {n}, ie[1] = {inembed}, oe[1] = {onembed};
	return ((sp_planMany_t)fn)(plan, 1, nn, ie, 1, idist, oe, 1, odist, type, batch);
}
static int sp_execR2C(void* fn, sp_cufftHandle p, CUdeviceptr in, CUdeviceptr out) {
	return ((sp_execR2C_t)fn)(p, (void*)in, (void*)out);
}
static int sp_execC2R(void* fn, sp_cufftHandle p, CUdeviceptr in, CUdeviceptr out) {
	return ((sp_execC2R_t)fn)(p, (void*)in, (void*)out);
}
static int sp_execC2C(void* fn, sp_cufftHandle p, CUdeviceptr in, CUdeviceptr out, int dir) {
	return ((sp_execC2C_t)fn)(p, (void*)in, (void*)out, dir);
}
static int sp_setStream(void* fn, sp_cufftHandle p, CUstream s) { return ((sp_setStream_t)fn)(p, s); }
static int sp_destroy(void* fn, sp_cufftHandle p) { return ((sp_destroy_t)fn)(p); }
static int sp_version(void* fn, int* v) { return ((sp_version_t)fn)(v); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// CuFFTEnv names the variable that points at the cuFFT library: a file
// (libcufft.so.12) or a directory holding one, such as the lib/ folder of
// the pip package nvidia-cufft. It is tried before the sonames.
const CuFFTEnv = "SIGPROC_CUFFT"

// cufftSonames are tried in order: CUDA 13 ships libcufft.so.12, CUDA 12
// libcufft.so.11, CUDA 11.x (11.8, JetPack 5) libcufft.so.10, and a
// development install the unversioned name.
var cufftSonames = []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"}

// ErrNoCuFFT is wrapped when no cuFFT library could be opened.
var ErrNoCuFFT = errors.New("cuFFT not found")

// CuFFT is the cuFFT library opened with dlopen, with the entry points
// sigproc uses resolved by dlsym. The library works in the CUDA context
// current on the calling thread (the runtime API that cuFFT is built on
// adopts a context that the driver API made current, primary or not), so
// plans must be made, run and destroyed with the owning context current.
type CuFFT struct {
	Path    string // the library that was opened
	Version int    // cufftGetVersion, e.g. 12000 for CUDA 13.0's cuFFT 12.0

	planMany, execR2C, execC2R, execC2C, setStream, destroy, version unsafe.Pointer
}

var (
	cufftOnce sync.Once
	cufftLib  *CuFFT
	cufftErr  error
)

// LoadCuFFT opens cuFFT once per process: the file or directory in
// $SIGPROC_CUFFT when set, else the sonames in turn on the loader's path
// (LD_LIBRARY_PATH). The error lists what was tried.
func LoadCuFFT() (*CuFFT, error) {
	cufftOnce.Do(func() { cufftLib, cufftErr = openCuFFT(os.Getenv(CuFFTEnv), cufftSonames) })
	return cufftLib, cufftErr
}

// openCuFFT tries hint (a file, or a folder holding one of sonames), then
// sonames on the loader's path.
func openCuFFT(hint string, sonames []string) (*CuFFT, error) {
	var cands []string
	if hint != "" {
		if st, err := os.Stat(hint); err == nil && st.IsDir() {
			for _, s := range sonames {
				cands = append(cands, filepath.Join(hint, s))
			}
		} else {
			cands = append(cands, hint)
		}
	}
	cands = append(cands, sonames...)
	var tried []string
	for _, c := range cands {
		cs := C.CString(c)
		h := C.sp_dlopen(cs)
		C.free(unsafe.Pointer(cs))
		if h == nil {
			tried = append(tried, fmt.Sprintf("%s (%s)", c, C.GoString(C.sp_dlerror())))
			continue
		}
		lib := &CuFFT{Path: c}
		syms := []struct {
			name string
			p    *unsafe.Pointer
		}{
			{"cufftPlanMany", &lib.planMany}, {"cufftExecR2C", &lib.execR2C}, {"cufftExecC2R", &lib.execC2R},
			{"cufftExecC2C", &lib.execC2C}, {"cufftSetStream", &lib.setStream}, {"cufftDestroy", &lib.destroy},
			{"cufftGetVersion", &lib.version},
		}
		var missing []string
		for _, s := range syms {
			cn := C.CString(s.name)
			*s.p = C.sp_dlsym(h, cn)
			C.free(unsafe.Pointer(cn))
			if *s.p == nil {
				missing = append(missing, s.name)
			}
		}
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s (lacks %s)", c, strings.Join(missing, ", ")))
			continue
		}
		var v C.int
		if r := C.sp_version(lib.version, &v); r == 0 {
			lib.Version = int(v)
		}
		return lib, nil
	}
	hintMsg := "$" + CuFFTEnv + " unset"
	if hint != "" {
		hintMsg = "$" + CuFFTEnv + "=" + hint
	}
	return nil, fmt.Errorf("%w: tried %s (%s); set %s to the library or its folder (pip's nvidia-cufft: nvidia/cufft/lib or nvidia/cu13/lib), or use method: direct, which works without it",
		ErrNoCuFFT, strings.Join(tried, "; "), hintMsg, CuFFTEnv)
}

// FFT kinds for NewFFTPlan (cufftType).
const (
	FFTR2C = 0x2a // real to half-spectrum complex
	FFTC2R = 0x2c // half-spectrum complex to real
	FFTC2C = 0x29 // complex to complex
)

// FFT directions for ExecC2C.
const (
	FFTForward = -1
	FFTInverse = 1
)

// FFTPlan is a batched one-dimensional cuFFT plan in the context that
// was current when it was made.
type FFTPlan struct {
	lib    *CuFFT
	h      C.sp_cufftHandle
	kind   int
	closed bool
}

var cufftErrNames = [...]string{"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
	"CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED", "CUFFT_INVALID_SIZE",
	"CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST", "CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR",
	"CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED", "CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED"}

func cufftResult(r C.int, what string) error {
	if r == 0 {
		return nil
	}
	name := "unknown cufftResult"
	if int(r) < len(cufftErrNames) {
		name = cufftErrNames[r]
	}
	return fmt.Errorf("%s: %s (%d)", what, name, int(r))
}

// NewFFTPlan makes a plan of batch transforms of n points of kind (FFTR2C,
// FFTC2R or FFTC2C), each input idist elements after the previous one
// and each output odist elements after (elements of the kind's input and
// output types: float32 or complex64), contiguous within a transform.
func (l *CuFFT) NewFFTPlan(n, idist, odist, kind, batch int) (*FFTPlan, error) {
	if l == nil {
		return nil, ErrNoCuFFT
	}
	p := &FFTPlan{lib: l, kind: kind}
	inembed, onembed := n, n
	switch kind {
	case FFTR2C:
		onembed = n/2 + 1
	case FFTC2R:
		inembed = n/2 + 1
	}
	r := C.sp_planMany(l.planMany, &p.h, C.int(n), C.int(inembed), C.int(idist), C.int(onembed), C.int(odist), C.int(kind), C.int(batch))
	if err := cufftResult(r, fmt.Sprintf("cufftPlanMany(n %d, kind %#x, batch %d)", n, kind, batch)); err != nil {
		return nil, err
	}
	return p, nil
}

// SetStream makes later executions run on st.
func (p *FFTPlan) SetStream(st Stream) error {
	s := *(*C.CUstream)(unsafe.Pointer(&st.s))
	return cufftResult(C.sp_setStream(p.lib.setStream, p.h, s), "cufftSetStream")
}

// Exec enqueues the plan's transforms from in to out on its stream: for
// FFTC2C, dir is FFTForward or FFTInverse (unnormalised); the others
// ignore it.
func (p *FFTPlan) Exec(in, out DevicePtr, dir int) error {
	if p.closed {
		return errors.New("cufft: exec after destroy")
	}
	ci, co := C.CUdeviceptr(in), C.CUdeviceptr(out)
	switch p.kind {
	case FFTR2C:
		return cufftResult(C.sp_execR2C(p.lib.execR2C, p.h, ci, co), "cufftExecR2C")
	case FFTC2R:
		return cufftResult(C.sp_execC2R(p.lib.execC2R, p.h, ci, co), "cufftExecC2R")
	}
	return cufftResult(C.sp_execC2C(p.lib.execC2C, p.h, ci, co, C.int(dir)), "cufftExecC2C")
}

// Destroy frees the plan; its executions must have finished. It is safe
// to call twice.
func (p *FFTPlan) Destroy() error {
	if p == nil || p.closed {
		return nil
	}
	p.closed = true
	return cufftResult(C.sp_destroy(p.lib.destroy, p.h), "cufftDestroy")
}
