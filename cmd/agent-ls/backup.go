package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
)

// snapshotter is a store that can copy its file whole (bbolt's); any other
// store is backed up by copying its state into a new bbolt file
// (copySnapshot).
type snapshotter interface {
	WriteSnapshot(ctx context.Context, w io.Writer) (int64, error)
}

// backupResult is what `memory backup` reports.
type backupResult struct {
	Store   string `json:"store"`
	File    string `json:"file"`
	Bytes   int64  `json:"bytes"`
	Records int    `json:"records"`
	Entries int    `json:"ledgerEntries"`
	// Verified: the copy opens and its ledger chain verifies.
	Verified bool `json:"verified"`
}

// memBackup writes a consistent snapshot of the whole store to FILE (a
// temporary file in FILE's directory, synced, then put in place), and
// verifies the copy: it opens, its ledger's hash chain holds and every
// record has the entry that created it. An existing FILE is refused unless
// --force (then it is replaced); a FILE that is a symbolic link is refused
// even with --force: a backup is never written through a link.
func memBackup(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var actor string
	fs.StringVar(&actor, "actor", "", "who backs up, `kind:name` (default: the workspace actor or human:$USER); humans only: a backup holds every agent's records")
	force := fs.Bool("force", false, "replace an existing FILE (never one that is a symbolic link)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageFail(m.e.stderr, m.name, errors.New("want one FILE"))
	}
	dst := pos[0]
	if !filepath.IsAbs(dst) {
		dst = filepath.Join(m.e.cwd, dst)
	}
	loc, err := locateStore(m.e, m.store)
	if err != nil {
		return m.storeError(err)
	}
	if _, err := os.Lstat(loc.Path); !backend.IsURL(loc.Path) && errors.Is(err, os.ErrNotExist) {
		m.errorf("no memory store at %s: nothing to back up", loc.Path)
		return exitFindings
	}
	if same, _ := sameFile(loc.Path, dst); same {
		return usageFail(m.e.stderr, m.name, fmt.Errorf("%s is the store itself", pos[0]))
	}
	if err := backupDest(dst, *force); err != nil {
		m.errorf("backup to %s: %v", pos[0], err)
		if errors.Is(err, errBackupDest) {
			return exitFindings
		}
		return exitUsage // I/O: no such directory
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	if a.Kind != store.ActorHuman {
		m.errorf("%s may not back up the store: a backup holds every agent's records (humans only): %v", a, store.ErrForbidden)
		return exitFindings
	}
	write := func(w io.Writer) (int64, error) { return copySnapshot(ctx, m, s, filepath.Dir(dst), w) }
	if snap, ok := s.(snapshotter); ok {
		write = func(w io.Writer) (int64, error) { return snap.WriteSnapshot(ctx, w) }
	}
	res := backupResult{Store: backend.Redact(loc.Path), File: dst}
	// The copy is verified before it is put in place: one that does not
	// verify (a damaged store) never replaces FILE, a good earlier backup.
	var verr error
	check := func(tmp string) error {
		if err := verifyCopy(ctx, m, tmp, &res); err != nil {
			verr = errors.New(strings.ReplaceAll(err.Error(), tmp, dst))
			return verr
		}
		return nil
	}
	if res.Bytes, err = writeAtomically(dst, *force, write, check); err != nil {
		if verr != nil {
			m.errorf("backup %s does not verify: %v; nothing written", pos[0], verr)
			return exitFindings
		}
		m.errorf("backup to %s: %v", pos[0], err)
		if errors.Is(err, errBackupDest) {
			return exitFindings
		}
		return storeExitCode(err)
	}
	if m.format == "json" {
		return m.writeJSON(res)
	}
	fmt.Fprintf(m.e.stdout, "backed up %s to %s: %d bytes, %s, %s; ledger chain verified\n",
		backend.Redact(loc.Path), pos[0], res.Bytes, schema.Count(res.Records, "record"), schema.Count(res.Entries, "ledger entry"))
	return exitOK
}

// verifyCopy opens the backup read-only and checks its ledger.
func verifyCopy(ctx context.Context, m *memCmd, path string, res *backupResult) error {
	c, err := engine.OpenStore(ctx, m.e.opener(), path, store.Options{Now: m.e.now, ReadOnly: true})
	if err != nil {
		return err
	}
	defer c.Close()
	entries, err := c.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		return err
	}
	if err := c.Verify(ctx); err != nil {
		return err
	}
	if err := verifyCreations(ctx, c, entries); err != nil {
		return err
	}
	n := 0
	if _, err := c.Export(ctx, func(schema.MemoryRecord) error { n++; return nil }); err != nil {
		return err
	}
	res.Records, res.Entries, res.Verified = n, len(entries), true
	return nil
}

// copySnapshot writes the whole state of src (a store that cannot copy its
// own file: a database) to w as a bbolt store file: store.Copy reads src in
// one View into a new store in a temporary directory under dir, and that
// file is written out.
func copySnapshot(ctx context.Context, m *memCmd, src store.Store, dir string, w io.Writer) (int64, error) {
	tmp, err := os.MkdirTemp(dir, ".agent-ls-backup-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "memory.db")
	dst, err := engine.OpenStore(ctx, m.e.opener(), path, store.Options{Now: m.e.now})
	if err != nil {
		return 0, err
	}
	if _, err := store.Copy(ctx, src, dst); err != nil {
		dst.Close()
		return 0, err
	}
	if err := dst.Close(); err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// errBackupDest is a backup destination refused: one that exists (without
// --force) or is a symbolic link.
var errBackupDest = errors.New("refused")

// backupDest refuses a destination that is a symbolic link (dangling or
// not), a directory or anything but a regular file, and an existing file
// unless force.
func backupDest(dst string, force bool) error {
	// The backup is written in dst's directory: one that is missing is
	// named, not the temporary file that could not be created in it.
	dir := filepath.Dir(dst)
	if di, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("its directory %s does not exist", dir)
	} else if err == nil && !di.IsDir() {
		return fmt.Errorf("its directory %s is not a directory", dir)
	}
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: it is a symbolic link; a backup is never written through one (name the real path)", errBackupDest)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: it exists and is not a regular file", errBackupDest)
	case !force:
		return fmt.Errorf("%w: it already exists; pass --force to replace it", errBackupDest)
	}
	return nil
}

// writeAtomically writes dst through a temporary file in its directory:
// synced, checked (check, when not nil: an error leaves dst as it was),
// then put in place, so dst is never a partial copy. Without force
// the file is hard-linked into place, which fails when anything (a file, a
// symbolic link) appeared at dst meanwhile; with force it is renamed over
// dst, which replaces a link rather than following it, after a last look
// that dst is not one.
func writeAtomically(dst string, force bool, write func(io.Writer) (int64, error), check func(tmp string) error) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
		}
		os.Remove(tmp.Name())
	}()
	n, err := write(tmp)
	if err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	ok = true
	if check != nil {
		if err := check(tmp.Name()); err != nil {
			return 0, err
		}
	}
	if err := place(tmp.Name(), dst, force); err != nil {
		return 0, err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return n, nil
}

// place puts the finished temporary file at dst (see writeAtomically).
func place(tmp, dst string, force bool) error {
	if !force {
		err := os.Link(tmp, dst)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrExist):
			if err := backupDest(dst, false); err != nil {
				return err
			}
			return fmt.Errorf("%w: it already exists; pass --force to replace it", errBackupDest)
		}
		// A file system without hard links: rename after a last look.
	}
	if err := backupDest(dst, force); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
