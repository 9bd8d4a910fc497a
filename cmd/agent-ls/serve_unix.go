//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns stdin in non-blocking mode when it is a file, so that
// closing it (on LSP exit) ends a pending read instead of leaving it blocked.
func pollableStdin(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return r
	}
	return os.NewFile(uintptr(fd), f.Name())
}
