package lsp

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Read-only mode. A workspace whose state must not change (its config does
// not parse or names an actor that does not parse; a reason another part
// adds through readOnlyCheck) keeps diagnostics, hints, hover and the
// composed prompt, and refuses every state-changing command and code
// action with codeReadOnly and a message naming the reasons. It ends when
// the reason does (a fixed config is re-read when it changes).

// codeReadOnly answers a state-changing request in a read-only workspace.
const codeReadOnly jsonrpc2.Code = -32012

// readOnlyCheck is one more reason a workspace is read-only, asked before
// every state-changing request: "" when it does not apply. Add checks in
// newServer (e.g. a store whose ledger does not verify).
type readOnlyCheck func(ctx context.Context, ws *workspaceInfo) string

// readOnlyReasons lists why ws refuses state changes now: the reasons fixed
// when it was resolved (ws.ReadOnly), then each of s.readOnlyChecks.
func (s *server) readOnlyReasons(ctx context.Context, ws *workspaceInfo) []string {
	reasons := append([]string(nil), ws.ReadOnly...)
	for _, check := range s.readOnlyChecks {
		if r := check(ctx, ws); r != "" {
			reasons = append(reasons, r)
		}
	}
	return reasons
}

// writable refuses a state-changing request (what, e.g. a command name) in
// a read-only workspace with codeReadOnly; nil when it may go on.
func (s *server) writable(ctx context.Context, ws *workspaceInfo, what string) error {
	reasons := s.readOnlyReasons(ctx, ws)
	if len(reasons) == 0 {
		return nil
	}
	return jsonrpc2.NewError(codeReadOnly, fmt.Sprintf("%s refused: agent-ls is read-only here until this is fixed: %s", what, strings.Join(reasons, "; ")))
}

// configReadOnly tells the user once that ws went read-only for its config:
// an error message, and the config problem as a diagnostic at its
// line:col when the config is not open (an open config is validated as a
// document and shows the same problem).
func (s *server) configReadOnly(ws *workspaceInfo) {
	s.showMessage(protocol.MessageTypeError, "agent-ls: workspace configuration: "+ws.Problem+
		" — the language server is read-only (no approvals, promotions or other changes) until it is fixed")
	if ws.ConfigPath == "" {
		return
	}
	uri := pathToURI(ws.ConfigPath)
	s.mu.Lock()
	_, open := s.docs[uri]
	s.mu.Unlock()
	if open {
		return
	}
	s.mu.Lock()
	if s.configDiags == nil {
		s.configDiags = map[string]bool{}
	}
	s.configDiags[ws.ConfigPath] = true
	s.mu.Unlock()
	s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishDiagnosticsParams{URI: uri, Diagnostics: []protocol.Diagnostic{{
		Range: ws.ProblemRange, Severity: protocol.DiagnosticSeverityError, Source: "agent-ls", Code: "config",
		Message: ws.Problem + " (agent-ls is read-only until this is fixed)",
	}}})
}

// clearConfigDiagnostic withdraws the diagnostic configReadOnly published
// on a config that is now fine.
func (s *server) clearConfigDiagnostic(path string) {
	s.mu.Lock()
	had := s.configDiags[path]
	delete(s.configDiags, path)
	s.mu.Unlock()
	if had {
		s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishDiagnosticsParams{URI: pathToURI(path), Diagnostics: []protocol.Diagnostic{}})
	}
}
