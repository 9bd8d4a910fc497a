//go:build unix

package bolt

import (
	"os"
	"strconv"
	"syscall"
)

// fileKey names the file behind fi by device and inode, so a stamp taken
// on one file never matches another file put in its place.
func fileKey(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
	}
	return ""
}
