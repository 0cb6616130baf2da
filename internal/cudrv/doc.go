// Package cudrv is sigproc's one place of cgo: the CUDA driver calls that
// gorgonia.org/cu lacks (pinned and mapped host memory, an opt-in device
// attribute, a kernel's dynamic shared memory limit), and the steps every
// GPU user repeats, written once: a context on a locked OS thread, loading
// a PTX module, a device's description, events.
//
// Everything but DeviceInfo is behind the cuda build tag. Its subpackage
// cuinit initialises the driver before gorgonia.org/cu can exit the
// process on failure (see its doc).
package cudrv
