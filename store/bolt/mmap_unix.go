//go:build unix

package bolt

import (
	"bytes"
	"io"
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only for checkPages, which then reads
// pages without a system call each; unmap releases it. Where mapping fails
// the file itself is returned.
func mapFile(f *os.File, size int64) (r io.ReaderAt, unmap func()) {
	if size <= 0 || int64(int(size)) != size {
		return f, func() {}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return f, func() {}
	}
	return bytes.NewReader(data), func() { _ = syscall.Munmap(data) }
}
