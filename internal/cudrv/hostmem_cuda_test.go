//go:build cuda

package cudrv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

func TestRegisterHostMapsExistingMemory(t *testing.T) {
	ctx, err := NewContext(0, SchedSpin|MapHost)
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
	if err := MemsetD32(h.DevicePtr(), 0x3f800000, 4); err != nil {
		t.Fatal(err)
	}
	if err := Synchronize(); err != nil {
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

// BenchmarkRegister pins and unpins windows of host memory: anonymous
// memory, and a file in the page cache mapped read-only (what a recording
// would be registered as so the copy engine reads it with no host copy).
// The rate says whether registering a recording in windows can keep up
// with PCIe. Run on a GPU machine:
//
//	cudrv.test -test.run '^$' -test.bench Register -test.benchtime 10x
func BenchmarkRegister(b *testing.B) {
	ctx, err := NewContext(0, SchedSpin|MapHost)
	if err != nil {
		b.Skip(err)
	}
	defer ctx.Close()
	const total = 1 << 30
	path := filepath.Join(b.TempDir(), "rec.bin")
	if err := os.WriteFile(path, make([]byte, total), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fileMem, err := syscall.Mmap(int(f.Fd()), 0, total, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Munmap(fileMem)
	anon, err := MmapBytes(total)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Munmap(anon)
	for i := 0; i < total; i += 4096 {
		anon[i] = 1
	}
	ro, err := ReadOnlyRegister(ctx.Dev)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("read-only registration supported: %v", ro)
	for _, window := range []int{64 << 20, 256 << 20, 1 << 30} {
		for _, kind := range []string{"anon", "file"} {
			b.Run(fmt.Sprintf("%s/%dMiB", kind, window>>20), func(b *testing.B) {
				current(b, ctx)
				b.SetBytes(int64(window))
				for i := range b.N {
					off := (i * window) % total
					var h *HostBuf
					var err error
					if kind == "anon" {
						h, err = RegisterHost(anon[off:off+window], false)
					} else {
						h, err = RegisterHostReadOnly(fileMem[off : off+window])
					}
					if err != nil {
						b.Fatal(err)
					}
					if err := h.Free(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	dev, err := MemAlloc(256 << 20)
	if err != nil {
		b.Fatal(err)
	}
	defer MemFree(dev)
	h2d := func(name string) {
		b.Run(name+"/256MiB", func(b *testing.B) {
			current(b, ctx)
			b.SetBytes(256 << 20)
			for i := range b.N {
				off := (i * (256 << 20)) % total
				if err := MemcpyHtoD(dev, unsafe.Pointer(&fileMem[off]), 256<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The driver staging a pageable file mapping, then the copy engine
	// reading it registered.
	h2d("h2d-from-pageable-file")
	h, err := RegisterHostReadOnly(fileMem)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Free()
	h2d("h2d-from-registered-file")
}

// current makes ctx current on the sub-benchmark's goroutine, which runs
// on a thread of its own.
func current(b *testing.B, ctx *Context) {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	if err := ctx.MakeCurrent(); err != nil {
		b.Fatal(err)
	}
}
