package lsp

import (
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// lintReuseFor bounds how long a lint pass's findings are reused: the
// findings depend on the clock too (a proposal expiring, a record going
// stale), and within this bound they are as fresh as the store facts the
// linter itself keeps while the store file is unchanged.
const lintReuseFor = time.Second

// lastLint is a document's last lint pass with a store, and what it was a
// function of: the decoded agent (the parse cache hands back the same
// *AgentConfig for a value-equal edit), the document's layout, the
// workspace (a reloaded config is a new *workspaceInfo) and the store file
// (its stamp before the pass read it).
type lastLint struct {
	agent *schema.AgentConfig
	doc   *schema.Document
	ws    *workspaceInfo
	stamp engine.StoreStamp
	at    time.Time
	ps    []schema.Problem // before suppression
}

// reusedLint returns the findings of uri's last lint pass when a pass over
// doc and agent would find the same: the same agent value, nodes at the
// same places with the same suppression comments (schema.SameLayout: an
// edit after the last node, a comment appended), the same workspace, the
// store file unchanged, within lintReuseFor.
func (s *server) reusedLint(uri protocol.DocumentURI, doc *schema.Document, agent *schema.AgentConfig, ws *workspaceInfo, now time.Time) ([]schema.Problem, bool) {
	if doc == nil || agent == nil || ws.StorePath == "" {
		return nil, false
	}
	s.mu.Lock()
	d := s.docs[uri]
	var last *lastLint
	if d != nil {
		last = d.lastLint
	}
	s.mu.Unlock()
	if last == nil || last.agent != agent || last.ws != ws || now.Sub(last.at) < 0 || now.Sub(last.at) >= lintReuseFor {
		return nil, false
	}
	if stamp, _, ok := engine.StampOf(ws.StorePath); !ok || stamp != last.stamp {
		return nil, false
	}
	if !last.doc.SameLayout(doc) {
		return nil, false
	}
	return last.ps, true
}

// keepLint records a lint pass for reusedLint.
func (s *server) keepLint(uri protocol.DocumentURI, l *lastLint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[uri]; d != nil {
		d.lastLint = l
	}
}
