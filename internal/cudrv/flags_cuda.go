//go:build cuda

package cudrv

// #include <cuda.h>
import "C"

// Every driver flag and attribute sigproc passes, in one place, with the
// values of the CUDA headers it builds against.

// ContextFlags are NewContext's flags (CUctx_flags).
type ContextFlags uint

const (
	SchedSpin         ContextFlags = C.CU_CTX_SCHED_SPIN          // spin while waiting for the GPU: the latency paths
	SchedBlockingSync ContextFlags = C.CU_CTX_SCHED_BLOCKING_SYNC // block the thread while waiting: tests, benches
	MapHost           ContextFlags = C.CU_CTX_MAP_HOST            // allow mapped pinned host memory (zero-copy)
)

// EventFlags are NewEvent's flags (CUevent_flags).
type EventFlags uint

const (
	EventDefault       EventFlags = C.CU_EVENT_DEFAULT        // timed, spin on Synchronize
	EventBlockingSync  EventFlags = C.CU_EVENT_BLOCKING_SYNC  // timed, block on Synchronize
	EventDisableTiming EventFlags = C.CU_EVENT_DISABLE_TIMING // ordering only: the cheapest to record
)

// DeviceAttribute names what Device.Attribute reads (CUdevice_attribute).
type DeviceAttribute int

const (
	MultiprocessorCount  DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	ClockRate            DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_CLOCK_RATE // SM clock, kHz
	computeCapMajor      DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	computeCapMinor      DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	integrated           DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_INTEGRATED
	canMapHostMemory     DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
	unifiedAddressing    DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
	memoryClockRate      DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE
	globalMemoryBusWidth DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH
	sharedOptin          DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	readOnlyRegister     DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED
)

// Host memory flags of AllocHost (cuMemHostAlloc) and RegisterHost
// (cuMemHostRegister).
const (
	hostAllocPortable      = C.CU_MEMHOSTALLOC_PORTABLE
	hostAllocDevicemap     = C.CU_MEMHOSTALLOC_DEVICEMAP
	hostAllocWriteCombined = C.CU_MEMHOSTALLOC_WRITECOMBINED
	hostRegisterPortable   = C.CU_MEMHOSTREGISTER_PORTABLE
	hostRegisterDevicemap  = C.CU_MEMHOSTREGISTER_DEVICEMAP
	hostRegisterReadOnly   = C.CU_MEMHOSTREGISTER_READ_ONLY
)

// streamNonBlocking is the flag of every stream NewStream makes.
const streamNonBlocking = C.CU_STREAM_NON_BLOCKING
