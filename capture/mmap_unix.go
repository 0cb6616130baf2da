//go:build unix

package capture

import (
	"os"
	"syscall"
)

// mapFile maps n bytes of f from off (page-aligned), read-only and shared,
// so the mapping reads the page cache.
func mapFile(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }
