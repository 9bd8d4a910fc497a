package events

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agent-ls/agent-ls/store"
)

// Source tells a follower when a store may have changed. A file store's
// source is FileSource; a database backend plugs in its own (for example
// PostgreSQL LISTEN/NOTIFY).
type Source interface {
	// Watch starts watching and returns a channel that receives a value
	// after changes (several changes may arrive as one value). The channel
	// is closed when ctx ends or the source fails; a failure is then
	// reported by Err.
	Watch(ctx context.Context) (<-chan struct{}, error)
	// Err returns why the channel closed before ctx ended, or nil.
	Err() error
}

// FileSource watches the directory of a store file with fsnotify and wakes
// on every change to that file: creation, each write of a commit, rename.
// Watching the directory (not the file) also sees a file created after the
// follower started.
func FileSource(path string) Source { return &fileSource{path: path} }

type fileSource struct {
	path string
	err  error
}

func (f *fileSource) Err() error { return f.err }

func (f *fileSource) Watch(ctx context.Context) (<-chan struct{}, error) {
	abs, err := filepath.Abs(f.path)
	if err != nil {
		return nil, fmt.Errorf("watch store %s: %w", f.path, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch store %s: %w", abs, err)
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch store %s: %w", abs, err)
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) != abs {
					continue
				}
				select {
				case ch <- struct{}{}:
				default: // a wake-up is already pending; it covers this change
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				f.err = fmt.Errorf("watch store %s: %w", abs, err)
				return
			}
		}
	}()
	return ch, nil
}

// retryAfter is how soon a follower reads again after a failed read: the
// store was locked by a writer for longer than its lock timeout, or a file
// store was caught while another process created it.
const retryAfter = 100 * time.Millisecond

// maxFailedReads is how many reads in a row may fail before Follow returns
// the error.
const maxFailedReads = 5

// Follow delivers to fn the events at or after since ("" is all), then
// every new event as src reports changes, until ctx ends (then it returns
// nil), fn returns an error (returned) or reading fails maxFailedReads times
// in a row (a failed read is retried shortly). The source starts before the
// first read, so no change between the two is missed.
func Follow(ctx context.Context, s store.Reader, src Source, since string, fn func(Event) error, opts ...Option) error {
	ch, err := src.Watch(ctx)
	if err != nil {
		return err
	}
	c := newCursor(s, opts)
	var retry <-chan time.Time
	failed := 0
	read := func() error {
		evs, err := c.next(ctx, since)
		if err != nil {
			if failed++; failed < maxFailedReads && ctx.Err() == nil {
				retry = time.After(retryAfter)
				return nil
			}
			return err
		}
		failed = 0
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	}
	if err := read(); err != nil {
		return ctxOr(ctx, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			retry = nil
		case _, ok := <-ch:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				if err := src.Err(); err != nil {
					return err
				}
				return errors.New("follow events: the change source stopped")
			}
		}
		if err := read(); err != nil {
			return ctxOr(ctx, err)
		}
	}
}

// ctxOr returns nil when err comes from ctx having ended, else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
