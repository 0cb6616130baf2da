//go:build cuda

package cudrv

import (
	"syscall"
	"testing"
	"unsafe"

	"gorgonia.org/cu"
)

func TestRegisterHostMapsExistingMemory(t *testing.T) {
	ctx, err := NewContext(0, cu.SchedSpin|cu.MapHost)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	mem, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	h, err := RegisterHost(mem, true)
	if err != nil {
		t.Fatal(err)
	}
	if h.DevicePtr() == 0 {
		t.Fatal("no device pointer")
	}
	// The device writes through its pointer; the host sees it in its memory.
	if err := cu.MemsetD32(h.DevicePtr(), 0x3f800000, 4); err != nil {
		t.Fatal(err)
	}
	if err := cu.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if v := *(*float32)(unsafe.Pointer(&mem[8])); v != 1 {
		t.Fatalf("host sees %v", v)
	}
	if err := h.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterHost(mem[1:4097], true); err == nil {
		t.Fatal("unaligned register accepted")
	}
}

// The zero-copy kernel's split and the timing mode change only timing,
// never results; timing mode must also fill every breakdown stage. The
// cases cover history carried across the kernel's three buffers and odd
// block sizes.
