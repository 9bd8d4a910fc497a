//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
)

// nonBlock makes opening a FIFO return at once instead of waiting for the
// other end.
const nonBlock = syscall.O_NONBLOCK

// noFollow makes an open fail (ELOOP) when the store path is a symbolic
// link, closing the gap between fileState's look and the open.
const noFollow = syscall.O_NOFOLLOW

// isLoop reports whether err is an open refused by noFollow.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// clearNonBlock puts a regular file's descriptor back in blocking mode.
func clearNonBlock(f *os.File) error {
	return syscall.SetNonblock(int(f.Fd()), false)
}

// tryLock tries f's flock once; ok is false when another holder has it.
func tryLock(f *os.File, exclusive bool) (ok bool, err error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return false, nil
	}
	return false, err
}

// syncDir fsyncs a directory so a rename or link in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
