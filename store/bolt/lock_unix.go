//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
	"time"

	berrors "go.etcd.io/bbolt/errors"
)

// lockShared takes the shared flock bbolt's read-only opens take, waiting up
// to timeout (bbolt.ErrTimeout after), so a salvage never reads a file while
// a writer is in the middle of a commit.
func lockShared(f *os.File, timeout time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, berrors.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
}
