//go:build cuda

package cudrv

import (
	"errors"
	"unsafe"

	"gorgonia.org/cu"
)

// sigproc's view of the driver objects it launches work with: device
// memory, streams, events, modules and their kernels. Each is a thin
// value over gorgonia.org/cu's handle, so that no other package imports
// cu; the calls are cu's, one for one, with its errors unwrapped (callers
// add what they were doing). None allocates on the Go heap, so the hot
// paths may call them per block.

// DevicePtr is a device address (CUdeviceptr); arithmetic on it is byte
// offsets. Its 8 bytes are what a kernel parameter of pointer type takes.
type DevicePtr uintptr

// MemAlloc allocates bytes of device memory (cuMemAlloc, 256-byte aligned).
func MemAlloc(bytes int64) (DevicePtr, error) {
	p, err := cu.MemAlloc(bytes)
	return DevicePtr(p), err
}

// MemFree frees what MemAlloc returned (cuMemFree).
func MemFree(p DevicePtr) error { return cu.MemFree(cu.DevicePtr(p)) }

// MemcpyHtoD copies bytes from host src to dst (cuMemcpyHtoD). From
// pageable memory it may return before the data reach the device, on the
// legacy default stream: see SyncUploads.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, bytes int64) error {
	return cu.MemcpyHtoD(cu.DevicePtr(dst), src, bytes)
}

// MemcpyDtoH copies bytes from src to host dst and waits (cuMemcpyDtoH).
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, bytes int64) error {
	return cu.MemcpyDtoH(dst, cu.DevicePtr(src), bytes)
}

// MemcpyDtoD copies bytes within device memory (cuMemcpyDtoD).
func MemcpyDtoD(dst, src DevicePtr, bytes int64) error {
	return cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), bytes)
}

// MemsetD32 sets n 32-bit words at p to v (cuMemsetD32), on the legacy
// default stream, returning before it is done: see SyncUploads.
func MemsetD32(p DevicePtr, v uint32, n int64) error {
	return cu.MemsetD32(cu.DevicePtr(p), v, n)
}

// Synchronize waits for all the work of the current context
// (cuCtxSynchronize).
func Synchronize() error { return cu.Synchronize() }

// Stream is a CUDA stream. The zero Stream is the legacy default stream,
// which the synchronous calls use and every other blocking stream waits
// for; NewStream's streams do not.
type Stream struct{ s cu.Stream }

// NewStream creates a non-blocking stream (CU_STREAM_NON_BLOCKING): it
// does not wait for the legacy default stream, nor that for it.
func NewStream() (Stream, error) {
	s, err := cu.MakeStream(streamNonBlocking)
	return Stream{s}, err
}

// Destroy destroys the stream once its work is done (cuStreamDestroy) and
// zeroes it.
func (s *Stream) Destroy() error { return s.s.Destroy() }

// Synchronize waits for the stream's work (cuStreamSynchronize).
func (s Stream) Synchronize() error { return s.s.Synchronize() }

// Done reports whether the stream's work has finished (cuStreamQuery):
// false and no error while it runs, an error if it failed.
func (s Stream) Done() (bool, error) {
	switch err := s.s.Query(); {
	case err == nil:
		return true, nil
	case errors.Is(err, cu.NotReady):
		return false, nil
	default:
		return false, err
	}
}

// Wait makes later work on the stream wait for e (cuStreamWaitEvent).
func (s Stream) Wait(e Event) error { return s.s.Wait(e.e, 0) }

// CopyHtoD enqueues a copy of bytes from host src to dst
// (cuMemcpyHtoDAsync); src must stay valid until it is done, and only
// pinned memory makes it asynchronous.
func (s Stream) CopyHtoD(dst DevicePtr, src unsafe.Pointer, bytes int64) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, bytes, s.s)
}

// CopyDtoH enqueues a copy of bytes from src to host dst
// (cuMemcpyDtoHAsync).
func (s Stream) CopyDtoH(dst unsafe.Pointer, src DevicePtr, bytes int64) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), bytes, s.s)
}

// CopyDtoD enqueues a copy of bytes within device memory
// (cuMemcpyDtoDAsync).
func (s Stream) CopyDtoD(dst, src DevicePtr, bytes int64) error {
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, s.s)
}

// MemsetD32 enqueues setting n 32-bit words at p to v (cuMemsetD32Async).
func (s Stream) MemsetD32(p DevicePtr, v uint32, n int64) error {
	return cu.MemsetD32Async(cu.DevicePtr(p), uint(v), n, s.s)
}

// Event is a CUDA event: a point in a stream to wait for or time.
type Event struct{ e cu.Event }

// NewEvent creates an event (cuEventCreate).
func NewEvent(flags EventFlags) (Event, error) {
	e, err := cu.MakeEvent(cu.EventFlags(flags))
	return Event{e}, err
}

// Record enqueues the event on s (cuEventRecord).
func (e Event) Record(s Stream) error { return e.e.Record(s.s) }

// Synchronize waits until the work before the event's record is done
// (cuEventSynchronize).
func (e Event) Synchronize() error { return e.e.Synchronize() }

// Destroy destroys the event (cuEventDestroy) and zeroes it.
func (e *Event) Destroy() error { return cu.DestroyEvent(&e.e) }

// Module is a loaded kernel module (CUmodule); LoadModule makes one.
type Module struct{ m cu.Module }

// Function returns the kernel name of the module (cuModuleGetFunction).
func (m Module) Function(name string) (Function, error) {
	f, err := m.m.Function(name)
	return Function{f}, err
}

// Global returns the address and size in bytes of the module's global
// name (cuModuleGetGlobal).
func (m Module) Global(name string) (DevicePtr, int64, error) {
	p, size, err := m.m.Global(name)
	return DevicePtr(p), size, err
}

// Unload unloads the module (cuModuleUnload); its kernels must have
// finished.
func (m Module) Unload() error { return m.m.Unload() }

// Function is a kernel of a Module (CUfunction).
type Function struct{ f cu.Function }

// Launch enqueues the kernel on s (cuLaunchKernel) over a one-dimensional
// grid of grid blocks of threads threads, with smem bytes of dynamic
// shared memory. params holds one pointer per kernel parameter, to a
// value of the parameter's size (8 bytes: sigproc's kernels take pointers,
// 64-bit integers and doubles); the values are read before Launch returns.
func (f Function) Launch(grid, threads, smem int, s Stream, params []unsafe.Pointer) error {
	return f.f.Launch(grid, 1, 1, threads, 1, 1, smem, s.s, params)
}
