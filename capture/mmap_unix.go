//go:build unix

package capture

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps n bytes of f from off (page-aligned), read-only and shared,
// so the mapping reads the page cache.
func mapFile(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }

// fileSize is f's size now, by one fstat that allocates nothing (f.Stat
// allocates its FileInfo): View checks it for every block.
func fileSize(f *os.File) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0, fmt.Errorf("fstat: %w", err)
	}
	return st.Size, nil
}
