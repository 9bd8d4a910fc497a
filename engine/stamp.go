package engine

import (
	"os"
	"time"
)

// StoreStamp identifies one state of a store file by what a write changes:
// a bbolt commit rewrites pages (modification and change times), a growth
// changes the size, a replacement the inode. The language server's caches
// and ChainVerdicts key on it.
type StoreStamp struct {
	dev, ino uint64
	size     int64
	mtime    int64 // ns
	ctime    int64 // ns
}

// StampOf stats the store file at path and returns its stamp and
// modification time; ok is false when it cannot be stamped (no such file,
// or a store that is not a file).
func StampOf(path string) (StoreStamp, time.Time, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return StoreStamp{}, time.Time{}, false
	}
	st := StoreStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	st.dev, st.ino, st.ctime = fileIdentity(fi)
	return st, fi.ModTime(), true
}
