package lsp

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// storeSettle is how long the watcher lets a burst of store writes settle
// before re-running diagnostics and refreshing hints.
const storeSettle = 50 * time.Millisecond

// watcher watches directories (never files: editors and bbolt replace and
// rewrite them) of the workspace and of each store.
type watcher struct {
	w *fsnotify.Watcher

	mu      sync.Mutex
	dirs    map[string]bool
	pending *time.Timer
	// listening holds the database stores followed (Options.Follow): a
	// commit by any process re-runs the open files as a file change does.
	listening map[string]bool
}

// startWatching creates the watcher and watches root. Failure to watch is
// logged: the server still works, without live refresh.
func (s *server) startWatching(root string) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("file watching disabled", "err", err)
		return
	}
	w := &watcher{w: fw, dirs: map[string]bool{}}
	s.mu.Lock()
	if s.watcher != nil || s.shutdown {
		s.mu.Unlock()
		_ = fw.Close()
		return
	}
	s.watcher = w
	s.mu.Unlock()
	s.goBackground(func(ctx context.Context) { s.watchLoop(ctx, w) })
	if root != "" {
		s.watchDir(root)
		s.watchStoreOf(root)
	}
}

// stopWatching closes the watcher.
func (s *server) stopWatching() {
	s.mu.Lock()
	w := s.watcher
	s.watcher = nil
	s.mu.Unlock()
	if w != nil {
		w.mu.Lock()
		if w.pending != nil {
			w.pending.Stop()
		}
		w.mu.Unlock()
		_ = w.w.Close()
	}
}

// watchDir watches path's directory (path itself when it is one).
func (s *server) watchDir(path string) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		return
	}
	dir := path
	if !isDir(path) {
		dir = filepath.Dir(path)
	}
	w.add(s, dir)
	s.watchStoreOf(path)
}

// watchStoreOf watches the store directory of the workspace of path, or its
// nearest existing ancestor so that the store's creation is seen.
func (s *server) watchStoreOf(path string) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		return
	}
	ws := s.workspaceFor(path)
	if engine.IsURL(ws.StorePath) {
		if s.opts.Follow == nil {
			return
		}
		poll, _ := schema.ParseStorePoll(ws.Config.StorePoll) // checked with the config
		s.listenTo(w, ws.StorePath, poll)
		return
	}
	dir := filepath.Dir(ws.StorePath)
	for !isDir(dir) {
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
	w.add(s, dir)
}

// listenTo follows the database store at location once per server: its
// listener reconnects by itself, and polls where notifications do not
// arrive, so open files refresh within a second of another process's
// commit.
func (s *server) listenTo(w *watcher, location string, poll time.Duration) {
	w.mu.Lock()
	if w.listening == nil {
		w.listening = map[string]bool{}
	}
	if w.listening[location] {
		w.mu.Unlock()
		return
	}
	w.listening[location] = true
	w.mu.Unlock()
	s.goBackground(func(ctx context.Context) {
		src := s.opts.Follow(location, poll)
		failed := false
		for ctx.Err() == nil {
			ch, err := src.Watch(ctx)
			if err != nil {
				s.log.Debug("listen to store", "err", err)
				failed = true
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if failed {
				// The server is back: re-run the files that found it
				// unreachable.
				failed = false
				s.storeChanged()
			}
			for range ch {
				s.storeChanged()
			}
		}
	})
}

func (w *watcher) add(s *server, dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] {
		return
	}
	if err := w.w.Add(dir); err != nil {
		s.log.Debug("watch", "dir", dir, "err", err)
		return
	}
	w.dirs[dir] = true
}

// forget drops dir from the watched set (its watch went with it).
func (w *watcher) forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] {
		delete(w.dirs, dir)
		_ = w.w.Remove(dir) // already gone in the kernel; keeps fsnotify's table clean
	}
}

// onStorePath reports whether dir is the store directory of an open file's
// workspace or one of its ancestors.
func (s *server) onStorePath(dir string) bool {
	for _, u := range s.openURIs() {
		sdir := filepath.Dir(s.workspaceFor(uriToPath(u)).StorePath)
		if rel, err := filepath.Rel(dir, sdir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func (s *server) watchLoop(ctx context.Context, w *watcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// A watched directory that is deleted or moved away loses
				// its watch: forget it so that a new one is watched again.
				w.forget(ev.Name)
			}
			if ev.Has(fsnotify.Create) && isDir(ev.Name) {
				// A new directory may hold the store (.agent-memory); the
				// store may be moved into it before the watch is added, so
				// a directory on the way to a store re-runs the files.
				s.watchStoreOf(ev.Name)
				if s.onStorePath(ev.Name) {
					s.storeChanged()
				}
			}
			s.fileChanged(ev.Name)
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			s.log.Debug("watch error", "err", err)
		}
	}
}

// fileChanged reacts to a change of path: a workspace config reloads the
// configuration, a store re-runs the open files (debounced).
func (s *server) fileChanged(path string) {
	if path == "" {
		return
	}
	if filepath.Base(path) == schema.WorkspaceConfigName {
		s.forgetWorkspaces()
		s.watchStoreOf(path)
		s.storeChanged()
		return
	}
	for _, u := range s.openURIs() {
		ws := s.workspaceFor(uriToPath(u))
		if path == ws.StorePath || filepath.Dir(path) == filepath.Dir(ws.StorePath) && isStoreFile(path, ws.StorePath) {
			s.storeChanged()
			return
		}
	}
}

// isStoreFile reports whether path is the store file or one it creates
// beside itself while writing.
func isStoreFile(path, storePath string) bool {
	base, sbase := filepath.Base(path), filepath.Base(storePath)
	return base == sbase || len(base) > len(sbase) && base[:len(sbase)] == sbase
}

// storeChanged schedules a re-run of every open document and an inlay hint
// refresh once writes settle.
func (s *server) storeChanged() {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		s.rerunAll()
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending != nil {
		w.pending.Reset(storeSettle)
		return
	}
	w.pending = time.AfterFunc(storeSettle, func() {
		w.mu.Lock()
		w.pending = nil
		w.mu.Unlock()
		s.rerunAll()
	})
}

// rerunAll re-diagnoses every open document and refreshes inlay hints.
func (s *server) rerunAll() {
	if s.ctx.Err() != nil {
		return
	}
	for _, u := range s.openURIs() {
		s.diagnose(u)
	}
	s.goBackground(func(ctx context.Context) { s.refreshInlayHints(ctx) })
}

func isDir(path string) bool {
	fi, err := statPath(path)
	return err == nil && fi.IsDir()
}
