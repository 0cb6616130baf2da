//go:build cuda

package cudrv

/*
#include <cuda.h>

static CUresult sp_hostAlloc(void** p, size_t n, unsigned int flags) { return cuMemHostAlloc(p, n, flags); }
static CUresult sp_hostDevPtr(CUdeviceptr* d, void* p) { return cuMemHostGetDevicePointer(d, p, 0); }
static CUresult sp_hostRegister(void* p, size_t n, unsigned int flags) { return cuMemHostRegister(p, n, flags); }
static CUresult sp_hostUnregister(void* p) { return cuMemHostUnregister(p); }
static CUresult sp_freeHost(void* p) { return cuMemFreeHost(p); }
static CUresult sp_devAttr(int* v, int attr, CUdevice d) { return cuDeviceGetAttribute(v, (CUdevice_attribute)attr, d); }
static CUresult sp_funcSetSmem(CUfunction f, int bytes) {
	return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}
static const char* sp_errname(CUresult r) {
	const char* s = 0;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == 0) return "unknown CUDA error";
	return s;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// result is the one place a CUresult of sigproc's own cgo calls becomes
// an error: what was called, the result's name and number.
func result(r C.CUresult, what string) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (CUresult %d)", what, C.GoString(C.sp_errname(r)), int(r))
}

// HostBuf is page-locked host memory, optionally mapped into the device's
// address space.
type HostBuf struct {
	ptr        unsafe.Pointer
	size       int64
	dev        DevicePtr // 0 unless mapped
	registered bool      // true: memory owned by the caller, pinned by cuMemHostRegister
}

// Bytes views the buffer.
func (h *HostBuf) Bytes() []byte { return unsafe.Slice((*byte)(h.ptr), h.size) }

// DevicePtr is the device address of a mapped buffer (0 if not mapped).
func (h *HostBuf) DevicePtr() DevicePtr { return h.dev }

// Ptr is the host address.
func (h *HostBuf) Ptr() unsafe.Pointer { return h.ptr }

// AllocHost pins size bytes (page-aligned) with cuMemHostAlloc. mapped adds
// DEVICEMAP and fetches the device pointer; wc adds WRITECOMBINED, which
// suits memory the host only writes. The memory is zeroed.
func AllocHost(size int64, mapped, wc bool) (*HostBuf, error) {
	size = PageAlign(size)
	flags := C.uint(hostAllocPortable)
	if mapped {
		flags |= hostAllocDevicemap
	}
	if wc {
		flags |= hostAllocWriteCombined
	}
	var p unsafe.Pointer
	if err := result(C.sp_hostAlloc(&p, C.size_t(size), flags), fmt.Sprintf("cuMemHostAlloc(%d bytes)", size)); err != nil {
		return nil, err
	}
	h := &HostBuf{ptr: p, size: size}
	clear(h.Bytes())
	return h.mapped(mapped)
}

// mapped fetches the device pointer of a buffer pinned with DEVICEMAP, and
// frees the buffer if that fails.
func (h *HostBuf) mapped(mapped bool) (*HostBuf, error) {
	if !mapped {
		return h, nil
	}
	var d C.CUdeviceptr
	if err := result(C.sp_hostDevPtr(&d, h.ptr), "cuMemHostGetDevicePointer"); err != nil {
		_ = h.Free()
		return nil, err
	}
	h.dev = DevicePtr(d)
	return h, nil
}

// RegisterHost pins memory that already exists (its start and length must
// be page-aligned) with cuMemHostRegister and maps it when mapped is set.
// The memory must stay alive until Free.
func RegisterHost(b []byte, mapped bool) (*HostBuf, error) {
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))&4095 != 0 || len(b)&4095 != 0 {
		return nil, fmt.Errorf("cudrv: cuMemHostRegister needs page-aligned memory of whole pages")
	}
	p := unsafe.Pointer(&b[0])
	flags := C.uint(hostRegisterPortable)
	if mapped {
		flags |= hostRegisterDevicemap
	}
	if err := result(C.sp_hostRegister(p, C.size_t(len(b)), flags), "cuMemHostRegister"); err != nil {
		return nil, err
	}
	h := &HostBuf{ptr: p, size: int64(len(b)), registered: true}
	return h.mapped(mapped)
}

// RegisterHostReadOnly pins memory the process may only read, such as a
// memory-mapped file (MAP_SHARED, PROT_READ), for copies to the device:
// the copy engine then reads the page cache itself. Start and length must
// be page-aligned; the device must support it (ReadOnlyRegister).
func RegisterHostReadOnly(b []byte) (*HostBuf, error) {
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))&4095 != 0 || len(b)&4095 != 0 {
		return nil, fmt.Errorf("cudrv: cuMemHostRegister needs page-aligned memory of whole pages")
	}
	p := unsafe.Pointer(&b[0])
	if err := result(C.sp_hostRegister(p, C.size_t(len(b)), hostRegisterPortable|hostRegisterReadOnly), "cuMemHostRegister(READ_ONLY)"); err != nil {
		return nil, err
	}
	return &HostBuf{ptr: p, size: int64(len(b)), registered: true}, nil
}

// ReadOnlyRegister reports whether d can pin read-only memory
// (RegisterHostReadOnly).
func ReadOnlyRegister(d Device) (bool, error) {
	var v C.int
	err := result(C.sp_devAttr(&v, C.int(readOnlyRegister), C.CUdevice(d.d)), "cuDeviceGetAttribute(READ_ONLY_HOST_REGISTER_SUPPORTED)")
	return v != 0, err
}

// Free releases the pinning (and the memory, unless it was registered).
// It is safe to call twice.
func (h *HostBuf) Free() error {
	if h == nil || h.ptr == nil {
		return nil
	}
	p := h.ptr
	h.ptr = nil
	if h.registered {
		return result(C.sp_hostUnregister(p), "cuMemHostUnregister")
	}
	return result(C.sp_freeHost(p), "cuMemFreeHost")
}

// OptinSharedMem is the most dynamic shared memory a block may use on d.
func OptinSharedMem(d Device) (int, error) {
	var v C.int
	err := result(C.sp_devAttr(&v, C.int(sharedOptin), C.CUdevice(d.d)), "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
	return int(v), err
}

// SetMaxDynamicSmem lets the kernel use more than the default 48 KiB of
// dynamic shared memory. cu.Function keeps its handle unexported; it is
// the only field, so the conversion reads exactly that handle.
func (fn Function) SetMaxDynamicSmem(bytes int) error {
	f := *(*C.CUfunction)(unsafe.Pointer(&fn.f))
	return result(C.sp_funcSetSmem(f, C.int(bytes)), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
}
