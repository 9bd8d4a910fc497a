package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/store"
)

// Options are the language server's dependencies, passed in by the host.
type Options struct {
	// OpenStore opens the store at path for one operation; the server closes
	// it right after, so other processes can keep writing.
	OpenStore func(ctx context.Context, path string) (store.Store, error)
	// OpenStoreReadOnly, when set, opens the store for reads (diagnostics,
	// hints, hover) with a shared lock; OpenStore is used otherwise.
	OpenStoreReadOnly func(ctx context.Context, path string) (store.Store, error)
	// Follow tells the server that the database store at location may have
	// changed (cmd/agent-ls wires the engine's Opener.Source); nil follows
	// no database store (files are watched with fsnotify).
	Follow func(location string, poll time.Duration) events.Source
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger receives the server's logs (discarded when nil); warnings and
	// errors are also sent to the client as window/logMessage.
	Logger *slog.Logger
	// Lint, when set, adds lint findings to each document's diagnostics.
	Lint Linter
	// Getenv reads the environment, for the default actor human:$USER.
	Getenv func(string) string
	// NoWatch turns off file watching (fsnotify).
	NoWatch bool
	// Version is reported in serverInfo.
	Version string
	// Idle, when set, is called once the server has handled every message
	// and finished its background work and nothing new came for IdleAfter;
	// again only after more work (cmd/agent-ls returns freed heap to the
	// system there).
	Idle      func()
	IdleAfter time.Duration

	testHook func(*server) // tests reach the server's internals
}

// drainGrace bounds how long Serve lets in-flight messages finish after the
// client's stream ended.
const drainGrace = 5 * time.Second

// ErrExitWithoutShutdown is Serve's error when the client sent exit before
// shutdown; hosts exit with status 1 (LSP).
var ErrExitWithoutShutdown = errors.New("exit without shutdown")

// Serve runs a language server on rwc (stdio in production) until the client
// sends exit, the stream ends or ctx is done. Stdout-like rwc carries only
// protocol messages. It returns nil on a clean end (EOF, or exit after
// shutdown).
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	base := opts.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	s := &server{
		opts: opts,
		ctx:  ctx,
		docs: map[protocol.DocumentURI]*document{},
		exit: make(chan struct{}),

		lintTurns: newTurns(), viewTurns: newTurns(), bigTurns: newTurns(), readTurns: newTurns(),
		idle: newIdleWatch(opts.IdleAfter, opts.Idle),

		editWait: 5 * time.Second, textChange: make(chan struct{}),
	}
	st := newStream(rwc, base)
	s.conn = jsonrpc2.NewConn(st)
	s.log = slog.New(&clientLogHandler{next: base.Handler(), s: s})
	s.stores = newStoreTracker(s)
	// The caches that share agents' records drop them together (budget.go).
	s.budget.register(s.views.drop)
	s.budget.register(s.cands.drop)
	// A store whose ledger does not verify takes no changes (ledgercheck.go).
	s.readOnlyChecks = append(s.readOnlyChecks, s.stores.ledgerReadOnly)

	if opts.testHook != nil {
		opts.testHook(s)
	}
	var wg sync.WaitGroup
	s.conn.Go(ctx, encodedReplies(st, cancelHandler(orderedHandler(s.route, s.log, &wg, s.idle), s.log)))

	select {
	case <-s.conn.Done():
		// Stdin ended: let the messages already received finish (a piped
		// "initialize, shutdown, exit" session), within a grace period in
		// case one waits for a client that is gone.
		drained := make(chan struct{})
		go func() { wg.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-s.exit:
		case <-ctx.Done():
		case <-time.After(drainGrace):
		}
	case <-s.exit:
	case <-ctx.Done():
	}
	cancel()
	s.stopWatching()
	_ = s.conn.Close()
	<-s.conn.Done()
	wg.Wait()
	s.bgMu.Lock()
	s.bgDone = true
	s.bgMu.Unlock()
	s.bg.Wait()

	s.mu.Lock()
	exited, shutdown := s.exited, s.shutdown
	s.mu.Unlock()
	if exited && !shutdown {
		return ErrExitWithoutShutdown
	}
	// ctx is cancelled by now: whether the host stopped the server is
	// parent's to say.
	if err := s.conn.Err(); err != nil && !exited && !isEOF(err) && parent.Err() == nil {
		return fmt.Errorf("language server connection: %w", err)
	}
	return nil
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || strings.Contains(err.Error(), "closed")
}

// server is the state of one client connection.
type server struct {
	notImplemented

	opts   Options
	ctx    context.Context // lives as long as the connection
	conn   jsonrpc2.Conn
	log    *slog.Logger
	stores *storeTracker
	views  viewCache      // last composition of each agent file (hover, hints, code actions)
	cands  candidateCache // the agents' candidates read last, shared by lint and views
	budget recordBudget   // bounds the records views, candidates and lint facts hold together
	// lintTurns and viewTurns: one lint pass and one composition read
	// from the store at a time; bigTurns: one of either when its agent is
	// big; readTurns: one decode of an agent's candidates at a time, for
	// either (turns.go).
	lintTurns, viewTurns, bigTurns, readTurns turns
	// idle sees work start and end (messages, background jobs).
	idle    *idleWatch
	symbols symbolCache    // encoded outline of each agent file's last parse
	bg      sync.WaitGroup // background work (diagnostics, refreshes)
	bgMu    sync.Mutex     // guards bgDone against Add after Wait
	bgDone  bool
	pubMu   sync.Mutex // serializes publishDiagnostics and its staleness check

	mu          sync.Mutex
	initialized bool // initialize answered
	shutdown    bool
	exited      bool
	exit        chan struct{}
	refresh     bool // client supports workspace/inlayHint/refresh
	lensRefresh bool // client supports workspace/codeLens/refresh
	hints       bool // client supports textDocument/inlayHint
	// disabledActions: the client shows a code action's disabled reason
	// (codeAction.disabledSupport).
	disabledActions bool
	// versionedEdits: the client takes versioned edits
	// (workspace.workspaceEdit.documentChanges; agentFile.edit).
	versionedEdits bool
	// applyEdits: the client applies edits the server sends
	// (workspace.applyEdit), which adopt needs.
	applyEdits bool
	// resolveTooltip: the client resolves inlay hint tooltips
	// (inlayHint/resolve), so hints are sent without them.
	resolveTooltip bool
	root           string
	folders        []string // workspace folders: the files the server serves (confine.go)
	init           initOptions
	workspaces     map[string]*workspaceInfo // config file (or root) -> resolved workspace
	docs           map[protocol.DocumentURI]*document
	gen            uint64
	watcher        *watcher
	// readOnlyChecks are the reasons beyond the config that make a
	// workspace read-only (readonly.go).
	readOnlyChecks []readOnlyCheck
	configDiags    map[string]bool // configs with a read-only diagnostic published
	// loadHook, set by tests, runs when a request reads its agent file.
	loadHook func(protocol.DocumentURI)
	// editWait bounds how long adopt waits for the document to show an
	// edit the client answered applied (awaitEdit); textChange is closed
	// and replaced whenever an open document's text changes.
	editWait   time.Duration
	textChange chan struct{}
}

// route is the middleware in front of protocol.ServerHandler.
func (s *server) route(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	method := req.Method()
	_, isCall := req.(*jsonrpc2.Call)
	if isCall && ctx.Err() != nil {
		return reply(ctx, nil, protocol.ErrRequestCancelled)
	}
	s.mu.Lock()
	initialized, shutdown := s.initialized, s.shutdown
	s.mu.Unlock()

	switch method {
	case protocol.MethodInitialize:
		if !isCall {
			return nil // initialize is a request; a notification of that name initializes nothing
		}
		if initialized {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize: already initialized"))
		}
		res, err := s.initialize(ctx, req.Params())
		return reply(ctx, res, err)
	case protocol.MethodExit:
		s.mu.Lock()
		if !s.exited {
			s.exited = true
			close(s.exit)
		}
		s.mu.Unlock()
		return reply(ctx, nil, nil)
	}
	if !initialized {
		if isCall {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, method+": server not initialized"))
		}
		return nil // notifications before initialize are dropped (LSP)
	}
	if shutdown && isCall {
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, method+": server is shutting down"))
	}

	switch method {
	case protocol.MethodShutdown:
		if !isCall {
			return nil // shutdown is a request; a notification of that name shuts nothing down
		}
		s.mu.Lock()
		s.shutdown = true
		s.mu.Unlock()
		s.stopWatching()
		return reply(ctx, nil, nil)
	case protocol.MethodInitialized:
		s.initializedNotification()
		return reply(ctx, nil, nil)
	case methodInlayHint:
		var p inlayHintParams
		if err := decodeParams(method, req.Params(), &p); err != nil {
			return reply(ctx, nil, err)
		}
		res, err := s.inlayHint(ctx, &p)
		return reply(ctx, res, err)
	case protocol.MethodTextDocumentDocumentSymbol:
		// Answered here, not through protocol.ServerHandler: the outline
		// is a pre-encoded reply (encodedResult), which the library's
		// typed DocumentSymbol cannot return.
		var p protocol.DocumentSymbolParams
		if err := decodeParams(method, req.Params(), &p); err != nil {
			return reply(ctx, nil, err)
		}
		res, err := s.documentSymbol(ctx, &p)
		return reply(ctx, res, err)
	case protocol.MethodTextDocumentDidChange:
		// Decoded here, not by protocol.ServerHandler: the library's
		// change event has a range that is not optional, so a whole-text
		// change would read as an insertion at 0:0 (textsync.go). A
		// refused change is a notification's error: logged, which sends
		// it to the client as window/logMessage.
		var p didChangeParams
		err := decodeParams(method, req.Params(), &p)
		if err == nil {
			err = s.didChange(&p)
		} else {
			s.didChangeUndecodable(req.Params(), err)
		}
		if err != nil {
			s.log.Warn("didChange refused", "err", err)
		}
		return reply(ctx, nil, err)
	case methodInlayHintResolve:
		var h InlayHint
		if err := decodeParams(method, req.Params(), &h); err != nil {
			return reply(ctx, nil, err)
		}
		res, err := s.resolveInlayHint(ctx, &h)
		return reply(ctx, res, err)
	}
	if strings.HasPrefix(method, "agent-ls/") {
		if h, ok := s.customRequests()[method]; ok {
			res, err := h(ctx, req.Params())
			return reply(ctx, res, err)
		}
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, method+": unknown agent-ls request"))
	}
	if !isCall && !knownNotification(method) {
		if !strings.HasPrefix(method, "$/") {
			s.log.Debug("ignored notification", "method", method)
		}
		return nil
	}
	return protocol.ServerHandler(s, nil)(ctx, paramsErrorReply(reply), withParams(req))
}

// withParams gives a message without params (they are optional in
// JSON-RPC) the params null: the library decodes absent params as a parse
// error, which turned an unknown or unserved method called without params
// into InvalidParams instead of MethodNotFound. Handlers see zero params
// and say what is missing.
func withParams(req jsonrpc2.Request) jsonrpc2.Request {
	if len(req.Params()) > 0 {
		return req
	}
	var out jsonrpc2.Request
	var err error
	if call, ok := req.(*jsonrpc2.Call); ok {
		out, err = jsonrpc2.NewCall(call.ID(), req.Method(), nil)
	} else {
		out, err = jsonrpc2.NewNotification(req.Method(), nil)
	}
	if err != nil {
		return req
	}
	return out
}

// knownNotification lists the client notifications the server acts on.
func knownNotification(method string) bool {
	switch method {
	case protocol.MethodTextDocumentDidOpen, protocol.MethodTextDocumentDidChange,
		protocol.MethodTextDocumentDidSave, protocol.MethodTextDocumentDidClose,
		protocol.MethodWorkspaceDidChangeConfiguration, protocol.MethodWorkspaceDidChangeWatchedFiles,
		protocol.MethodWorkspaceDidChangeWorkspaceFolders:
		return true
	}
	return false
}

// paramsErrorReply turns the library's "parse error" for params that do not
// decode into InvalidParams with the decoder's message (framing-level parse
// errors never get here: the stream answers them).
func paramsErrorReply(reply jsonrpc2.Replier) jsonrpc2.Replier {
	return func(ctx context.Context, result any, err error) error {
		// The library formats the code's message with %s, so match it.
		if err != nil && strings.HasPrefix(err.Error(), jsonrpc2.ErrParse.Error()) {
			err = jsonrpc2.NewError(jsonrpc2.InvalidParams, "invalid params: "+err.Error())
		}
		return reply(ctx, result, err)
	}
}

// lenientCapabilities drops a type error inside the client's capabilities:
// Lua clients (Neovim) encode an empty table as [] where the protocol has an
// object, and a capability the server cannot read is one it does not use.
// encoding/json goes on decoding after a type error, so the rest is kept.
func lenientCapabilities(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && (te.Field == "capabilities" || strings.HasPrefix(te.Field, "capabilities.")) {
		return nil
	}
	return err
}

// initialize answers the initialize request.
func (s *server) initialize(ctx context.Context, raw json.RawMessage) (*initializeResult, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, invalidParams(protocol.MethodInitialize, errors.New("params are required"))
	}
	var p protocol.InitializeParams
	if err := lenientCapabilities(json.Unmarshal(raw, &p)); err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	var extra initializeParams
	if err := lenientCapabilities(json.Unmarshal(raw, &extra)); err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	opts, err := parseInitOptions(extra.InitializationOptions)
	if err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	root := ""
	var folders []string
	for _, f := range p.WorkspaceFolders {
		folders = append(folders, uriToPath(protocol.DocumentURI(f.URI)))
	}
	if len(folders) > 0 {
		root = folders[0]
	}
	//lint:ignore SA1019 older clients send only rootUri
	if rootURI := p.RootURI; root == "" && rootURI != "" {
		root = uriToPath(rootURI)
	}
	if root == "" {
		//lint:ignore SA1019 the oldest clients send only rootPath
		root = p.RootPath
	}
	if len(folders) == 0 {
		folders = []string{root}
	}
	// A client that named its workspace is confined to it, even when no
	// folder is a file:// one (a virtual file system): then nothing on
	// disk is served. Only a client that names none is not confined.
	//lint:ignore SA1019 older clients send only rootUri or rootPath
	named := len(p.WorkspaceFolders) > 0 || p.RootURI != "" || p.RootPath != ""
	s.setFolders(folders, named)
	s.mu.Lock()
	s.initialized = true
	s.root = root
	s.init = opts
	s.refresh = extra.Capabilities.Workspace.InlayHint.RefreshSupport
	s.lensRefresh = codeLensRefreshSupport(raw)
	s.hints = extra.Capabilities.TextDocument.InlayHint != nil
	s.disabledActions = extra.Capabilities.TextDocument.CodeAction.DisabledSupport
	s.resolveTooltip = extra.Capabilities.TextDocument.InlayHint.resolves("tooltip")
	s.versionedEdits = extra.Capabilities.Workspace.WorkspaceEdit.DocumentChanges
	s.applyEdits = extra.Capabilities.Workspace.ApplyEdit
	s.workspaces = map[string]*workspaceInfo{}
	s.mu.Unlock()

	version := s.opts.Version
	if version == "" {
		version = "devel"
	}
	return &initializeResult{
		Capabilities: serverCapabilities{
			ServerCapabilities: protocol.ServerCapabilities{
				TextDocumentSync: &protocol.TextDocumentSyncOptions{
					OpenClose: true,
					Change:    protocol.TextDocumentSyncKindIncremental,
					Save:      &protocol.SaveOptions{IncludeText: true},
				},
				HoverProvider:          true,
				CodeActionProvider:     true,
				DocumentSymbolProvider: true,
				CodeLensProvider:       &protocol.CodeLensOptions{},
				CompletionProvider:     &protocol.CompletionOptions{TriggerCharacters: []string{":", " ", "-"}},
				ExecuteCommandProvider: &protocol.ExecuteCommandOptions{Commands: Commands},
				Workspace: &protocol.ServerCapabilitiesWorkspace{
					WorkspaceFolders: &protocol.ServerCapabilitiesWorkspaceFolders{Supported: true, ChangeNotifications: true},
				},
			},
			InlayHintProvider: &inlayHintOptions{ResolveProvider: true},
		},
		ServerInfo: &protocol.ServerInfo{Name: "agent-ls", Version: version},
	}, nil
}

// initializedNotification starts watching and reports the store's status.
func (s *server) initializedNotification() {
	s.mu.Lock()
	root := s.root
	s.mu.Unlock()
	if !s.opts.NoWatch {
		s.startWatching(root)
	}
	if root == "" {
		return
	}
	ws := s.workspaceFor(root)
	s.goBackground(func(ctx context.Context) {
		s.stores.probe(ctx, ws, "")
	})
}

// goBackground runs f in a goroutine that Serve waits for.
func (s *server) goBackground(f func(ctx context.Context)) {
	s.bgMu.Lock()
	if s.bgDone {
		s.bgMu.Unlock()
		return
	}
	s.bg.Add(1)
	s.bgMu.Unlock()
	s.idle.begin()
	go func() {
		defer s.bg.Done()
		defer s.idle.end()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("background panic", "panic", fmt.Sprint(p))
			}
		}()
		f(s.ctx)
	}()
}

// notify sends a notification to the client, logging failures.
func (s *server) notify(method string, params any) {
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), method, params); err != nil && s.ctx.Err() == nil {
		// Not through s.log: a failing connection would loop.
		if s.opts.Logger != nil {
			s.opts.Logger.Warn("notify", "method", method, "err", err)
		}
	}
}

// clientLogHandler forwards warnings and errors to the client as
// window/logMessage, besides the host's handler (stderr).
type clientLogHandler struct {
	next  slog.Handler
	s     *server
	attrs []slog.Attr
}

func (h *clientLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *clientLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.next.Enabled(ctx, r.Level) {
		_ = h.next.Handle(ctx, r)
	}
	if r.Level < slog.LevelWarn {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		if a.Key == "stack" {
			return true
		}
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	typ := protocol.MessageTypeWarning
	if r.Level >= slog.LevelError {
		typ = protocol.MessageTypeError
	}
	h.s.notify(protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: typ, Message: b.String()})
	return nil
}

func (h *clientLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &clientLogHandler{next: h.next.WithAttrs(as), s: h.s, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h *clientLogHandler) WithGroup(name string) slog.Handler {
	return &clientLogHandler{next: h.next.WithGroup(name), s: h.s, attrs: h.attrs}
}

// showMessage sends window/showMessage.
func (s *server) showMessage(typ protocol.MessageType, msg string) {
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// ApplyEdit asks the client to apply edit (workspace/applyEdit) and decodes
// the real {applied} result (library defect 1).
func (s *server) applyEdit(ctx context.Context, label string, edit protocol.WorkspaceEdit) (ApplyEditResult, error) {
	var res ApplyEditResult
	if err := protocol.Call(ctx, s.conn, methodApplyEdit, &applyWorkspaceEditParams{Label: label, Edit: edit}, &res); err != nil {
		return res, fmt.Errorf("workspace/applyEdit: %w", err)
	}
	return res, nil
}

// refreshInlayHints asks the client to re-request inlay hints (and code
// lenses), when it supports that.
func (s *server) refreshInlayHints(ctx context.Context) {
	s.refreshCodeLenses(ctx)
	s.mu.Lock()
	ok := s.refresh
	s.mu.Unlock()
	if !ok {
		return
	}
	if err := protocol.Call(ctx, s.conn, methodInlayHintRefresh, nil, nil); err != nil && ctx.Err() == nil {
		s.log.Debug("inlay hint refresh", "err", err)
	}
}
