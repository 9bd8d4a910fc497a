package engine

import (
	"os"
	"syscall"
)

// fileIdentity is the device, inode and change time (ns) of the file fi
// describes, so a replaced file or a rewrite within one modification time
// still changes the store's stamp.
func fileIdentity(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), sys.Ino, sys.Ctim.Sec*1e9 + sys.Ctim.Nsec
	}
	return 0, 0, 0
}
