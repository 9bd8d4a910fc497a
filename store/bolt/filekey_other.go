//go:build !unix

package bolt

import "os"

// fileKey is empty where device and inode are not available: stamps then
// rest on bbolt's transaction id alone.
func fileKey(os.FileInfo) string { return "" }
