package lsp

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
)

// applyEdits applies one document's text edits (ranges in UTF-16 columns of
// ASCII text) from last to first.
func applyEdits(t *testing.T, text string, edits []protocol.TextEdit) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	off := func(p protocol.Position) int {
		o := 0
		for i := 0; i < int(p.Line); i++ {
			o += len(lines[i])
		}
		return o + int(p.Character)
	}
	sort.Slice(edits, func(i, j int) bool { return off(edits[i].Range.Start) > off(edits[j].Range.Start) })
	for _, e := range edits {
		text = text[:off(e.Range.Start)] + e.NewText + text[off(e.Range.End):]
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
	var diag *protocol.Diagnostic
	c.waitFor("unknown-domain diagnostic", func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			for i := range d.Diagnostics {
				if d.Diagnostics[i].Code == "unknown-domain" {
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
