package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

// document is one open agent file: the client's text at a version, and the
// analysis of the latest text.
type document struct {
	uri     protocol.DocumentURI
	path    string
	version int32
	text    []byte
	gen     uint64             // the current analysis run; older runs never publish
	cancel  context.CancelFunc // cancels the current run
	parsed  *analysis          // the newest finished parse (may be of an older version)
	// parses keeps the pieces of the last parse, so an edit re-parses only
	// the pieces it changed. A document gets one on its first change: a
	// file only opened (or only read) does not hold its pieces in memory.
	parses *schema.ParseCache
	// lastLint is the last lint pass with a store, for reusedLint.
	lastLint *lastLint
	// outOfSync, when set, says why the server no longer has the editor's
	// text (a change it could not apply): text is stale until the whole
	// text comes again (loseSync).
	outOfSync string
}

// analysis is the parse of one version of a document.
type analysis struct {
	version  int32
	doc      *schema.Document // nil when the text does not parse
	agent    *schema.AgentConfig
	problems []schema.Problem
	parseErr error
}

// snapshot is what a run analyses: immutable.
type snapshot struct {
	uri     protocol.DocumentURI
	path    string
	version int32
	text    []byte
	gen     uint64
	parses  *schema.ParseCache
}

// DidOpen starts tracking an agent file or a workspace config
// (.agent-ls.yaml) and diagnoses it.
func (s *server) DidOpen(_ context.Context, p *protocol.DidOpenTextDocumentParams) error {
	uri := p.TextDocument.URI
	path := uriToPath(uri)
	if path == "" || !schema.IsAgentFile(path) && !isWorkspaceConfig(path) {
		return nil
	}
	s.mu.Lock()
	if old := s.docs[uri]; old != nil && old.cancel != nil {
		old.cancel()
	}
	s.docs[uri] = &document{uri: uri, path: path, version: p.TextDocument.Version, text: []byte(p.TextDocument.Text)}
	s.textChanged()
	s.mu.Unlock()
	// A file outside the workspace folders is not served: no diagnostics,
	// no store, no watch (a notification has no answer: it is logged). Its
	// text is followed all the same, for when a folder holding it is
	// added (DidChangeWorkspaceFolders).
	if _, err := s.confinedPath(uri); err != nil {
		s.log.Warn("not serving a file outside the workspace", "err", err)
		return nil
	}
	s.watchDir(path)
	s.diagnose(uri)
	return nil
}

// didChange applies the changes of one textDocument/didChange in order
// (incremental sync: a change with a range replaces that range, one without
// replaces the whole text) and re-diagnoses, cancelling the stale run. The
// changes apply together or not at all (textsync.go). A change that does
// not apply, or a version not after the document's, means the server no
// longer has the editor's text: the document is out of sync (loseSync)
// until a change without a range, a save with its text, or closing and
// reopening it gives the whole text again; ranged changes meanwhile have
// nothing to apply to. The error says which change and why.
func (s *server) didChange(p *didChangeParams) error {
	uri := p.TextDocument.URI
	if len(p.ContentChanges) == 0 {
		return nil
	}
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		s.mu.Unlock()
		return nil
	}
	if p.TextDocument.Version <= d.version {
		cur := d.version
		s.mu.Unlock()
		err := fmt.Errorf("textDocument/didChange %s refused: version %d is not after the document's version %d", uri, p.TextDocument.Version, cur)
		s.loseSync(uri, cur, err)
		return err
	}
	if d.outOfSync != "" && wholeTextFrom(p.ContentChanges) < 0 {
		d.version = p.TextDocument.Version
		s.mu.Unlock()
		return nil // still out of sync: nothing to apply the ranges to
	}
	text, err := applyChanges(d.text, p.ContentChanges)
	if err != nil {
		cur := d.version
		s.mu.Unlock()
		err = fmt.Errorf("textDocument/didChange %s version %d refused (the document was at version %d): %w", uri, p.TextDocument.Version, cur, err)
		s.loseSync(uri, p.TextDocument.Version, err)
		return err
	}
	d.text = text
	d.version = p.TextDocument.Version
	d.outOfSync = ""
	if d.parses == nil {
		d.parses = schema.NewParseCache()
	}
	s.textChanged()
	s.mu.Unlock()
	s.diagnose(uri)
	return nil
}

// didChangeUndecodable handles a didChange whose params do not decode: the
// editor changed the document in a way the server cannot follow, so the
// document it names, when it can be read and is open, is out of sync.
func (s *server) didChangeUndecodable(raw []byte, err error) {
	// The uri, and the version when it is one: the rest may be what does
	// not decode.
	var p struct {
		TextDocument struct {
			URI     protocol.DocumentURI `json:"uri"`
			Version json.RawMessage      `json:"version"`
		} `json:"textDocument"`
	}
	if json.Unmarshal(raw, &p) != nil || p.TextDocument.URI == "" {
		return
	}
	var version int32
	_ = json.Unmarshal(p.TextDocument.Version, &version)
	s.loseSync(p.TextDocument.URI, version, err)
}

// loseSync marks an open document out of sync: the server no longer knows
// the editor's text. The analysis in flight is dropped, requests on the
// document answer ContentModified (loadPinned, currentText), and the
// document's diagnostics become one that says why and how to resync
// (diagnose); the first time, window/showMessage says it too. version is
// the editor's version when it is after the document's.
func (s *server) loseSync(uri protocol.DocumentURI, version int32, why error) {
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		s.mu.Unlock()
		return
	}
	first := d.outOfSync == ""
	d.outOfSync = why.Error()
	d.version = max(d.version, version)
	d.parsed = nil
	s.mu.Unlock()
	if _, err := s.confinedPath(uri); first && err == nil {
		s.showMessage(protocol.MessageTypeError, outOfSyncMessage(d.path, why.Error()))
	}
	s.diagnose(uri)
}

// outOfSyncMessage tells the user that the server lost a file's text, why,
// and what brings it back.
func outOfSyncMessage(path, why string) string {
	return fmt.Sprintf("agent-ls no longer has the editor's text of %s (%s): its features are off for the file until you save it, or close and reopen it", filepath.Base(path), why)
}

// DidSave re-diagnoses (with the saved text when the client sends it: the
// editor's whole text, which brings a document out of sync back). A saved
// workspace config is a changed config, as the file watcher would report
// it (which may be off, or out of watches).
func (s *server) DidSave(_ context.Context, p *protocol.DidSaveTextDocumentParams) error {
	uri := p.TextDocument.URI
	if path := uriToPath(uri); isWorkspaceConfig(path) {
		if _, err := s.confinedPath(uri); err == nil {
			s.fileChanged(path)
		}
	}
	s.mu.Lock()
	d := s.docs[uri]
	if d != nil && p.Text != "" && (d.outOfSync != "" || p.Text != string(d.text)) {
		// The parse of the text before is not this text's: requests
		// parse it themselves until its analysis is in.
		d.text = []byte(p.Text)
		d.outOfSync = ""
		d.parsed = nil
		s.gen++
		d.gen = s.gen // a run on the text before publishes nothing more
		s.textChanged()
	}
	s.mu.Unlock()
	if d != nil {
		s.diagnose(uri)
	}
	return nil
}

// DidClose stops tracking and clears the file's diagnostics.
func (s *server) DidClose(_ context.Context, p *protocol.DidCloseTextDocumentParams) error {
	uri := p.TextDocument.URI
	s.mu.Lock()
	d := s.docs[uri]
	if d != nil && d.cancel != nil {
		d.cancel()
	}
	delete(s.docs, uri)
	s.textChanged()
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	s.pubMu.Lock()
	s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishDiagnosticsParams{URI: uri, Version: d.version, Diagnostics: []protocol.Diagnostic{}})
	s.pubMu.Unlock()
	s.stores.forget(uri)
	return nil
}

// textChanged tells awaitEdit that an open document's text changed (or it
// opened or closed); s.mu is held.
func (s *server) textChanged() {
	close(s.textChange)
	s.textChange = make(chan struct{})
}

// awaitEdit waits until the open document uri, after version, holds more
// times than before the text an edit inserted, and reports whether it
// came to (false when the document closed, the wait passed editWait or the
// connection ended). It is how an edit the client answered applied is seen
// to have landed.
func (s *server) awaitEdit(uri protocol.DocumentURI, version int32, inserted string, before int) bool {
	timeout := time.NewTimer(s.editWait)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		d, changed := s.docs[uri], s.textChange
		landed := d != nil && d.version > version && d.outOfSync == "" && bytes.Count(d.text, []byte(inserted)) > before
		s.mu.Unlock()
		if landed {
			return true
		}
		if d == nil {
			return false
		}
		select {
		case <-changed:
		case <-timeout.C:
			return false
		case <-s.ctx.Done():
			return false
		}
	}
}

// DidChangeConfiguration is accepted; configuration comes from
// initializationOptions and .agent-ls.yaml.
func (s *server) DidChangeConfiguration(context.Context, *protocol.DidChangeConfigurationParams) error {
	return nil
}

// DidChangeWatchedFiles reacts to client-side file watching like fsnotify.
func (s *server) DidChangeWatchedFiles(_ context.Context, p *protocol.DidChangeWatchedFilesParams) error {
	for _, c := range p.Changes {
		s.fileChanged(uriToPath(c.URI))
	}
	return nil
}

// latest returns the newest analysis of uri and the document's current
// text, or nil when the file is not open.
func (s *server) latest(uri protocol.DocumentURI) (*document, *analysis) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[uri]
	if d == nil {
		return nil, nil
	}
	cp := *d
	return &cp, d.parsed
}

// isWorkspaceConfig reports whether path is a workspace config
// (.agent-ls.yaml): served with completion, hover, diagnostics and quick
// fixes from its own schema, never composed.
func isWorkspaceConfig(path string) bool {
	return schema.KindOf(path) == schema.FileWorkspace
}

// openAgentURIs lists the open agent files the server serves (workspace
// configs and files outside the workspace folders left out).
func (s *server) openAgentURIs() []protocol.DocumentURI {
	var out []protocol.DocumentURI
	for _, u := range s.openURIs() {
		if _, err := s.confinedPath(u); err == nil && !isWorkspaceConfig(uriToPath(u)) {
			out = append(out, u)
		}
	}
	return out
}

// openURIs lists the open documents.
func (s *server) openURIs() []protocol.DocumentURI {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]protocol.DocumentURI, 0, len(s.docs))
	for u := range s.docs {
		out = append(out, u)
	}
	return out
}
