//go:build !unix

package bolt

import "os"

const nonBlock = 0

// noFollow is 0 where O_NOFOLLOW is not available: fileState's look
// (os.Lstat) refuses a symbolic link there.
const noFollow = 0

// isLoop reports whether err is an open refused for following a symbolic
// link (never, without O_NOFOLLOW).
func isLoop(error) bool { return false }

func clearNonBlock(*os.File) error { return nil }

// tryLock is always granted where flock is not available (bbolt locks the
// file its own way there).
func tryLock(*os.File, bool) (bool, error) { return true, nil }

func syncDir(string) error { return nil }
