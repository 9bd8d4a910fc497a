//go:build !unix

package bolt

import (
	"os"
	"time"
)

// lockShared is a no-op where flock is not available: a salvage then reads
// without the shared lock.
func lockShared(*os.File, time.Duration) (func(), error) { return func() {}, nil }
