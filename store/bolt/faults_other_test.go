//go:build !unix

package bolt

// pageFaults is not measured on this platform.
func pageFaults() (int64, bool) { return 0, false }
