//go:build cuda

package cudrv

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"

	_ "github.com/sigproc/sigproc/internal/cudrv/cuinit" // must initialise before gorgonia.org/cu
	"gorgonia.org/cu"
)

// Context is a CUDA context made current on the OS thread of the goroutine
// that created it, which stays locked to that thread until Close: every
// driver call that needs the context must come from that goroutine (or
// from another locked thread that made it current).
type Context struct {
	ctx  cu.CUContext
	Dev  Device
	Info DeviceInfo
}

// NewContext locks the calling goroutine's OS thread and creates a context
// on device ordinal with flags (SchedSpin | MapHost for the latency
// paths). On error the thread is unlocked again.
func NewContext(ordinal int, flags ContextFlags) (*Context, error) {
	dev, info, err := GetDevice(ordinal)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	ctx, err := dev.d.MakeContext(cu.ContextFlags(flags))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("gpu: create context on %s: %w", info.Name, err)
	}
	return &Context{ctx: ctx, Dev: dev, Info: info}, nil
}

// MakeCurrent makes the context current on the calling goroutine's OS
// thread, which the caller has locked; a thread that waits on the GPU
// beside the owner's uses it.
func (c *Context) MakeCurrent() error { return cu.SetCurrentContext(c.ctx) }

// ClearCurrent leaves no context current on the calling goroutine's OS
// thread, which the caller has locked: a helper thread that called
// MakeCurrent does so before the context is destroyed.
func ClearCurrent() error { return cu.SetCurrentContext(cu.CUContext{}) }

// Bind locks the calling goroutine to its OS thread and makes the context
// current there, for a goroutine other than the owner's (a test's
// subtest, a helper thread): a CUDA context is current per OS thread, and
// a goroutine that is not locked may move to a thread without it between
// two driver calls. release clears the thread's current context and
// unlocks it; call it on the same goroutine once done.
func (c *Context) Bind() (release func(), err error) {
	if c == nil || c.ctx == (cu.CUContext{}) {
		return nil, errors.New("gpu: bind a closed context")
	}
	runtime.LockOSThread()
	if err := cu.SetCurrentContext(c.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("gpu: make the context current: %w", err)
	}
	return func() {
		_ = cu.SetCurrentContext(cu.CUContext{})
		runtime.UnlockOSThread()
	}, nil
}

// SyncUploads waits for the work that the synchronous driver calls left
// on the legacy default stream: cuMemcpyHtoD from pageable memory returns
// once the data is staged, before it reaches the device, and cuMemsetD32
// on device memory returns at once. A kernel on a non-blocking stream
// (every stream sigproc launches on) is not ordered after them, so a
// filter that uploads its taps or clears its history that way must call
// this before its first launch. It waits for nothing on non-blocking
// streams, so a persistent kernel running beside it does not hold it up.
func SyncUploads(what string) error {
	if err := (Stream{}).Synchronize(); err != nil {
		return fmt.Errorf("gpu: %s: wait for the uploads: %w", what, err)
	}
	return nil
}

// ErrNoContext is wrapped when a driver object is made on an OS thread
// where no CUDA context is current.
var ErrNoContext = errors.New("no CUDA context is current on this OS thread")

// RequireContext returns an error wrapping ErrNoContext, naming what
// needed it, unless a context is current on the calling thread. The
// driver's own answer, InvalidContext, says nothing of threads.
func RequireContext(what string) error {
	cur, err := cu.CurrentContext()
	if err != nil {
		return fmt.Errorf("gpu: %s: %w: %w", what, ErrNoContext, err)
	}
	if cur == (cu.CUContext{}) {
		return fmt.Errorf("gpu: %s: %w (a context is current only on the locked thread of the goroutine that made it, "+
			"or that called Context.Bind: make and launch GPU objects there)", what, ErrNoContext)
	}
	return nil
}

// Abandon unlocks the thread and leaves the context to process exit: for a
// kernel that ignores its stop flag, whose memory must not be freed under
// it and whose context would wait for it.
func (c *Context) Abandon() {
	if c != nil && c.ctx != (cu.CUContext{}) {
		c.ctx = cu.CUContext{}
		runtime.UnlockOSThread()
	}
}

// Close destroys the context and unlocks the thread. Everything allocated
// in it must have been freed.
func (c *Context) Close() error {
	if c == nil || c.ctx == (cu.CUContext{}) {
		return nil
	}
	err := c.ctx.Destroy()
	c.ctx = cu.CUContext{}
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("gpu: destroy context: %w", err)
	}
	return nil
}

// Device is a CUDA device (CUdevice).
type Device struct{ d cu.Device }

// Attribute reads one of the device's attributes (cuDeviceGetAttribute).
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	return d.d.Attribute(cu.DeviceAttribute(a))
}

// NumDevices counts the CUDA devices (cuDeviceGetCount).
func NumDevices() (int, error) { return cu.NumDevices() }

// CurrentDevice is the device of the context current on the calling
// thread (cuCtxGetDevice).
func CurrentDevice() (Device, error) {
	d, err := cu.CurrentDevice()
	return Device{d}, err
}

// GetDevice returns device ordinal and its description.
func GetDevice(ordinal int) (Device, DeviceInfo, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return Device{}, DeviceInfo{}, fmt.Errorf("gpu: count devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return Device{}, DeviceInfo{}, fmt.Errorf("gpu: device %d does not exist (%d CUDA device(s) found)", ordinal, n)
	}
	cd, err := cu.GetDevice(ordinal)
	if err != nil {
		return Device{}, DeviceInfo{}, fmt.Errorf("gpu: get device %d: %w", ordinal, err)
	}
	d := Device{cd}
	info := DeviceInfo{Ordinal: ordinal, DriverVersion: cu.Version()}
	if info.Name, err = cd.Name(); err != nil {
		return Device{}, DeviceInfo{}, fmt.Errorf("gpu: device %d name: %w", ordinal, err)
	}
	attr := func(a DeviceAttribute) int {
		v, e := d.Attribute(a)
		if e != nil && err == nil {
			err = fmt.Errorf("gpu: device %d attribute %d: %w", ordinal, a, e)
		}
		return v
	}
	info.ComputeCapability = [2]int{attr(computeCapMajor), attr(computeCapMinor)}
	info.Integrated = attr(integrated) != 0
	info.CanMapHost = attr(canMapHostMemory) != 0
	info.UnifiedAddressing = attr(unifiedAddressing) != 0
	if err != nil {
		return Device{}, DeviceInfo{}, err
	}
	if info.SharedOptin, err = OptinSharedMem(d); err != nil {
		return Device{}, DeviceInfo{}, err
	}
	return d, info, nil
}

// ClockKHz is the SM clock that a kernel's clock64 counts.
func ClockKHz(ordinal int) (int, error) {
	cd, err := cu.GetDevice(ordinal)
	if err != nil {
		return 0, fmt.Errorf("gpu: get device %d: %w", ordinal, err)
	}
	khz, err := Device{cd}.Attribute(ClockRate)
	if err != nil {
		return 0, fmt.Errorf("gpu: device %d clock rate: %w", ordinal, err)
	}
	return khz, nil
}

// MmapBytes maps n bytes of anonymous memory: page-aligned pageable host
// memory outside the Go heap, so the driver may keep its address for an
// asynchronous copy and cuMemHostRegister may pin it.
func MmapBytes(n int64) ([]byte, error) {
	if n <= 0 || int64(int(n)) != n {
		return nil, fmt.Errorf("gpu: map %d bytes of host memory: bad size", n)
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("gpu: map %d MiB of host memory: %w", n>>20, err)
	}
	return b, nil
}

// MakeEvents creates n timing events.
func MakeEvents(n int) ([]Event, error) {
	evs := make([]Event, 0, n)
	for range n {
		e, err := NewEvent(EventDefault)
		if err != nil {
			DestroyEvents(evs)
			return nil, fmt.Errorf("gpu: create event: %w", err)
		}
		evs = append(evs, e)
	}
	return evs, nil
}

// DestroyEvents destroys the events that exist among evs.
func DestroyEvents(evs []Event) error {
	var errs []error
	for i := range evs {
		if evs[i] == (Event{}) {
			continue
		}
		if err := evs[i].Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: destroy event: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Elapsed is the time from event a to event b in seconds.
func Elapsed(a, b Event) (float64, error) {
	ms, err := a.e.Elapsed(b.e)
	if err != nil {
		return 0, fmt.Errorf("gpu: event time: %w", err)
	}
	return ms / 1e3, nil
}

// MemoryPeak returns the memory clock (kHz), the bus width (bits) and the
// theoretical DRAM bandwidth (bytes/s, double data rate) of dev.
func MemoryPeak(dev Device) (clockKHz, busBits int, peak float64, err error) {
	if clockKHz, err = dev.Attribute(memoryClockRate); err != nil {
		return 0, 0, 0, fmt.Errorf("gpu: memory clock rate: %w", err)
	}
	if busBits, err = dev.Attribute(globalMemoryBusWidth); err != nil {
		return 0, 0, 0, fmt.Errorf("gpu: memory bus width: %w", err)
	}
	return clockKHz, busBits, float64(clockKHz) * 1e3 * 2 * float64(busBits) / 8, nil
}
