package lsp

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// agentFile is one agent file as the server sees it now: the editor's text
// when open, else the file on disk.
type agentFile struct {
	uri   protocol.DocumentURI
	path  string
	text  []byte
	doc   *schema.Document
	agent *schema.AgentConfig // nil when the file has schema errors
	ws    *workspaceInfo
	// version is the open document's version text is of (nil when the
	// file is not open: its text is the disk's); versioned is whether the
	// client takes versioned edits (workspace.workspaceEdit.documentChanges).
	version   *int32
	versioned bool
}

// edit is a workspace edit of f's text: to a client that takes versioned
// edits, one that names the version it was made for (null for a file not
// open), so an editor that has moved on refuses it instead of applying it
// at positions that now mean other text.
func (f *agentFile) edit(edits ...protocol.TextEdit) *protocol.WorkspaceEdit {
	if !f.versioned {
		return &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{f.uri: edits}}
	}
	return &protocol.WorkspaceEdit{DocumentChanges: []protocol.TextDocumentEdit{{
		TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
			TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: f.uri}, Version: f.version},
		Edits: edits,
	}}}
}

// loadAgentFile resolves uri to its current text, parse and workspace.
func (s *server) loadAgentFile(uri protocol.DocumentURI) (*agentFile, error) {
	return s.loadPinned(uri, s.pin(uri))
}

// pinned is an open document as a request found it (nil d when the file is
// not open). A request whose positions refer to the text takes it before
// releasing the queue (releaseQueue), so that a didChange after it does not
// move the text under those positions.
type pinned struct {
	d      *document
	parsed *analysis
}

func (s *server) pin(uri protocol.DocumentURI) pinned {
	d, parsed := s.latest(uri)
	return pinned{d, parsed}
}

// loadPinned is loadAgentFile of the document as p holds it.
func (s *server) loadPinned(uri protocol.DocumentURI, p pinned) (*agentFile, error) {
	if s.loadHook != nil {
		s.loadHook(uri)
	}
	path, err := s.confinedPath(uri)
	if err != nil {
		return nil, err
	}
	if err := served(path); err != nil {
		return nil, err
	}
	var text []byte
	var a *analysis
	var version *int32
	if p.d != nil && p.d.outOfSync != "" {
		return nil, errOutOfSync(p.d)
	}
	if d, parsed := p.d, p.parsed; d != nil {
		text = d.text
		v := d.version
		version = &v
		if parsed != nil && parsed.version == d.version {
			a = parsed
		}
	} else {
		data, err := readEditorText(path)
		if err != nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("read agent file: %v", err))
		}
		text = data
	}
	if a == nil {
		a = analyze(path, 0, text, nil)
	}
	if a.doc == nil {
		return nil, &unparsedError{jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s does not parse: %v", path, a.parseErr))}
	}
	s.mu.Lock()
	versioned := s.versionedEdits
	s.mu.Unlock()
	return &agentFile{uri: uri, path: path, text: text, doc: a.doc, agent: a.agent, ws: s.workspaceFor(path),
		version: version, versioned: versioned}, nil
}

// errOutOfSync is the answer of a request on a document whose text the
// server lost (loseSync): ContentModified, which editors drop silently;
// the document's diagnostic says what happened.
func errOutOfSync(d *document) error {
	return jsonrpc2.NewError(protocol.CodeContentModified, outOfSyncMessage(d.path, d.outOfSync))
}

// unparsedError is loadAgentFile's error for a text that does not parse,
// or a file the server does not serve (served), InvalidParams. The
// requests that follow typing (hover, inlay hints, code actions, code
// lenses, the outline) answer empty instead: the file's diagnostics report
// the parse error, and a text being typed does not parse most of the time.
type unparsedError struct{ err *jsonrpc2.Error }

// served is nil for the files the server serves, agent files and the
// workspace config (as DidOpen follows them): an editor that starts the
// server for every YAML or JSON file also asks it about a
// docker-compose.yaml, which is not one.
func served(path string) error {
	if schema.IsAgentFile(path) || isWorkspaceConfig(path) {
		return nil
	}
	return &unparsedError{jsonrpc2.NewError(jsonrpc2.InvalidParams,
		fmt.Sprintf("%s is not an agent file (*.agent.yaml, *.agent.yml, *.agent.json) nor the workspace config", path))}
}

func (e *unparsedError) Error() string { return e.err.Error() }
func (e *unparsedError) Unwrap() error { return e.err }

// unparsed reports whether err is loadAgentFile's for a text that does not
// parse.
func unparsed(err error) bool {
	var u *unparsedError
	return errors.As(err, &u)
}

// requireAgent fails when the file has schema errors.
func (f *agentFile) requireAgent() error {
	if isWorkspaceConfig(f.path) {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s is the workspace config, not an agent file", f.path))
	}
	if f.agent == nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s has schema errors: fix them first", f.path))
	}
	return nil
}

// foreignAgent refuses an agent actor the memories of an agent file that is
// not its own (engine.ConfineFile).
func foreignAgent(ws *workspaceInfo, agent *schema.AgentConfig) error {
	return engine.ConfineFile(engine.ViewOf(ws.Actor, ws.Config.Scope), agent)
}

// errNoStore is returned by withStore when the store file does not exist.
var errNoStore = errors.New("no memory store")

// withStore opens f's store for one operation and closes it. A read
// (write false) opens it read-only and runs fn on one View, a snapshot that
// every read of fn agrees with, through store.ReadOnly (a write is
// ErrForbidden); a write gets the store itself. A missing store is errNoStore for reads and writes alike: every
// editor command acts on records or proposals that must already exist, so
// none of them creates an empty store file. An agent actor is refused any
// other agent's file (foreignAgent).
func (s *server) withStore(ctx context.Context, f *agentFile, write bool, fn func(st store.Tx) error) error {
	if err := foreignAgent(f.ws, f.agent); err != nil {
		return err
	}
	if write {
		// Nothing writes to the store of a read-only workspace (readonly.go).
		if err := s.writable(ctx, f.ws, "writing the memory store"); err != nil {
			return err
		}
	}
	open := s.opts.OpenStore
	if !write && s.opts.OpenStoreReadOnly != nil {
		open = s.opts.OpenStoreReadOnly
	}
	if open == nil {
		return fmt.Errorf("%w: the server has no store opener", errNoStore)
	}
	if !storeExists(f.ws.StorePath) {
		return fmt.Errorf("%w at %s", errNoStore, engine.Redact(f.ws.StorePath))
	}
	// In this process's line for the store (engine.QueueFor): the server
	// answers requests concurrently and must not lock itself out.
	return engine.QueueFor(f.ws.StorePath).WithStore(ctx, func(ctx context.Context, _ bool) (store.Store, error) {
		st, err := open(ctx, f.ws.StorePath)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", engine.Redact(f.ws.StorePath), err)
		}
		return st, nil
	}, write, fn)
}

// engine returns the evolve engine of f's agent over st.
func (s *server) engine(f *agentFile, st store.Tx) *engine.Agent {
	return engine.NewAgent(engine.AgentSpec{
		Store: st, Workspace: &workspace.Workspace{Config: f.ws.Config, Root: f.ws.Root}, Agent: f.agent, Scope: f.ws.Config.Scope,
		Now: s.opts.Now, Logger: s.log,
	})
}

// rpcError turns a store or gate error into a JSON-RPC error with a clear
// message (the gate's reason for refusals).
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return err
	}
	code := jsonrpc2.InternalError
	switch {
	case errors.Is(err, engine.ErrRefused), errors.Is(err, store.ErrForbidden), errors.Is(err, store.ErrConflict):
		code = codeRefused
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		code = jsonrpc2.InvalidParams
	case errors.Is(err, store.ErrLocked), errors.Is(err, store.ErrCorrupt), errors.Is(err, errNoStore):
		code = codeStoreUnavailable
	case errors.Is(err, context.Canceled):
		return err
	}
	return jsonrpc2.NewError(code, err.Error())
}

// Error codes of agent-ls's own errors (in the server-defined range).
const (
	codeRefused          jsonrpc2.Code = -32010 // a gate refused the operation
	codeStoreUnavailable jsonrpc2.Code = -32011 // the store is missing, locked or corrupt
)
