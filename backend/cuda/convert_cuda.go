//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/kernels"
)

// converter turns a block's stored integer values, copied to the device
// as they are, into float32 there (kernels/convert.cu): an 8-bit complex
// recording crosses PCIe at 2 bytes a sample instead of 8.
type converter struct {
	mod  cudrv.Module
	fn   cudrv.Function
	code int64 // the kernel's encoding
	size int   // bytes of one stored value

	// Launch arguments; params points at them.
	argSrc, argDst cudrv.DevicePtr
	argN, argCode  int64
	params         [4]unsafe.Pointer
}

// newConverter loads the convert kernel for encoding (a pipeline Enc*
// name), from ptxPath or the embedded PTX.
func newConverter(encoding, ptxPath string) (*converter, error) {
	code, size := convertCode(encoding)
	if code == 0 {
		return nil, fmt.Errorf("gpu: no conversion for encoding %q", encoding)
	}
	c := &converter{code: code, size: size, argCode: code}
	var err error
	if c.mod, err = cudrv.LoadModule(ptxPath, kernels.ConvertPTX, "convert"); err != nil {
		return nil, err
	}
	if c.fn, err = c.mod.Function("convert"); err != nil {
		return nil, errors.Join(err, c.mod.Unload())
	}
	c.params = [4]unsafe.Pointer{unsafe.Pointer(&c.argSrc), unsafe.Pointer(&c.argDst), unsafe.Pointer(&c.argN), unsafe.Pointer(&c.argCode)}
	return c, nil
}

// launch converts the n values stored at src into float32 at dst, on st.
func (c *converter) launch(st cudrv.Stream, src, dst cudrv.DevicePtr, n int) error {
	const threads = 256
	blocks := min((n+threads-1)/threads, 4096)
	c.argSrc, c.argDst, c.argN = src, dst, int64(n)
	if err := c.fn.Launch(blocks, threads, 0, st, c.params[:]); err != nil {
		return fmt.Errorf("gpu: launch convert (%d values): %w", n, err)
	}
	return nil
}

// close unloads the kernel; its launches have finished.
func (c *converter) close() error { return c.mod.Unload() }
