package lsp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Linter is the seam for the lint engine: it returns findings for one
// version of an agent file. Store is open only for the call and is nil when
// the store is missing, locked or corrupt (schema-only service). Findings on
// lines suppressed with `# agent-ls: ignore RULE` are dropped by the server.
type Linter func(ctx context.Context, in LintInput) ([]schema.Problem, error)

// LintInput is what a Linter sees.
type LintInput struct {
	URI      protocol.DocumentURI
	Filename string
	Doc      *schema.Document
	// Agent is nil when the file has schema errors.
	Agent     *schema.AgentConfig
	Workspace schema.WorkspaceConfig
	// Scope is the workspace's base scope (without the agent key).
	Scope map[string]string
	Store store.Reader
	// Open, set when Store is nil, opens the store for a linter that needs
	// it (the server skipped opening a store file unchanged since its last
	// lint); the linter closes what it opened.
	Open func(context.Context) (store.Store, error)
	// StorePath is the store file Store reads: a linter may keep what it
	// read while the file is unchanged. Empty when there is none.
	StorePath string
	// Candidates, when set, reads the agent's candidates through the
	// server's cache, which its views share (gather.FactsWith); the
	// records are shared, never modified.
	Candidates gather.CandidatesFunc
	Now        time.Time
	// budget, when set, bounds the records the linter keeps together with
	// the server's other caches (recordBudget).
	budget *recordBudget
}

// diagnose starts a new analysis run of uri, cancelling the previous one;
// a file outside the workspace folders is not served (DidOpen).
func (s *server) diagnose(uri protocol.DocumentURI) {
	if _, err := s.confinedPath(uri); err != nil {
		return
	}
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		s.mu.Unlock()
		return
	}
	if d.cancel != nil {
		d.cancel()
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.gen++
	d.gen, d.cancel = s.gen, cancel
	snap := snapshot{uri: uri, path: d.path, version: d.version, text: d.text, gen: d.gen, parses: d.parses}
	outOfSync := d.outOfSync
	s.mu.Unlock()
	if outOfSync != "" {
		// Nothing to analyse: the text is not the editor's (loseSync).
		defer cancel()
		s.publish(ctx, snap, []protocol.Diagnostic{{
			Severity: protocol.DiagnosticSeverityError, Source: "agent-ls", Code: "out-of-sync",
			Message: outOfSyncMessage(snap.path, outOfSync),
		}})
		return
	}
	s.goBackground(func(context.Context) {
		defer cancel()
		s.runDiagnostics(ctx, snap)
	})
}

// analyze parses and validates one snapshot: an agent file against the
// agent schema, a workspace config against its own. An agent file is
// parsed through parses when it is not nil. text is the editor's (or a
// file's as the editor shows it, readEditorText): a byte order mark in it
// is a character the editor counts (schema.BOMIsText).
func analyze(path string, version int32, text []byte, parses *schema.ParseCache) *analysis {
	a := &analysis{version: version}
	if isWorkspaceConfig(path) {
		doc, _, problems, err := schema.LoadWorkspace(path, text, schema.BOMIsText)
		a.doc, a.problems, a.parseErr = doc, problems, err
		return a
	}
	load := schema.LoadAgent
	if parses != nil {
		load = parses.LoadAgent
	}
	doc, agent, problems, err := load(path, text, schema.BOMIsText)
	a.doc, a.agent, a.problems = doc, agent, problems
	if err != nil {
		a.parseErr = err
	}
	return a
}

// runDiagnostics publishes parse and schema problems at once, then again
// with lint findings when a linter is configured. A run whose document has
// moved on publishes nothing.
func (s *server) runDiagnostics(ctx context.Context, snap snapshot) {
	var a *analysis
	var early *earlyLint
	if s.opts.Lint != nil && snap.parses != nil && !isWorkspaceConfig(snap.path) {
		var ok bool
		if a, early, ok = s.stagedAnalysis(ctx, snap); !ok {
			return
		}
	} else {
		a = analyze(snap.path, snap.version, snap.text, snap.parses)
		if !s.publishAnalysis(ctx, snap, a) {
			return
		}
	}
	if isWorkspaceConfig(snap.path) {
		return // a workspace config has no composition to lint
	}
	ws := s.workspaceFor(snap.path)
	agentName := ""
	if a.agent != nil {
		agentName = a.agent.RoleTemplate.Name
	}
	// An agent actor gets schema-only service on another agent's file: its
	// records reach neither the lint findings nor the pending count.
	foreign := foreignAgent(ws, a.agent) != nil
	if foreign {
		agentName = ws.Actor.Name
	}
	// One lint pass at a time, taken before the store is opened: a pass
	// may decode and analyse all of its agent's records, and ten files
	// opened together would each hold theirs at once (issue 35).
	end, err := s.turn(ctx, s.lintTurns, recordOwner{path: ws.StorePath, agent: agentName})
	if err != nil {
		return
	}
	defer end()
	var lint []schema.Problem
	state, msg, pending, done := StoreConnected, "", 0, false
	// The store file unchanged since the last lint: the linter answers
	// from what it read then and opens the store only if it must.
	if early != nil && early.agent == a.agent && a.agent != nil && !foreign {
		// Linted while the schema was validated, on the agent that
		// passed it.
		lint, pending, done = early.lint, early.pending, true
	} else if s.opts.Lint == nil && a.doc != nil && a.agent != nil && !foreign {
		// Without a linter the store is opened only to count pending
		// reviews: an unchanged store file has the count read last time.
		pending, done = s.stores.cached(ws, agentName)
	} else if s.opts.Lint != nil && a.doc != nil && a.agent != nil && !foreign {
		if n, ok := s.stores.cached(ws, agentName); ok {
			ps, openErr := s.lintWith(ctx, snap, a, ws, nil, true)
			if ctx.Err() != nil {
				return
			}
			// A failed lazy open falls through to the full path, which
			// reports why.
			if openErr == nil {
				lint, pending, done = ps, n, true
			}
		}
	}
	if !done {
		state, msg, pending = s.stores.use(ctx, ws, agentName, func(st store.Reader) {
			if s.opts.Lint == nil || a.doc == nil {
				return
			}
			if foreign {
				st = nil
			}
			lint, _ = s.lintWith(ctx, snap, a, ws, st, false)
		})
	}
	if ctx.Err() != nil {
		return
	}
	if len(lint) > 0 && !s.publish(ctx, snap, append(s.problemDiagnostics(a), toDiagnostics(lint)...)) {
		return
	}
	s.stores.report(ws, snap.uri, state, msg, pending)
}

// publishAnalysis records a as the document's newest parse and publishes
// its parse and schema problems; it reports whether the run goes on (it
// published and was not cancelled).
func (s *server) publishAnalysis(ctx context.Context, snap snapshot, a *analysis) bool {
	s.mu.Lock()
	if d := s.docs[snap.uri]; d != nil && d.gen == snap.gen {
		d.parsed = a
	}
	s.mu.Unlock()
	if !s.publish(ctx, snap, s.problemDiagnostics(a)) || ctx.Err() != nil {
		return false // a newer edit supersedes the lint pass: leave it the cores
	}
	return true
}

// earlyLint is the lint pass run on an agent decoded before its schema
// validation was done.
type earlyLint struct {
	agent   *schema.AgentConfig
	lint    []schema.Problem
	pending int
}

// stagedAnalysis analyses an agent file and publishes its parse and schema
// problems (as publishAnalysis) from a second goroutine, while this one
// lints the agent decoded before validation, when the store file is
// unchanged since the last lint (the cached path of runDiagnostics). The
// early lint is nil when it did not run or failed; runDiagnostics uses it
// only for the agent validation returned, so it sees what the lint after
// validation would have seen, one schema pass sooner. ok is
// publishAnalysis' answer.
func (s *server) stagedAnalysis(ctx context.Context, snap snapshot) (a *analysis, early *earlyLint, ok bool) {
	doc, agent, wait := snap.parses.LoadAgentStaged(snap.path, snap.text, schema.BOMIsText)
	type result struct {
		a  *analysis
		ok bool
	}
	first := make(chan result, 1)
	go func() {
		r := result{}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("analysis panic", "panic", fmt.Sprint(p))
			}
			first <- r
		}()
		d, cfg, problems, err := wait()
		r.a = &analysis{version: snap.version, doc: d, agent: cfg, problems: problems, parseErr: err}
		r.ok = s.publishAnalysis(ctx, snap, r.a)
	}()
	if doc != nil && agent != nil {
		ws := s.workspaceFor(snap.path)
		if foreignAgent(ws, agent) == nil {
			if n, cached := s.stores.cached(ws, agent.RoleTemplate.Name); cached {
				if end, err := s.turn(ctx, s.lintTurns, recordOwner{path: ws.StorePath, agent: agent.RoleTemplate.Name}); err == nil {
					ps, openErr := s.lintWith(ctx, snap, &analysis{version: snap.version, doc: doc, agent: agent}, ws, nil, true)
					end()
					if openErr == nil && ctx.Err() == nil {
						early = &earlyLint{agent: agent, lint: ps, pending: n}
					}
				}
			}
		}
	}
	r := <-first
	if r.a == nil {
		return nil, nil, false
	}
	return r.a, early, r.ok
}

// lintWith runs the linter over a with the open store st and returns its
// findings less those suppressed in the file; a lint failure is logged
// and gives none. The caller holds a lint turn (s.lintTurns). lazy (st nil) hands the linter an opener instead, for
// when it must read the store; openErr is that open's error.
func (s *server) lintWith(ctx context.Context, snap snapshot, a *analysis, ws *workspaceInfo, st store.Reader, lazy bool) (lint []schema.Problem, openErr error) {
	now := s.opts.Now()
	if lazy {
		// The store file unchanged since the last lint: an edit that left
		// the agent's value and the nodes' places as they were (a comment
		// appended) finds what the last pass found.
		if ps, ok := s.reusedLint(snap.uri, a.doc, a.agent, ws, now); ok {
			return s.unsuppressed(a.doc, ps), nil
		}
	}
	// The store's stamp before the pass reads it: a write during the pass
	// makes the stamp kept stale, never the findings.
	stamp, _, stamped := engine.StampOf(ws.StorePath)
	in := LintInput{
		URI: snap.uri, Filename: snap.path, Doc: a.doc, Agent: a.agent,
		Workspace: ws.Config, Scope: ws.Config.Scope, Store: st, StorePath: ws.StorePath, Now: now,
		Candidates: s.candidatesOf(ws.StorePath), budget: &s.budget,
	}
	if lazy {
		open := s.opts.OpenStoreReadOnly
		if open == nil {
			open = s.opts.OpenStore
		}
		in.Open = func(ctx context.Context) (store.Store, error) {
			st, err := open(ctx, ws.StorePath)
			openErr = err
			return st, err
		}
	}
	ps, err := s.opts.Lint(ctx, in)
	if openErr != nil {
		return nil, openErr
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("lint", "file", snap.path, "err", err)
		}
		return nil, nil
	}
	if stamped && (lazy || st != nil) && a.doc != nil && a.agent != nil && ctx.Err() == nil {
		s.keepLint(snap.uri, &lastLint{agent: a.agent, doc: a.doc, ws: ws, stamp: stamp, at: now, ps: ps})
	}
	return s.unsuppressed(a.doc, ps), nil
}

// unsuppressed is ps less the findings a suppression comment of doc covers.
func (s *server) unsuppressed(doc *schema.Document, ps []schema.Problem) []schema.Problem {
	var lint []schema.Problem
	for _, p := range ps {
		if !doc.Suppressed(p.Rule, p.Range.Start.Line) {
			lint = append(lint, p)
		}
	}
	return lint
}

// problemDiagnostics turns an analysis' parse error and schema problems
// into diagnostics (never nil).
func (s *server) problemDiagnostics(a *analysis) []protocol.Diagnostic {
	out := []protocol.Diagnostic{}
	if a.parseErr != nil {
		var pe *schema.ParseError
		r := schema.Range{}
		msg := a.parseErr.Error()
		if errors.As(a.parseErr, &pe) {
			r, msg = pe.Range(), pe.Msg
		}
		out = append(out, protocol.Diagnostic{
			Range: toRange(r), Severity: protocol.DiagnosticSeverityError,
			Source: "agent-ls", Code: "parse", Message: msg,
		})
	}
	return append(out, toDiagnostics(a.problems)...)
}

// publish sends the diagnostics of snap unless a newer run of the document
// exists or the run was cancelled; it reports whether it published.
func (s *server) publish(ctx context.Context, snap snapshot, diags []protocol.Diagnostic) bool {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	s.mu.Lock()
	d := s.docs[snap.uri]
	current := d != nil && d.gen == snap.gen
	s.mu.Unlock()
	if !current {
		return false
	}
	if diags == nil {
		diags = []protocol.Diagnostic{}
	}
	diags = capDiagnostics(diags)
	s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishDiagnosticsParams{URI: snap.uri, Version: snap.version, Diagnostics: diags})
	return true
}

func toDiagnostics(ps []schema.Problem) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(ps))
	for _, p := range ps {
		out = append(out, protocol.Diagnostic{
			Range:    toRange(p.Range),
			Severity: toSeverity(p.Severity),
			Source:   "agent-ls",
			Code:     p.Rule,
			Message:  p.Message,
		})
	}
	return out
}

func toSeverity(s string) protocol.DiagnosticSeverity {
	switch s {
	case schema.SeverityWarning:
		return protocol.DiagnosticSeverityWarning
	case schema.SeverityInfo:
		return protocol.DiagnosticSeverityInformation
	case schema.SeverityHint:
		return protocol.DiagnosticSeverityHint
	}
	return protocol.DiagnosticSeverityError
}

func toRange(r schema.Range) protocol.Range {
	return protocol.Range{Start: toPosition(r.Start), End: toPosition(r.End)}
}

func toPosition(p schema.Position) protocol.Position {
	return protocol.Position{Line: uint32(max(p.Line, 0)), Character: uint32(max(p.Character, 0))}
}

// fromPosition is a client's position in text (clampPosition).
func fromPosition(text []byte, p protocol.Position) schema.Position {
	p = clampPosition(text, p)
	return schema.Position{Line: int(p.Line), Character: int(p.Character)}
}

// clampPosition is a client's position in text with a character past the
// end of its line moved to the line's end, which it means (LSP).
func clampPosition(text []byte, p protocol.Position) protocol.Position {
	p.Character = uint32(min(int64(p.Character), int64(lineLengthUTF16(text, int(p.Line)))))
	return p
}

// maxDiagnostics bounds the diagnostics published for one document
// (capDiagnostics).
const maxDiagnostics = 1000

// capDiagnostics bounds diags to maxDiagnostics, the most severe first (a
// flood of warnings does not hide an error) in their order, and one more,
// code too-many-problems, at the first left out, that counts the rest: a
// hostile 8 MB file has a million problems, hundreds of MB to publish.
func capDiagnostics(diags []protocol.Diagnostic) []protocol.Diagnostic {
	if len(diags) <= maxDiagnostics {
		return diags
	}
	rank := func(d protocol.Diagnostic) protocol.DiagnosticSeverity {
		if d.Severity == 0 {
			return protocol.DiagnosticSeverityError // unset: the client takes it for one
		}
		return d.Severity
	}
	idx := make([]int, len(diags))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank(diags[idx[a]]) < rank(diags[idx[b]]) })
	kept, left := idx[:maxDiagnostics], idx[maxDiagnostics:]
	sort.Ints(kept)
	out := make([]protocol.Diagnostic, 0, maxDiagnostics+1)
	for _, i := range kept {
		out = append(out, diags[i])
	}
	first, worst := left[0], rank(diags[left[0]])
	for _, i := range left {
		first, worst = min(first, i), min(worst, rank(diags[i]))
	}
	return append(out, protocol.Diagnostic{Range: diags[first].Range, Severity: worst, Source: "agent-ls", Code: "too-many-problems",
		Message: fmt.Sprintf("%d more problems are not shown (the server shows %d, errors first); the first of them is here", len(left), maxDiagnostics)})
}
