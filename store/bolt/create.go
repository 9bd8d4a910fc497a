package bolt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// create puts a fresh, initialized store file at s.path: the database is
// built under a temporary name in the same directory, committed (bbolt
// syncs it), synced again and then put in place, so a crash at any moment
// leaves either no file, the old 0-byte file or a complete store, never a
// partial one. With nothing at s.path the file is hard-linked into place,
// which fails when another process got there first (its store is kept);
// a 0-byte file (replace) is renamed over while its lock is held, after
// checking it is still the same empty file. The temporary name is removed
// in every case.
func (s *Store) create(ctx context.Context, replace bool) (err error) {
	dir := filepath.Dir(s.path)
	s.removeStaleTemps(dir)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".creating-*")
	if err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	defer func() { _ = os.Remove(name) }()
	if err := s.initFile(name); err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	if !replace {
		err := os.Link(name, s.path)
		switch {
		case err == nil, errors.Is(err, fs.ErrExist):
			// Linked, or another process created the store meanwhile.
		default:
			// A file system without hard links: rename, unless a store
			// appeared meanwhile.
			if exists, _, serr := fileState(s.path); serr != nil {
				return serr
			} else if !exists {
				if err := os.Rename(name, s.path); err != nil {
					return fmt.Errorf("create store %s: %w", s.path, err)
				}
			}
		}
		return s.syncDir(dir)
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|nonBlock|noFollow, 0)
	if isLoop(err) {
		return notRegular(s.path, fs.ModeSymlink)
	}
	if err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	if !fi.Mode().IsRegular() {
		return notRegular(s.path, fi.Mode())
	}
	if err := clearNonBlock(f); err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	if err := waitLock(ctx, f, true, s.timeout); err != nil {
		return s.openError(err)
	}
	// Still the empty file at s.path? Another creator may have replaced it
	// while this one waited.
	fi, err = f.Stat()
	if err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	cur, err := os.Stat(s.path)
	if err != nil || !os.SameFile(fi, cur) || fi.Size() != 0 {
		return nil
	}
	if err := os.Rename(name, s.path); err != nil {
		return fmt.Errorf("create store %s: %w", s.path, err)
	}
	return s.syncDir(dir)
}

// initFile initializes a new database at name with this schema version's
// buckets and syncs it.
func (s *Store) initFile(name string) error {
	db, err := bbolt.Open(name, 0o600, &bbolt.Options{Timeout: s.timeout})
	if err != nil {
		return err
	}
	err = db.Update(s.migrate)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// staleTempAge is the age from which a temporary file of create is taken
// for the leftover of a creator that was killed.
const staleTempAge = 10 * time.Minute

// removeStaleTemps removes create's temporary files that a killed creator
// left behind (older than staleTempAge; a live creator needs milliseconds).
// The names are read from dir, not matched with filepath.Glob: a path
// holding glob metacharacters (a directory named ws[1]) is a pattern there,
// which misses these files and matches other directories' ones.
func (s *Store) removeStaleTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	prefix := "." + filepath.Base(s.path) + ".creating-"
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		n := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(n); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTempAge {
			_ = os.Remove(n)
		}
	}
}

func (s *Store) syncDir(dir string) error {
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("create store %s: sync directory: %w", s.path, err)
	}
	return nil
}

// faultError is the error of a bbolt panic or memory fault while reading
// the file: the page check names the damaged page when it finds one
// ("page N: ..."), and the runtime's own message is never shown.
func (s *Store) faultError(r any) error {
	f, err := os.Open(s.path)
	if err == nil {
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			if perr := checkPages(f, fi.Size()); perr != nil {
				return s.corrupt("%v", perr)
			}
		}
	}
	s.logger.Debug("store read fault", "store", s.path, "panic", fmt.Sprint(r))
	return s.corrupt("the page tree does not read back (a damaged page); run agent-ls memory export to salvage what it can")
}
