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

// RacyWindow is how old a store file's modification time must be for a
// cache to remember what it read by the file's stamp (SettledStamp). File
// times come from a coarse clock (a kernel tick), so two writes inside one
// tick can leave the same times and size; like git's "racy clean" rule, a
// file written that recently is read again until it ages.
const RacyWindow = 100 * time.Millisecond

// SettledStamp stats the store file at path and returns its stamp;
// settled is true when a cache may key what it reads on that stamp at now:
// the file is stamped (StampOf) and was last modified RacyWindow or more
// before now. An unsettled stamp may still be compared with one taken
// after a read, but nothing read by it is to be remembered.
func SettledStamp(path string, now time.Time) (stamp StoreStamp, settled bool) {
	stamp, mtime, ok := StampOf(path)
	return stamp, ok && now.Sub(mtime) >= RacyWindow
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
