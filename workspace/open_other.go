//go:build !unix

package workspace

import "os"

// openNoBlock opens path read-only (named pipes do not block an open here).
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
