package lsp

import (
	"context"
	"fmt"

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
	// A file outside the workspace folders is not served: no diagnostics,
	// no store, no watch (a notification has no answer: it is logged).
	if _, err := s.confinedPath(uri); err != nil {
		s.log.Warn("not serving a file outside the workspace", "err", err)
		return nil
	}
	s.mu.Lock()
	if old := s.docs[uri]; old != nil && old.cancel != nil {
		old.cancel()
	}
	s.docs[uri] = &document{uri: uri, path: path, version: p.TextDocument.Version, text: []byte(p.TextDocument.Text)}
	s.mu.Unlock()
	s.watchDir(path)
	s.diagnose(uri)
	return nil
}

// didChange applies the changes of one textDocument/didChange in order
// (incremental sync: a change with a range replaces that range, one without
// replaces the whole text) and re-diagnoses, cancelling the stale run. A
// change that does not apply (textsync.go), or a version not after the
// document's, is refused whole: the document keeps its text and version,
// and the error says which change and why.
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
		return fmt.Errorf("textDocument/didChange %s refused: version %d is not after the document's version %d", uri, p.TextDocument.Version, cur)
	}
	text, err := applyChanges(d.text, p.ContentChanges)
	if err != nil {
		cur := d.version
		s.mu.Unlock()
		return fmt.Errorf("textDocument/didChange %s version %d refused (the document stays at version %d): %w", uri, p.TextDocument.Version, cur, err)
	}
	d.text = text
	d.version = p.TextDocument.Version
	if d.parses == nil {
		d.parses = schema.NewParseCache()
	}
	s.mu.Unlock()
	s.diagnose(uri)
	return nil
}

// DidSave re-diagnoses (with the saved text when the client sends it).
func (s *server) DidSave(_ context.Context, p *protocol.DidSaveTextDocumentParams) error {
	uri := p.TextDocument.URI
	s.mu.Lock()
	d := s.docs[uri]
	if d != nil && p.Text != "" {
		d.text = []byte(p.Text)
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

// openAgentURIs lists the open agent files (workspace configs left out).
func (s *server) openAgentURIs() []protocol.DocumentURI {
	var out []protocol.DocumentURI
	for _, u := range s.openURIs() {
		if !isWorkspaceConfig(uriToPath(u)) {
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
