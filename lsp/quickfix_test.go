package lsp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// applyEdits applies one document's text edits from last to first, as
// the protocol reads them (UTF-16 columns; lines ending at "\n", "\r\n"
// or "\r": refApply).
func applyEdits(t *testing.T, text string, edits []protocol.TextEdit) string {
	t.Helper()
	edits = slices.Clone(edits)
	after := func(p, q protocol.Position) bool {
		return p.Line > q.Line || p.Line == q.Line && p.Character > q.Character
	}
	sort.SliceStable(edits, func(i, j int) bool { return after(edits[i].Range.Start, edits[j].Range.Start) })
	for _, e := range edits {
		next, ok := refApply(text, e.Range, e.NewText)
		if !ok {
			t.Fatalf("edit %+v does not apply to %q", e, text)
		}
		text = next
	}
	return text
}

// TestQuickFixes opens the invalid fixtures, asks for the code actions of
// each published schema diagnostic, applies the quick fix's workspace edit
// and checks that the problem is gone and the result says what was meant.
func TestQuickFixes(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	tests := []struct {
		fixture string
		text    string   // used instead of the fixture's text when set
		titles  []string // one quick fix per diagnostic, in order
		contain []string // the fixed text has these lines
	}{
		{"unknown-key.agent.yaml", "",
			[]string{`Change "judgements" to "judgments"`, `Change "sucessCriteria" to "successCriteria"`, `Change "backround" to "background"`},
			[]string{"  judgments:", "  successCriteria: [misspelled]", "background: {}"}},
		{"missing-required.agent.yaml", "",
			[]string{`Add required property "persona"`, `Add required property "domain"`, `Add required property "objective"`},
			[]string{"  persona: {}", "      domain: TODO", "  objective: TODO"}},
		{"typo.agent.json", `{"roleTemplate": {"name": "j", "persona": {"identity": "i", "tne": "t"}}, "mission": {"objective": "o"}}` + "\n",
			[]string{`Change "tne" to "tone"`}, []string{`"tone": "t"`}},
		{"missing.agent.json", `{"roleTemplate": {"name": "j", "persona": {"identity": "i", "tone": "t"}, "judgments": [{"heuristics": ["h"]}]}, "mission": {"objective": "o"}}` + "\n",
			[]string{`Add required property "domain"`}, []string{`{"heuristics": ["h"], "domain": "TODO"}`}},
		// A byte order mark the editor keeps is a character before the
		// first key, not its indentation: the added key was indented by
		// one space, which does not parse.
		{"bom.agent.yaml", "\ufeffroleTemplate:\n  name: j\n  persona:\n    identity: i\n    tone: t\n",
			[]string{`Add required property "mission"`}, []string{"\nmission: {}"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			data := []byte(tt.text)
			if tt.text == "" {
				var err error
				if data, err = os.ReadFile(filepath.Join("..", "testdata", "invalid", tt.fixture)); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(env.root, tt.fixture)
			got := openAndAwait(t, c, path, string(data))
			if len(got.Diagnostics) != len(tt.titles) {
				t.Fatalf("got %d diagnostics, want %d:\n%s", len(got.Diagnostics), len(tt.titles), formatDiagnostics(got.Diagnostics))
			}
			for i, d := range got.Diagnostics {
				var actions []protocol.CodeAction
				c.call(protocol.MethodTextDocumentCodeAction, map[string]any{
					"textDocument": map[string]any{"uri": got.URI}, "range": d.Range,
					"context": map[string]any{"diagnostics": []protocol.Diagnostic{d}}}, &actions)
				var fix *protocol.CodeAction
				for j := range actions {
					if actions[j].Kind == protocol.QuickFix && actions[j].Edit != nil {
						fix = &actions[j]
					}
				}
				if fix == nil || fix.Title != tt.titles[i] {
					t.Fatalf("diagnostic %q: quick fix %+v, want %q", d.Message, fix, tt.titles[i])
				}
				fixed := applyEdits(t, string(data), fix.Edit.Changes[got.URI])
				a := analyze(path, 0, []byte(fixed), nil)
				if a.doc == nil {
					t.Fatalf("fixed text does not parse: %v\n%s", a.parseErr, fixed)
				}
				for _, p := range a.problems {
					if p.Message == d.Message {
						t.Errorf("problem %q still there after %q:\n%s", d.Message, fix.Title, fixed)
					}
				}
				if !strings.Contains(fixed, tt.contain[i]) {
					t.Errorf("after %q the text lacks line %q:\n%s", fix.Title, tt.contain[i], fixed)
				}
			}
		})
	}
}

// TestUnknownDomainQuickFix: a stored memory targeting a judgment domain the
// agent no longer has gets a lint diagnostic whose quick fix adds that judgment.
func TestUnknownDomainQuickFix(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := filepath.Join(env.root, "deploy.agent.yaml")
	// The memory was saved while the agent had an incident judgment; the
	// author has since renamed that domain.
	if res := agentSave(t, env, string(data), "Page the database owner for replication lag", "judgment.incident.heuristics", "conv-3"); res.Record == nil {
		t.Fatalf("save: %+v", res)
	}
	text = strings.Replace(text, "    - domain: incident\n", "    - domain: on-call\n", 1)
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
	c.initialize(env.root, nil, false)
	uri := c.open(env.write(t, "deploy.agent.yaml", text), text, 1)
	actions := c.actionsForDiagnostic(uri, "unknown-domain")
	var fix *protocol.CodeAction
	for i := range actions {
		if actions[i].Title == `Add judgment domain "incident"` {
			fix = &actions[i]
		}
	}
	if fix == nil || fix.Edit == nil {
		t.Fatalf("no add-judgment quick fix in %+v", actions)
	}
	fixed := applyEdits(t, text, fix.Edit.Changes[uri])
	a := analyze(path, 0, []byte(fixed), nil)
	if a.agent == nil || len(a.problems) != 0 {
		t.Fatalf("fixed text has problems %v:\n%s", a.problems, fixed)
	}
	if a.agent.JudgmentByDomain("incident") != 2 {
		t.Errorf("judgments after the fix: %+v", a.agent.RoleTemplate.Judgments)
	}
}

// TestRetargetQuickFix: over the wire, a memory stranded on a removed
// judgment domain is offered one retarget per existing domain, the nearest
// (edit distance) first; running the nearest moves the record in the store
// through the engine as the configured actor (a new record superseding the
// old, in the ledger) and the unknown-domain diagnostic goes away.
func TestRetargetQuickFix(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lesson := "Page the database owner for replication lag"
	saved := agentSave(t, env, string(data), lesson, "judgment.incident.heuristics", "conv-3")
	if saved.Record == nil {
		t.Fatalf("save: %+v", saved)
	}
	text := strings.Replace(string(data), "    - domain: incident\n", "    - domain: incidents\n", 1)
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(env.write(t, "deploy.agent.yaml", text), text, 1)
	unknown := func(ns []note) *protocol.Diagnostic {
		ds := diagsOf(ns, uri)
		if len(ds) == 0 {
			return nil
		}
		last := ds[len(ds)-1]
		for i := range last.Diagnostics {
			if last.Diagnostics[i].Code == "unknown-domain" {
				return &last.Diagnostics[i]
			}
		}
		return nil
	}
	var diag *protocol.Diagnostic
	c.waitFor("unknown-domain diagnostic", func(ns, _ []note) bool { diag = unknown(ns); return diag != nil })
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri}, "range": diag.Range,
		"context": map[string]any{"diagnostics": []protocol.Diagnostic{*diag}}}, &actions)
	var retargets []protocol.CodeAction
	for _, a := range actions {
		if strings.HasPrefix(a.Title, "Retarget memory") {
			retargets = append(retargets, a)
		}
	}
	var titles []string
	for _, a := range retargets {
		titles = append(titles, a.Title)
	}
	if got := strings.Join(titles, " | "); got != `Retarget memory to judgment domain "incidents" | Retarget memory to judgment domain "deploy"` {
		t.Fatalf("retarget actions: %s (all: %+v)", got, actions)
	}
	cmd := retargets[0].Command
	if cmd == nil || cmd.Command != CommandRetarget {
		t.Fatalf("command %+v", cmd)
	}
	var res CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}, &res)
	if !res.OK || !strings.Contains(res.Message, "retargeted "+saved.Record.ID) {
		t.Fatalf("retarget answered %+v", res)
	}
	// The lint pass after the change: the retargeted candidate now applies
	// (its progress hint) and nothing targets an unknown domain.
	c.waitFor("the unknown-domain diagnostic to go", func(ns, _ []note) bool {
		ds := diagsOf(ns, uri)
		if len(ds) <= 2 || unknown(ns) != nil {
			return false
		}
		for _, d := range ds[len(ds)-1].Diagnostics {
			if d.Code == "candidate-progress" {
				return true
			}
		}
		return false
	})
	withBolt(t, env, func(st store.Store) {
		ctx := context.Background()
		old, err := st.Get(ctx, saved.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		if old.SupersededBy == "" || old.InvalidAt == "" {
			t.Fatalf("old record not superseded: %+v", old)
		}
		nw, err := st.Get(ctx, old.SupersededBy)
		if err != nil {
			t.Fatal(err)
		}
		if nw.Target == nil || nw.Target.String() != "judgment.incidents.heuristics" || nw.Content != lesson {
			t.Errorf("new record %+v", nw)
		}
		ents, err := st.Ledger(ctx, store.LedgerFilter{RecordID: nw.ID})
		if err != nil || len(ents) == 0 {
			t.Fatalf("ledger of %s: %v %v", nw.ID, ents, err)
		}
		if ents[0].Op != store.OpSupersede || ents[0].Actor.String() != "human:ana" {
			t.Errorf("first ledger entry of the new record: %s by %s", ents[0].Op, ents[0].Actor)
		}
	})
	// The same command again: the old record is retired, so it is refused.
	err = c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}, &res)
	if err == nil || !strings.Contains(err.Error(), "already invalidated") {
		t.Errorf("second retarget: %v", err)
	}
	// Bad arguments are InvalidParams.
	for _, args := range []map[string]any{{"recordId": saved.Record.ID}, {"recordId": saved.Record.ID, "target": "judgment.x.nope"}} {
		if err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandRetarget, "arguments": []any{args}}, &res); err == nil ||
			!strings.Contains(err.Error(), "target") {
			t.Errorf("retarget %v: %v", args, err)
		}
	}
}

// TestEditsKeepLineEndings: every edit the server produces for a file
// written with CRLF or CR-only line breaks (the quick fixes that insert a
// property or a judgment or rename a key, adopting a learned line, a
// completion snippet) is the edit it produces for the same file written
// with LF, at the same places, its line breaks the file's own: the result
// is the LF result with the file's line breaks. They inserted "\n" into a
// CRLF file and, on CR-only text, counted the whole file as one line.
func TestEditsKeepLineEndings(t *testing.T) {
	t.Parallel()
	deploy, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	missing, err := os.ReadFile("../testdata/invalid/missing-required.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	unknownKey, err := os.ReadFile("../testdata/invalid/unknown-key.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// quickFixed applies every quick fix of the file's diagnostics, one
	// at a time, each to the text the one before made.
	quickFixed := func(t *testing.T, name, text string, extra []protocol.Diagnostic) string {
		env := newTestEnv(t)
		c := startServer(t, Options{NoWatch: true})
		c.initialize(env.root, nil, false)
		got := openAndAwait(t, c, env.write(t, name, text), text)
		var edits []protocol.TextEdit
		for _, d := range append(got.Diagnostics, extra...) {
			var actions []protocol.CodeAction
			c.call(protocol.MethodTextDocumentCodeAction, map[string]any{
				"textDocument": map[string]any{"uri": got.URI}, "range": d.Range,
				"context": map[string]any{"diagnostics": []protocol.Diagnostic{d}}}, &actions)
			for _, a := range actions {
				if a.Edit != nil {
					edits = append(edits, a.Edit.Changes[got.URI]...)
				}
			}
		}
		if len(edits) == 0 {
			t.Fatalf("no quick fix for %+v", got.Diagnostics)
		}
		return applyEdits(t, text, edits)
	}
	unknownDomain := protocol.Diagnostic{Code: "unknown-domain", Source: "agent-ls",
		Message: `memory 01ABC targets judgment domain "on-call", which the agent does not define`}
	completed := func(t *testing.T, name, text string, at protocol.Position, label string) string {
		env := newTestEnv(t)
		c := startServer(t, Options{NoWatch: true})
		c.initialize(env.root, nil, false)
		uri := c.open(env.write(t, name, text), text, 1)
		var list protocol.CompletionList
		c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at}, &list)
		for _, it := range list.Items {
			if it.Label == label && it.TextEdit != nil {
				return applyEdits(t, text, []protocol.TextEdit{*it.TextEdit})
			}
		}
		t.Fatalf("no completion %q at %v: %+v", label, at, list.Items)
		return ""
	}
	judgmentsLine := uint32(strings.Count(string(deploy[:strings.Index(string(deploy), "  responsibilities:")]), "\n"))
	for _, tt := range []struct {
		name string
		edit func(t *testing.T, text string) string
	}{
		{"insert missing properties", func(t *testing.T, text string) string {
			return quickFixed(t, "missing.agent.yaml", text, nil)
		}},
		{"rename unknown keys", func(t *testing.T, text string) string {
			return quickFixed(t, "unknown.agent.yaml", text, nil)
		}},
		{"add a judgment domain", func(t *testing.T, text string) string {
			return quickFixed(t, "deploy.agent.yaml", text, []protocol.Diagnostic{unknownDomain})
		}},
		{"adopt a heuristic", func(t *testing.T, text string) string {
			_, adopted := adoptInto(t, "deploy.agent.yaml", text, "Check the rollback plan first", "judgment.incident.heuristics")
			return adopted
		}},
		{"adopt a fact", func(t *testing.T, text string) string {
			_, adopted := adoptInto(t, "deploy.agent.yaml", text, "Thursdays", "background.projectContext.deploy_window")
			return adopted
		}},
		{"complete a judgment snippet", func(t *testing.T, text string) string {
			return completed(t, "deploy.agent.yaml", text, protocol.Position{Line: judgmentsLine, Character: 4}, "new judgment")
		}},
	} {
		texts := map[string]string{"insert missing properties": string(missing), "rename unknown keys": string(unknownKey),
			// A bare line at the judgments' indentation, before responsibilities.
			"complete a judgment snippet": strings.Replace(string(deploy), "  responsibilities:", "    \n  responsibilities:", 1)}
		text, ok := texts[tt.name]
		if !ok {
			text = string(deploy)
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := tt.edit(t, text)
			if want == text {
				t.Fatalf("the edit changed nothing")
			}
			for _, eol := range []string{"\r\n", "\r"} {
				got := tt.edit(t, strings.ReplaceAll(text, "\n", eol))
				if w := strings.ReplaceAll(want, "\n", eol); got != w {
					i := 0
					for i < len(got) && i < len(w) && got[i] == w[i] {
						i++
					}
					t.Errorf("with %q line breaks, from byte %d: got %q, want %q", eol, i, got[i:min(i+80, len(got))], w[i:min(i+80, len(w))])
				}
			}
		})
	}
}

// TestUnknownDomainQuickFixQuoted: the quick fix of an unknown-domain
// diagnostic adds the domain the memory targets, whatever characters it
// holds: lint quotes it Go-style in its message, and the fix read the
// quoted text back as it was written, so a domain with a backslash was
// added with two and one with a double quote got no fix.
func TestUnknownDomainQuickFixQuoted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, dom := range []string{`ops\night`, `on"call`, "incidént"} {
		t.Run(dom, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			authored := strings.Replace(string(data), "    - domain: incident\n", "    - domain: "+schema.YAMLScalar(dom)+"\n", 1)
			if res := agentSave(t, env, authored, "Page the database owner", "judgment."+dom+".heuristics", "conv-3"); res.Record == nil {
				t.Fatalf("save: %+v", res)
			}
			text := strings.Replace(string(data), "    - domain: incident\n", "    - domain: on-call\n", 1)
			path := env.write(t, "deploy.agent.yaml", text)
			c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
			c.initialize(env.root, nil, false)
			uri := c.open(path, text, 1)
			actions := c.actionsForDiagnostic(uri, "unknown-domain")
			var fix *protocol.CodeAction
			for i := range actions {
				if actions[i].Edit != nil {
					fix = &actions[i]
				}
			}
			if fix == nil {
				t.Fatalf("no add-judgment quick fix in %+v", actions)
			}
			fixed := applyEdits(t, text, fix.Edit.Changes[uri])
			a := analyze(path, 0, []byte(fixed), nil)
			if a.agent == nil || a.agent.JudgmentByDomain(dom) < 0 {
				t.Fatalf("after %q the agent has no judgment %q:\n%s", fix.Title, dom, fixed)
			}
		})
	}
}

// actionsForDiagnostic waits for uri's first diagnostic of code and returns
// the code actions the server offers for it.
func (c *testClient) actionsForDiagnostic(uri protocol.DocumentURI, code string) []protocol.CodeAction {
	c.t.Helper()
	var diag *protocol.Diagnostic
	c.waitFor(code+" diagnostic", func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			for i := range d.Diagnostics {
				if d.Diagnostics[i].Code == code {
					diag = &d.Diagnostics[i]
					return true
				}
			}
		}
		return false
	})
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri}, "range": diag.Range,
		"context": map[string]any{"diagnostics": []protocol.Diagnostic{*diag}}}, &actions)
	return actions
}
