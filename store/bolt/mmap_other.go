//go:build !unix

package bolt

import (
	"io"
	"os"
)

// mapFile returns the file itself: checkPages reads it page by page.
func mapFile(f *os.File, _ int64) (io.ReaderAt, func()) { return f, func() {} }
