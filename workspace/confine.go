package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Confinement (docs/TRUST.md, "Files outside the workspace"): agent-ls
// reads an agent file or a workspace config only when it resolves — every
// symbolic link followed, every .. applied — inside the workspace root.
// Within is the one rule; the command line (validate, lint, render,
// overlay, diff, mcp, the workspace's agent files) and the language server
// (its workspace folders) both call it.

// ErrOutside is what an *OutsideError wraps.
var ErrOutside = errors.New("resolves outside the workspace root")

// OutsideError refuses a file that resolves outside its workspace root.
// It names the file as given and the root, never what the file holds nor
// where it leads.
type OutsideError struct {
	Path string // the file, as the caller named it
	Root string // the workspace root
}

// Reason is the error without the file's name (for a diagnostic that
// already names it at file:line:col).
func (e *OutsideError) Reason() string {
	return fmt.Sprintf("%s %s (a symbolic link or .. leads out of it); not read", ErrOutside, e.Root)
}

func (e *OutsideError) Error() string { return e.Path + ": " + e.Reason() }

func (e *OutsideError) Unwrap() error { return ErrOutside }

// Within reports whether path resolves inside root (or is root): both are
// made absolute and every symbolic link in them is followed, so neither a
// symlink nor a .. leads out. A path not on disk yet resolves through its
// nearest existing ancestor; a path whose existing part cannot be resolved
// (a dangling symbolic link, a loop) is not within.
func Within(root, path string) bool {
	rr, ok := resolved(root)
	if !ok {
		return false
	}
	rp, ok := resolved(path)
	return ok && under(rp, rr)
}

// Confine is Within as an error: an *OutsideError (wrapping ErrOutside)
// when path resolves outside root.
func Confine(root, path string) error {
	if Within(root, path) {
		return nil
	}
	return &OutsideError{Path: path, Root: root}
}

// RootOf is the workspace root of a file: the directory of the nearest
// .agent-ls.yaml above it (a workspace config is its own), else the file's
// directory. The search is lexical (the file is not opened).
func RootOf(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", file, err)
	}
	dir := filepath.Dir(abs)
	p, err := ConfigPathWithin(dir, "")
	if err != nil {
		return "", err
	}
	if p != "" {
		return filepath.Dir(p), nil
	}
	return dir, nil
}

// ConfineFile refuses an agent file or a workspace config that resolves
// outside the root of the workspace it lies in (RootOf): an
// *OutsideError naming file as given.
func ConfineFile(file string) error {
	root, err := RootOf(file)
	if err != nil {
		return err
	}
	return Confine(root, file)
}

// ForFile is Find for an agent file: its workspace, or an *OutsideError
// (and no workspace) when the file resolves outside the workspace root.
func ForFile(file string) (*Workspace, error) {
	w, err := Find(file)
	if w == nil {
		return nil, err
	}
	if cerr := Confine(w.Root, file); cerr != nil {
		return nil, cerr
	}
	return w, err
}

// resolved is p absolute with every symbolic link followed; a part not on
// disk yet is joined as is to its nearest existing ancestor. ok is false
// when an existing part cannot be resolved.
func resolved(p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	var rest []string
	for d := abs; ; {
		r, err := filepath.EvalSymlinks(d)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), true
		}
		if _, lerr := os.Lstat(d); lerr == nil {
			return "", false // there, but it does not resolve
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		rest = append([]string{filepath.Base(d)}, rest...)
		d = parent
	}
}

// under reports whether path is dir or lies below it (both clean and
// absolute).
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
