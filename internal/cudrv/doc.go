// Package cudrv owns the CUDA driver: it is sigproc's one place of cgo
// and the only importer of gorgonia.org/cu. Every other package works
// with its small types:
//
//   - Context (NewContext: a context on a locked OS thread), Device and
//     DeviceInfo;
//   - DevicePtr (MemAlloc, MemFree, the synchronous Memcpy* and MemsetD32);
//   - Stream (NewStream: non-blocking; its Copy*, MemsetD32 and Wait are
//     asynchronous), Event (NewEvent, MakeEvents, Elapsed);
//   - Module (LoadModule: a PTX module) and its Function, a kernel to
//     Launch;
//   - HostBuf (AllocHost, RegisterHost: pinned, optionally mapped host
//     memory);
//   - CuFFT and FFTPlan (cuFFT, opened at run time).
//
// The driver calls that gorgonia.org/cu lacks (pinned and mapped host
// memory, an opt-in device attribute, a kernel's dynamic shared memory
// limit) are its own cgo, each CUresult through one error function
// (result); the rest go through cu, one call for one, with cu's errors.
// Every flag and attribute it passes is in flags_cuda.go.
//
// Everything but DeviceInfo and PageAlign is behind the cuda build tag.
// Its subpackage cuinit initialises the driver before gorgonia.org/cu can
// exit the process on failure (see its doc).
package cudrv
