package bolt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agent-ls/agent-ls/store/location"
)

// ErrNotRegular reports a store path that names something other than a
// regular file (a directory, FIFO, socket or device, or a symbolic link):
// it is refused at once, never opened for reading or writing.
//
// A symbolic link is refused whatever it points at (a store, an empty
// file, nothing), on every open, read-only too: a store is never created,
// initialized or written through a link, so a link planted in a checkout
// (.agent-memory/memory.db -> /anywhere) cannot make agent-ls create or
// overwrite a file elsewhere. A store kept elsewhere is named by its real
// path (the workspace's store:, --store). Links in the directories above
// the store file are followed as usual.
var ErrNotRegular = errors.New("not a regular file")

// lockPoll is how often a wait for the file lock tries again (and looks at
// its context).
const lockPoll = 20 * time.Millisecond

// describeMode names what a non-regular file is, for the error that refuses
// it (location.Kind; a symbolic link says what to do instead).
func describeMode(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "is a symbolic link (agent-ls never opens a store through one: name the real file)"
	}
	return "is " + location.Kind(m) + ", not a store file"
}

// notRegular is the error refusing path, which has mode m: ErrNotRegular,
// worded once (not "..., not a store file: not a regular file").
func notRegular(path string, m fs.FileMode) error {
	return notRegularError{"store " + path + " " + describeMode(m)}
}

type notRegularError struct{ msg string }

func (e notRegularError) Error() string        { return e.msg }
func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }

// fileState looks at path without opening it: exists is false when there is
// nothing there, empty is true for a 0-byte regular file (it holds nothing:
// it reads as no store and is initialized as a fresh one). Anything but a
// regular file, a symbolic link included (dangling or not), is an error
// wrapping ErrNotRegular.
func fileState(path string) (exists, empty bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("open store %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return true, false, notRegular(path, fi.Mode())
	}
	return true, fi.Size() == 0, nil
}

// opener returns bbolt's Options.OpenFile for one open: it opens without
// blocking (a FIFO put in place after fileState's look would otherwise block
// the open itself), refuses anything but a regular file, and then waits for
// the file lock bbolt is about to take, polling until the lock is free,
// timeout passes (errLockTimeout) or ctx ends. bbolt's own flock on the
// same open file then succeeds at once.
func opener(ctx context.Context, exclusive bool, timeout time.Duration) func(string, int, os.FileMode) (*os.File, error) {
	return func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag|nonBlock|noFollow, perm)
		if isLoop(err) {
			return nil, notRegular(name, fs.ModeSymlink)
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			_ = f.Close()
			return nil, notRegular(name, fi.Mode())
		}
		if err := clearNonBlock(f); err != nil {
			_ = f.Close()
			return nil, err
		}
		if err := waitLock(ctx, f, exclusive, timeout); err != nil {
			_ = f.Close()
			return nil, err
		}
		return f, nil
	}
}

// errLockTimeout is waitLock giving up after its timeout.
var errLockTimeout = errors.New("lock wait timed out")

// waitLock takes f's flock (shared or exclusive), waiting at most timeout
// and never past ctx.
func waitLock(ctx context.Context, f *os.File, exclusive bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var timer *time.Timer
	for {
		ok, err := tryLock(f, exclusive)
		if err != nil || ok {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for the store lock: %w", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errLockTimeout
		}
		d := min(lockPoll, left)
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the store lock: %w", ctx.Err())
		case <-timer.C:
		}
	}
}
