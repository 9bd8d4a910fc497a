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
	return &pagedReader{r: bytes.NewReader(data), pg: mappingPager(data)}, func() { _ = syscall.Munmap(data) }
}

// pagedReader reads a mapping through a pager: the page check reads every
// page of the file, and without trims a check of a 1.6 GB store left the
// whole file resident in the process. Not for concurrent use.
type pagedReader struct {
	r  *bytes.Reader
	pg pager
}

func (p *pagedReader) ReadAt(b []byte, off int64) (int, error) {
	p.pg.step()
	return p.r.ReadAt(b, off)
}
