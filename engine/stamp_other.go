//go:build !linux

package engine

import "os"

// fileIdentity is not available here: the store's stamp is its size and
// modification time alone.
func fileIdentity(os.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }
