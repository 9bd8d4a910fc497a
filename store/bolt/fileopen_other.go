//go:build !unix

package bolt

import "os"

const nonBlock = 0

func clearNonBlock(*os.File) error { return nil }

// tryLock is always granted where flock is not available (bbolt locks the
// file its own way there).
func tryLock(*os.File, bool) (bool, error) { return true, nil }

func syncDir(string) error { return nil }
