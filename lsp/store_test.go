package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

const trigger = "Ask before deleting any resource in prod"

// withBolt opens the real store of env for one step, as another process
// (an agent, the CLI) would.
func withBolt(t *testing.T, env *testEnv, fn func(st store.Store)) {
	t.Helper()
	st, err := bolt.Open(env.storePath, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// agentSave saves a memory as the agent of agentText through the evolve engine.
func agentSave(t *testing.T, env *testEnv, agentText, content, target, conv string) engine.SaveResult {
	t.Helper()
	_, cfg, _, err := schema.LoadAgent("deploy.agent.yaml", []byte(agentText))
	if err != nil || cfg == nil {
		t.Fatalf("load agent: %v", err)
	}
	mt, err := schema.ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	var res engine.SaveResult
	withBolt(t, env, func(st store.Store) {
		e := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg})
		res, err = e.Save(context.Background(), engine.SaveRequest{
			Kind: schema.KindFact, Content: content, Target: &mt,
			Provenance: schema.Provenance{ConversationID: conv, RunID: "run-" + conv},
			Actor:      store.Actor{Kind: store.ActorAgent, Name: cfg.RoleTemplate.Name},
		})
		if err != nil {
			t.Fatalf("save %q: %v", content, err)
		}
	})
	return res
}

func (c *testClient) hints(uri protocol.DocumentURI) []InlayHint {
	c.t.Helper()
	var hs []InlayHint
	c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}}, &hs)
	return hs
}

// initializeResolving initializes as a client that resolves inlay hint
// tooltips lazily (textDocument.inlayHint.resolveSupport, as VS Code does).
func (c *testClient) initializeResolving(root string, initOpts any, refresh bool) map[string]any {
	c.t.Helper()
	return c.initializeCaps(root, initOpts, refresh, map[string]any{"resolveSupport": map[string]any{"properties": []string{"tooltip"}}})
}

// initializeCaps initializes with hintCaps as textDocument.inlayHint.
func (c *testClient) initializeCaps(root string, initOpts any, refresh bool, hintCaps map[string]any) map[string]any {
	c.t.Helper()
	caps := map[string]any{"textDocument": map[string]any{"inlayHint": hintCaps}, "workspace": map[string]any{"applyEdit": true}}
	if refresh {
		caps["workspace"] = map[string]any{"applyEdit": true, "inlayHint": map[string]any{"refreshSupport": true}}
	}
	params := map[string]any{
		"processId": 1, "rootUri": string(pathToURI(root)), "capabilities": caps,
		"workspaceFolders": []any{map[string]any{"uri": string(pathToURI(root)), "name": "ws"}},
	}
	if initOpts != nil {
		params["initializationOptions"] = initOpts
	}
	var res map[string]any
	c.call(protocol.MethodInitialize, params, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
	return res
}

// resolve sends h back through inlayHint/resolve and returns the answer.
func (c *testClient) resolve(h *InlayHint) *InlayHint {
	c.t.Helper()
	var out InlayHint
	c.call(methodInlayHintResolve, h, &out)
	return &out
}

func hintWith(hs []InlayHint, text string) *InlayHint {
	for i := range hs {
		if strings.Contains(hs[i].Label, text) {
			return &hs[i]
		}
	}
	return nil
}

func (c *testClient) refreshCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if call.method == methodInlayHintRefresh {
			n++
		}
	}
	return n
}

func (c *testClient) awaitRefresh(after int) {
	c.t.Helper()
	c.waitFor("workspace/inlayHint/refresh", func(_, calls []note) bool {
		n := 0
		for _, call := range calls {
			if call.method == methodInlayHintRefresh {
				n++
			}
		}
		return n > after
	})
}

// TestGuardedApprovalFromEditor is ADR-0008's guarded scenario in the
// editor: the agent proposes an escalation trigger; the file shows it as a
// candidate; a store write by another process refreshes hints; the approve
// code action runs through the gate as human:ana; the hint becomes a
// promoted line whose hover tells its history; the composed prompt and the
// learnings show it.
func TestGuardedApprovalFromEditor(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9")
	if res.State != engine.StatePending || res.ProposalID == "" {
		t.Fatalf("save trigger: %+v", res)
	}

	c := startServer(t, Options{OpenStore: boltOpener(time.Now), Getenv: func(string) string { return "" }, Lint: LintEngine()})
	initRes := c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, true)
	if caps, _ := initRes["capabilities"].(map[string]any); fmt.Sprint(caps["inlayHintProvider"]) != "map[resolveProvider:true]" {
		t.Errorf("inlayHintProvider = %v, want resolveProvider true", caps["inlayHintProvider"])
	}
	uri := c.open(path, text, 1)
	if d := c.awaitDiagnostics(uri, 1); len(d.Diagnostics) != 0 {
		t.Fatalf("deploy fixture diagnostics: %+v", d.Diagnostics)
	}
	// The lint pass follows with the pending review, at the trigger's section.
	hasPending := func(d rawDiagnostics) bool {
		for _, dg := range d.Diagnostics {
			if dg.Code == "pending-review" {
				return true
			}
		}
		return false
	}
	c.waitFor("pending-review lint diagnostic", func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			if d.Version == 1 && hasPending(d) {
				return true
			}
		}
		return false
	})
	c.waitFor("status with one pending review", func(ns, _ []note) bool {
		for _, n := range ns {
			if n.method == methodStatus && strings.Contains(string(n.params), `"pendingReviews":1`) && strings.Contains(string(n.params), `"connected"`) {
				return true
			}
		}
		return false
	})

	hs := c.hints(uri)
	cand := hintWith(hs, trigger)
	if cand == nil || !strings.HasPrefix(cand.Label, "(candidate) ") || !strings.Contains(cand.Label, "guarded") {
		t.Fatalf("candidate hint: %+v in %+v", cand, hs)
	}
	// The hint sits on the deploy judgment's escalationTriggers key line.
	if line := strings.Split(text, "\n")[cand.Position.Line]; !strings.Contains(line, "escalationTriggers:") {
		t.Errorf("candidate hint on line %q", line)
	}

	// Another process writes the store: the watcher refreshes hints.
	before := c.refreshCount()
	fact := agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1")
	if fact.State != engine.StatePromoted {
		t.Fatalf("auto fact: %+v", fact)
	}
	c.awaitRefresh(before)
	hs = c.hints(uri)
	h := hintWith(hs, "Deploys go out Tuesdays")
	if h == nil || !strings.HasPrefix(h.Label, "+ ") || !strings.Contains(h.Label, "auto") || !strings.Contains(h.Label, "conv conv-1") {
		t.Fatalf("auto fact hint: %+v in %+v", h, hs)
	}
	// The client resolves tooltips: the hint carries data, the tooltip
	// comes from inlayHint/resolve with the ledger history.
	if h.Tooltip != nil || len(h.Data) == 0 {
		t.Errorf("hint for a resolving client: tooltip %+v, data %s; want no tooltip and data", h.Tooltip, h.Data)
	}
	if r := c.resolve(h); r.Tooltip == nil || !strings.Contains(r.Tooltip.Value, "run `run-conv-1`") || !strings.Contains(r.Tooltip.Value, "History") || r.Label != h.Label {
		t.Errorf("resolved hint: %+v", r)
	}

	// The approve code action, with its diff, run as human:ana.
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}}, &actions)
	var approve *protocol.CodeAction
	for i := range actions {
		if strings.HasPrefix(actions[i].Title, "Approve promote of") && strings.Contains(actions[i].Title, "Ask before") {
			approve = &actions[i]
		}
	}
	if approve == nil || approve.Command == nil {
		t.Fatalf("no approve action in %+v", actions)
	}
	args, _ := json.Marshal(approve.Command.Arguments)
	if !strings.Contains(string(args), `+- `+trigger) {
		t.Errorf("approve arguments carry no diff: %s", args)
	}
	before = c.refreshCount()
	var out CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": approve.Command.Command, "arguments": approve.Command.Arguments}, &out)
	if !out.OK || out.Status != string(engine.StatusApproved) || !strings.Contains(out.Message, "human:ana") {
		t.Fatalf("approve: %+v", out)
	}
	c.awaitRefresh(before)
	hs = c.hints(uri)
	if h := hintWith(hs, trigger); h == nil || !strings.HasPrefix(h.Label, "+ ") {
		t.Fatalf("after approval: %+v", hs)
	} else if r := c.resolve(h); r.Tooltip == nil || !strings.Contains(r.Tooltip.Value, "approved by `human:ana`") || !strings.Contains(r.Tooltip.Value, "tier guarded") {
		t.Errorf("approved hint tooltip lacks the approver:\n%+v", r.Tooltip)
	}
	// The candidate hint sent before the approval is stale now.
	var stale InlayHint
	err = c.callErr(methodInlayHintResolve, cand, &stale)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != protocol.CodeContentModified || !strings.Contains(je.Message, "not in the composition any more") {
		t.Errorf("resolving the candidate hint after its approval: %v, want ContentModified", err)
	}
	// The re-run after the approval publishes without the pending review.
	c.waitFor("diagnostics without pending-review", func(ns, _ []note) bool {
		ds := diagsOf(ns, uri)
		last := ds[len(ds)-1]
		return !hasPending(last) && len(ds) > 2
	})
	// Approving twice is refused with the gate's reason.
	err = c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": approve.Command.Command, "arguments": approve.Command.Arguments}, &out)
	if err == nil || !strings.Contains(err.Error(), "approved") {
		t.Errorf("second approval: %v", err)
	}

	// Hover on the escalationTriggers key: the learned line and its history.
	lines := strings.Split(text, "\n")
	keyLine := int(cand.Position.Line)
	col := strings.Index(lines[keyLine], "escalationTriggers")
	var hover protocol.Hover
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": keyLine, "character": col + 2}}, &hover)
	for _, want := range []string{trigger, "conv-9", "History", "approve by `human:ana`", "Composed", "- A rollback fails\n", "- " + trigger + "\n"} {
		if !strings.Contains(hover.Contents.Value, want) {
			t.Errorf("hover lacks %q:\n%s", want, hover.Contents.Value)
		}
	}
	// Hover at the hint's own position (end of the line) tells the same story.
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": cand.Position.Line, "character": cand.Position.Character}}, &hover)
	if !strings.Contains(hover.Contents.Value, trigger) || !strings.Contains(hover.Contents.Value, "History") {
		t.Errorf("hover at the hint position:\n%s", hover.Contents.Value)
	}
	// Hover on an authored line says where it comes from.
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": 8, "character": 8}}, &hover)
	if !strings.Contains(hover.Contents.Value, "authored (role)") {
		t.Errorf("authored hover: %s", hover.Contents.Value)
	}

	var prompt ComposedPrompt
	c.call(methodComposedPrompt, map[string]any{"uri": uri}, &prompt)
	if !strings.Contains(prompt.Text, "- "+trigger) || !strings.Contains(prompt.Text, "Tuesdays") {
		t.Errorf("composed prompt:\n%s", prompt.Text)
	}
	memory := false
	for _, s := range prompt.Sections {
		for _, f := range s.Fragments {
			if f.Source == "memory" && strings.Contains(f.Text, trigger) && len(f.MemoryIDs) == 1 && f.MemoryIDs[0] == res.Record.ID {
				memory = true
			}
		}
	}
	if !memory {
		t.Errorf("no memory fragment for the trigger: %+v", prompt.Sections)
	}
	// Point-in-time composition: before the approval the trigger was not there.
	var then ComposedPrompt
	c.call(methodComposedPrompt, map[string]any{"uri": uri, "at": res.Record.CreatedAt}, &then)
	if strings.Contains(then.Text, trigger) || then.At == "" {
		t.Errorf("composed at %s still has the trigger (at %q)", res.Record.CreatedAt, then.At)
	}
	var learned struct {
		Learnings []engine.Learning `json:"learnings"`
	}
	c.call(methodLearnings, map[string]any{"uri": uri, "since": "1d"}, &learned)
	found := false
	for _, l := range learned.Learnings {
		if l.RecordID == res.Record.ID && l.Op == "promote" {
			found = true
		}
	}
	if !found {
		t.Errorf("learnings: %+v", learned)
	}
	var props struct {
		Proposals []ProposalView `json:"proposals"`
	}
	c.call(methodProposals, map[string]any{"uri": uri}, &props)
	if len(props.Proposals) != 0 {
		t.Errorf("proposals after approval: %+v", props)
	}
}

// TestAdoptLearnedLine: adopt inserts the learned line into the authored
// list through workspace/applyEdit and retires the record; a refused edit
// leaves the record alone.
func TestAdoptLearnedLine(t *testing.T) {
	t.Parallel()
	for _, applied := range []bool{true, false} {
		t.Run(map[bool]string{true: "applied", false: "refused"}[applied], func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			path := env.write(t, "deploy.agent.yaml", text)
			fact := agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1")
			c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
			c.mu.Lock()
			c.applyResult = map[string]any{"applied": applied}
			c.mu.Unlock()
			c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			var out CommandResult
			err = c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
				"arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": uri}}}, &out)
			c.mu.Lock()
			var edit note
			for _, call := range c.calls {
				if call.method == methodApplyEdit {
					edit = call
				}
			}
			c.mu.Unlock()
			if !strings.Contains(string(edit.params), `deploy_window: \"Deploys go out Tuesdays after 14:00 ET\"`) {
				t.Fatalf("applyEdit params: %s", edit.params)
			}
			var rec schema.MemoryRecord
			withBolt(t, env, func(st store.Store) { rec, _ = st.Get(context.Background(), fact.Record.ID) })
			if applied {
				if err != nil || !out.OK || rec.InvalidAt == "" || !strings.Contains(rec.InvalidReason, "adopted") {
					t.Fatalf("adopt: %v %+v; record %+v", err, out, rec)
				}
			} else if err == nil || rec.InvalidAt != "" {
				t.Fatalf("refused edit: err %v, record %+v", err, rec)
			}
		})
	}
}

// adoptInto writes text as file of a fresh workspace, saves content at
// target as an agent, adopts the record as human:ana over the wire and
// returns the file's path and its text with the applyEdit the server sent.
func adoptInto(t *testing.T, file, text, content, target string) (path, adopted string) {
	t.Helper()
	env := newTestEnv(t)
	path = env.write(t, file, text)
	fact := agentSave(t, env, text, content, target, "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	var out CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
		"arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": uri}}}, &out)
	edits := callsOf(c, methodApplyEdit)
	if len(edits) == 0 {
		t.Fatalf("adopt sent no applyEdit: %+v", out)
	}
	var p applyWorkspaceEditParams
	if err := json.Unmarshal(edits[len(edits)-1], &p); err != nil {
		t.Fatal(err)
	}
	return path, applyEdits(t, text, p.Edit.Changes[uri])
}

// TestAdoptQuotesContent: adopting a learned line whose content YAML
// would read as something else written plain (a nested list item, a
// number, null, a boolean, a complex key) writes it quoted, so the authored
// file reads back exactly the content the record had; it was written plain
// ("- - always run tests first", "- 42") and the record retired.
func TestAdoptQuotesContent(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, tt := range []struct{ content, target string }{
		{"- always run the tests first", "judgment.deploy.heuristics"},
		{"42", "judgment.deploy.heuristics"},
		{"null", "judgment.deploy.heuristics"},
		{"yes", "judgment.deploy.heuristics"},
		{"? rollback", "judgment.deploy.heuristics"},
		{"~", "judgment.deploy.heuristics"},
		{"true", "background.projectContext.deploy_window"},
		{"Deploys go out Tuesdays", "background.projectContext.deploy_window"},
	} {
		t.Run(tt.content, func(t *testing.T) {
			t.Parallel()
			path, adopted := adoptInto(t, "deploy.agent.yaml", text, tt.content, tt.target)
			a := analyze(path, 0, []byte(adopted), nil)
			if a.agent == nil {
				t.Fatalf("adopted text does not load: %v %v\n%s", a.parseErr, a.problems, adopted)
			}
			if strings.HasPrefix(tt.target, "judgment.") {
				if got := a.agent.RoleTemplate.Judgments[0].Heuristics; got[len(got)-1] != tt.content {
					t.Fatalf("adopted heuristic reads %q, want %q:\n%s", got[len(got)-1], tt.content, adopted)
				}
			} else if got, _ := a.agent.Background.ProjectContext.Get("deploy_window"); got != tt.content {
				t.Fatalf("adopted fact reads %#v, want %q:\n%s", got, tt.content, adopted)
			}
		})
	}
}

// TestAdoptIntoJSONAndFlow: adopting into a list or section written in
// JSON (an .agent.json file) or as a YAML flow collection ("[a, b]",
// "{k: v}") adds a flow item, so the file still loads and ends with the
// content. It inserted a YAML block line ("- ...", "key: ...") after the
// collection's last line, which broke the file, and retired the record.
func TestAdoptIntoJSONAndFlow(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/triage.agent.json")
	if err != nil {
		t.Fatal(err)
	}
	jsonText := string(data)
	flowText := "roleTemplate:\n  name: triage-bot\n  persona: {identity: x, tone: y}\n  judgments:\n    - domain: triage\n      heuristics: [Group alerts by service]\nmission: {objective: z}\nbackground:\n  projectContext: {alerting: Alertmanager}\n"
	const content = "Pages go to #oncall, then \"the lead\""
	for _, tt := range []struct{ name, file, text, target string }{
		{"json list", "triage.agent.json", jsonText, "judgment.triage.heuristics"},
		{"json object", "triage.agent.json", jsonText, "background.projectContext.oncall"},
		{"yaml flow list", "triage.agent.yaml", flowText, "judgment.triage.heuristics"},
		{"yaml flow map", "triage.agent.yaml", flowText, "background.projectContext.oncall"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, adopted := adoptInto(t, tt.file, tt.text, content, tt.target)
			a := analyze(path, 0, []byte(adopted), nil)
			if a.agent == nil {
				t.Fatalf("adopted text does not load: %v %v\n%s", a.parseErr, a.problems, adopted)
			}
			if strings.HasPrefix(tt.target, "judgment.") {
				if got := a.agent.RoleTemplate.Judgments[0].Heuristics; got[len(got)-1] != content {
					t.Fatalf("adopted heuristic reads %q, want %q:\n%s", got[len(got)-1], content, adopted)
				}
			} else if got, _ := a.agent.Background.ProjectContext.Get("oncall"); got != content {
				t.Fatalf("adopted fact reads %#v, want %q:\n%s", got, content, adopted)
			}
		})
	}
}

// TestLockedStoreDegrades: a store another process holds is reported as
// locked with one warning, diagnostics still come (schema-only), and the
// next change after the lock is released reconnects.
func TestLockedStoreDegrades(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1")
	holder, err := bbolt.Open(env.storePath, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	statusOf := func(state StoreState) func(ns, _ []note) bool {
		return func(ns, _ []note) bool {
			for _, n := range ns {
				var s Status
				if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == uri && s.Store == state {
					return true
				}
			}
			return false
		}
	}
	c.waitFor("locked status", statusOf(StoreLocked))
	for v := 2; v <= 3; v++ {
		c.change(uri, text, v)
		c.awaitDiagnostics(uri, int32(v))
	}
	if hs := c.hints(uri); len(hs) != 0 {
		t.Errorf("hints from a locked store: %+v", hs)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	c.change(uri, text, 4)
	c.waitFor("connected status", statusOf(StoreConnected))
	warnings := 0
	for _, p := range c.notesOf(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(p), "locked") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d locked warnings, want exactly 1", warnings)
	}
	if hs := c.hints(uri); hintWith(hs, "Tuesdays") == nil {
		t.Errorf("hints after reconnect: %+v", hs)
	}
}

// TestHintsFollowEdits: a memory whose section is not authored puts its
// hint on the nearest parent key; when an edit adds the section, the hint
// moves to it.
func TestHintsFollowEdits(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	v1 := "roleTemplate:\n  name: deploy-ops\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\nbackground:\n  conventions:\n    tags: vN\n"
	v2 := v1 + "  teamContext:\n    on_call: ops\n"
	path := env.write(t, "deploy.agent.yaml", v1)
	agentSave(t, env, v1, "Ana Souza manages releases", "background.teamContext.release_manager", "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	uri := c.open(path, v1, 1)
	c.awaitDiagnostics(uri, 1)
	for _, tt := range []struct {
		version int
		text    string
		line    uint32
		char    uint32
	}{
		{1, v1, 7, uint32(len("background:"))},
		{2, v2, 10, uint32(len("  teamContext:"))},
	} {
		if tt.version > 1 {
			c.change(uri, tt.text, tt.version)
			c.awaitDiagnostics(uri, int32(tt.version))
		}
		h := hintWith(c.hints(uri), "Ana Souza manages releases")
		if h == nil || h.Position.Line != tt.line || h.Position.Character != tt.char {
			t.Fatalf("v%d: hint %+v, want at %d:%d", tt.version, h, tt.line, tt.char)
		}
		var hover *protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": h.Position.Line, "character": h.Position.Character}}, &hover)
		if hover == nil || !strings.Contains(hover.Contents.Value, "Ana Souza manages releases") {
			t.Errorf("v%d: hover at the hint: %+v", tt.version, hover)
		}
	}
}

// TestCorruptStoreDegrades: a store file that is not a database is
// reported as corrupt with one warning; diagnostics keep coming.
func TestCorruptStoreDegrades(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	if err := os.MkdirAll(filepath.Dir(env.storePath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.storePath, []byte(strings.Repeat("not a bbolt file\n", 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	path := env.write(t, "a.agent.yaml", cleanAgent)
	uri := c.open(path, cleanAgent, 1)
	c.awaitDiagnostics(uri, 1)
	c.change(uri, cleanAgent+"# edit\n", 2)
	c.awaitDiagnostics(uri, 2)
	c.waitFor("corrupt status", func(ns, _ []note) bool {
		for _, n := range ns {
			var s Status
			if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.Store == StoreCorrupt && s.Message != "" {
				return true
			}
		}
		return false
	})
	c.waitFor("one warning", func(ns, _ []note) bool {
		for _, n := range ns {
			if n.method == protocol.MethodWindowShowMessage && strings.Contains(string(n.params), "corrupt") {
				return true
			}
		}
		return false
	})
	var hs []InlayHint
	c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 99, "character": 0}}}, &hs)
	if len(hs) != 0 {
		t.Errorf("hints from a corrupt store: %+v", hs)
	}
	n := 0
	for _, p := range c.notesOf(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(p), "corrupt") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d corrupt warnings, want 1", n)
	}
}

// TestCodeActionsForMemoryLines: a candidate offers promote (a human may
// promote an earned candidate through its gate); a promoted line offers
// demote, invalidate and adopt, each titled with its effect; running
// demote takes the line out of the hints.
func TestCodeActionsForMemoryLines(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/code-review.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "code-review.agent.yaml", text)
	const lesson = "Read the tests before the implementation"
	res := agentSave(t, env, text, lesson, "judgment.code-review.heuristics", "conv-1")
	if res.State != engine.StateCandidate {
		t.Fatalf("save: %+v", res)
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	actions := func() map[string]protocol.CodeAction {
		var as []protocol.CodeAction
		c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
			"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 999, "character": 0}},
			"context": map[string]any{"diagnostics": []any{}}}, &as)
		out := map[string]protocol.CodeAction{}
		for _, a := range as {
			out[strings.SplitN(a.Title, " ", 2)[0]] = a
		}
		return out
	}
	run := func(a protocol.CodeAction) CommandResult {
		t.Helper()
		var out CommandResult
		c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": a.Command.Command, "arguments": a.Command.Arguments}, &out)
		return out
	}
	as := actions()
	promote, ok := as["Promote"]
	if !ok || !strings.Contains(promote.Title, lesson[:20]) || len(as) != 1 {
		t.Fatalf("candidate actions: %+v", as)
	}
	if out := run(promote); !out.OK || out.Status != string(engine.StatusPromoted) {
		t.Fatalf("promote: %+v", out)
	}
	as = actions()
	for _, verb := range []string{"Demote", "Invalidate", "Adopt"} {
		if _, ok := as[verb]; !ok {
			t.Errorf("promoted line lacks %s: %+v", verb, as)
		}
	}
	if !strings.Contains(as["Demote"].Title, "leaves the agent") || !strings.Contains(as["Invalidate"].Title, "forgets") {
		t.Errorf("titles do not say the effect: %q, %q", as["Demote"].Title, as["Invalidate"].Title)
	}
	if out := run(as["Demote"]); !out.OK || out.Status != string(engine.StatusDemoted) {
		t.Fatalf("demote: %+v", out)
	}
	if h := hintWith(c.hints(uri), lesson); h == nil || strings.HasPrefix(h.Label, "+ ") {
		t.Errorf("after demote the lesson is %+v, want a candidate again", h)
	}
}

// TestResolveConflict: two promoted memories on one slot show the newer as
// promoted and the older as shadowed; "keep" code actions resolve it as a
// supersede, after which only the kept one remains.
func TestResolveConflict(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	target := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "deploy_window"}
	agent := store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	var ids []string
	for _, content := range []string{"Tuesdays after 14:00 ET", "Thursdays after 14:00 ET"} {
		withBolt(t, env, func(st store.Store) {
			recs, err := st.Write(context.Background(), []store.WriteRequest{{Scope: map[string]string{store.AgentKey: "deploy-ops"},
				Kind: schema.KindFact, Content: content, Target: target}}, agent)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Promote(context.Background(), recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: agent}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, recs[0].ID)
		})
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	// Records written in one millisecond tie on createdAt and the id decides,
	// so find the winner from the hints.
	hs := c.hints(uri)
	won, lost := "Thursdays", "Tuesdays"
	if h := hintWith(hs, "Tuesdays"); h != nil && strings.HasPrefix(h.Label, "+ ") {
		won, lost = lost, won
	}
	if h := hintWith(hs, won); h == nil || !strings.HasPrefix(h.Label, "+ ") {
		t.Fatalf("winning memory: %+v", hs)
	}
	if h := hintWith(hs, lost); h == nil || !strings.HasPrefix(h.Label, "(shadowed") {
		t.Fatalf("shadowed memory: %+v", hs)
	}
	var as []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 999, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}}, &as)
	var keepLost *protocol.CodeAction
	n := 0
	for i := range as {
		if strings.HasPrefix(as[i].Title, "Resolve conflict: keep") {
			n++
			if strings.Contains(as[i].Title, lost) {
				keepLost = &as[i]
			}
		}
	}
	if n != 2 || keepLost == nil {
		t.Fatalf("conflict actions: %+v", as)
	}
	var out CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": keepLost.Command.Command, "arguments": keepLost.Command.Arguments}, &out)
	if !out.OK {
		t.Fatalf("supersede: %+v", out)
	}
	hs = c.hints(uri)
	if h := hintWith(hs, lost); h == nil || !strings.HasPrefix(h.Label, "+ ") || hintWith(hs, won) != nil {
		t.Fatalf("after keeping %s: %+v", lost, hs)
	}
	dropped := ids[0]
	if won == "Thursdays" {
		dropped = ids[1]
	}
	var rec schema.MemoryRecord
	withBolt(t, env, func(st store.Store) { rec, _ = st.Get(context.Background(), dropped) })
	if rec.InvalidAt == "" {
		t.Errorf("dropped record still valid: %+v", rec)
	}
}

// TestInlayHintTooltips: a client that declares resolveSupport for
// "tooltip" gets hints without tooltips and resolves them; any other client
// (no resolveSupport, or one for other properties) gets them inline (LSP
// 3.17). Resolving data that is not a hint's, or a record no longer
// composed, answers a precise error.
func TestInlayHintTooltips(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	if res := agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1"); res.State != engine.StatePromoted {
		t.Fatalf("save: %+v", res)
	}
	const fact = "Deploys go out Tuesdays"
	for _, tt := range []struct {
		name     string
		caps     map[string]any
		resolves bool
	}{
		{"no resolveSupport", map[string]any{}, false},
		{"resolveSupport without tooltip", map[string]any{"resolveSupport": map[string]any{"properties": []string{"label.location"}}}, false},
		{"resolveSupport for tooltip", map[string]any{"resolveSupport": map[string]any{"properties": []string{"label.tooltip", "tooltip"}}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
			c.initializeCaps(env.root, nil, false, tt.caps)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			h := hintWith(c.hints(uri), fact)
			if h == nil {
				t.Fatalf("no hint for %q", fact)
			}
			var hd hintData
			if err := json.Unmarshal(h.Data, &hd); err != nil || hd.URI != uri || hd.ID == "" || hd.Kind != "promoted" {
				t.Errorf("hint data %s (%v): want uri %s, the record id and kind promoted", h.Data, err, uri)
			}
			if !tt.resolves {
				if h.Tooltip == nil || !strings.Contains(h.Tooltip.Value, "run `run-conv-1`") {
					t.Errorf("inline tooltip: %+v", h.Tooltip)
				}
				return
			}
			if h.Tooltip != nil {
				t.Errorf("tooltip sent inline to a resolving client: %+v", h.Tooltip)
			}
			r := c.resolve(h)
			if r.Tooltip == nil || !strings.Contains(r.Tooltip.Value, "run `run-conv-1`") || !strings.Contains(r.Tooltip.Value, hd.ID) {
				t.Errorf("resolved tooltip: %+v", r.Tooltip)
			}
			if r.Label != h.Label || r.Position != h.Position {
				t.Errorf("resolve changed the hint: %+v, sent %+v", r, h)
			}

			bad := func(data string) *InlayHint {
				b := *h
				b.Data = json.RawMessage(data)
				if data == "" {
					b.Data = nil
				}
				return &b
			}
			for _, e := range []struct {
				name string
				hint *InlayHint
				code jsonrpc2.Code
				msg  string
			}{
				{"no data", bad(""), jsonrpc2.InvalidParams, "has no data"},
				{"not an object", bad(`[1]`), jsonrpc2.InvalidParams, "hint data"},
				{"no id", bad(fmt.Sprintf(`{"uri":%q,"kind":"promoted"}`, uri)), jsonrpc2.InvalidParams, "no record id"},
				{"no uri", bad(fmt.Sprintf(`{"recordId":%q,"kind":"promoted"}`, hd.ID)), jsonrpc2.InvalidParams, "no uri"},
				{"unknown kind", bad(fmt.Sprintf(`{"uri":%q,"recordId":%q,"kind":"learned"}`, uri, hd.ID)), jsonrpc2.InvalidParams, `kind "learned"`},
				{"not a file uri", bad(fmt.Sprintf(`{"uri":"untitled:x","recordId":%q,"kind":"promoted"}`, hd.ID)), jsonrpc2.InvalidParams, "file:// URI"},
				{"unknown record", bad(fmt.Sprintf(`{"uri":%q,"recordId":"01NOSUCHRECORD","kind":"promoted"}`, uri)), protocol.CodeContentModified, "promoted memory 01NOSUCHRECORD"},
				{"other kind", bad(fmt.Sprintf(`{"uri":%q,"recordId":%q,"kind":"candidate"}`, uri, hd.ID)), protocol.CodeContentModified, "not in the composition any more"},
			} {
				var out InlayHint
				err := c.callErr(methodInlayHintResolve, e.hint, &out)
				var je *jsonrpc2.Error
				if !errors.As(err, &je) || je.Code != e.code || !strings.Contains(je.Message, e.msg) {
					t.Errorf("%s: resolve error %v, want code %d with %q", e.name, err, e.code, e.msg)
				}
			}
			// The server still answers after the errors.
			if r := c.resolve(h); r.Tooltip == nil {
				t.Errorf("resolve after errors: %+v", r)
			}
		})
	}
}

// TestInlayHintsBoundedPerLine: a section with more than maxHintsPerAnchor
// learned lines shows that many hints and one summary hint (its tooltip
// inline even for a resolving client; resolving it answers it unchanged);
// the section's hover counts every line and tells the first maxHoverLines.
func TestInlayHintsBoundedPerLine(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	n := maxHoverLines + 2 // more than both bounds
	for i := 0; i < n; i++ {
		if res := agentSave(t, env, text, fmt.Sprintf("Learned fact %d", i), fmt.Sprintf("background.projectContext.learned_%02d", i), fmt.Sprintf("conv-%d", i)); res.State != engine.StatePromoted {
			t.Fatalf("save %d: %+v", i, res)
		}
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initializeResolving(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	hs := c.hints(uri)
	var facts, more []InlayHint
	for _, h := range hs {
		switch {
		case strings.Contains(h.Label, "Learned fact"):
			facts = append(facts, h)
		case strings.HasPrefix(h.Label, "… and "):
			more = append(more, h)
		}
	}
	if len(facts) != maxHintsPerAnchor || len(more) != 1 {
		t.Fatalf("%d fact hints and %d summaries, want %d and 1: %+v", len(facts), len(more), maxHintsPerAnchor, hs)
	}
	m := more[0]
	if want := fmt.Sprintf("… and %d more memory lines (%d promoted)", n-maxHintsPerAnchor, n-maxHintsPerAnchor); m.Label != want || m.Position != facts[0].Position || m.Tooltip == nil || !strings.Contains(m.Tooltip.Value, "agent-ls.showComposedPrompt") {
		t.Errorf("summary hint: %+v (facts at %+v)", m, facts[0].Position)
	}
	if r := c.resolve(&m); r.Label != m.Label || r.Tooltip == nil || r.Tooltip.Value != m.Tooltip.Value {
		t.Errorf("resolved summary: %+v", r)
	}
	var hover protocol.Hover
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": m.Position}, &hover)
	hv := hover.Contents.Value
	if !strings.Contains(hv, fmt.Sprintf("**%d memory-derived lines here**", n)) || !strings.Contains(hv, "… and 2 more memory-derived lines here") ||
		strings.Count(hv, "**Promoted memory**") != maxHoverLines {
		t.Errorf("hover at the hints: want %d lines counted, %d told, 2 more:\n%s", n, maxHoverLines, hv)
	}
}

// TestComposedTextBounded: a composed section in a hover lists at most its
// bound of items and says how many more there are.
func TestComposedTextBounded(t *testing.T) {
	t.Parallel()
	var list []any
	for i := 0; i < 7; i++ {
		list = append(list, fmt.Sprintf("item %d", i))
	}
	got := composedText(list, 5)
	if strings.Count(got, "- item ") != 5 || !strings.Contains(got, "- _… and 2 more (the composed view lists them all)_\n") || strings.Contains(got, "item 5") {
		t.Errorf("bounded list:\n%s", got)
	}
	got = composedText(map[string]any{"b": "2", "a": "1"}, 5)
	if got != "- **a**: 1\n- **b**: 2\n" {
		t.Errorf("small map = %q", got)
	}
	got = composedText(map[string]any{"b": "2", "a": "1", "c": "3"}, 2)
	if got != "- **a**: 1\n- **b**: 2\n- _… and 1 more (the composed view lists them all)_\n" {
		t.Errorf("bounded map = %q", got)
	}
}

// TestEditsAreVersioned: to a client that takes versioned edits
// (workspace.workspaceEdit.documentChanges), the server's edits name the
// version of the text they were made for, so an editor that has moved on
// refuses them instead of applying them at positions that now mean other
// lines. Adopting while the user typed a line above (the edit was computed
// on version 1, the editor is at 2) put the adopted line one line off and
// retired the record; now the editor refuses and the record stays. A quick
// fix carries its version too.
func TestEditsAreVersioned(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	env := newTestEnv(t)
	path := env.write(t, "deploy.agent.yaml", text)
	fact := agentSave(t, env, text, "Thursdays", "background.projectContext.deploy_window", "conv-1")
	entered, proceed := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), testHook: func(s *server) {
		s.loadHook = func(protocol.DocumentURI) {
			if armed.CompareAndSwap(true, false) {
				close(entered)
				<-proceed
			}
		}
	}})
	c.caps = func(caps map[string]any) {
		caps["workspace"] = map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}
	}
	var editorVersion atomic.Int32
	editorVersion.Store(1)
	// The editor applies an edit of the version it has and refuses any
	// other; it cannot tell an edit without a version.
	c.applyResult = func(params json.RawMessage) any {
		var p applyWorkspaceEditParams
		if err := json.Unmarshal(params, &p); err != nil {
			return map[string]any{"applied": false, "failureReason": err.Error()}
		}
		for _, dc := range p.Edit.DocumentChanges {
			if dc.TextDocument.Version != nil && *dc.TextDocument.Version != editorVersion.Load() {
				return map[string]any{"applied": false, "failureReason": "the document changed"}
			}
		}
		return map[string]any{"applied": true}
	}
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)

	// A quick fix names the version it was made for.
	broken := strings.Replace(text, "    tone: calm and factual\n", "    tnoe: calm and factual\n", 1)
	c.change(uri, broken, 2)
	editorVersion.Store(2)
	d := c.awaitDiagnostics(uri, 2)
	if len(d.Diagnostics) == 0 {
		t.Fatalf("no diagnostic for the misspelt key")
	}
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri}, "range": d.Diagnostics[0].Range,
		"context": map[string]any{"diagnostics": d.Diagnostics[:1]}}, &actions)
	var fix *protocol.CodeAction
	for i := range actions {
		if actions[i].Edit != nil {
			fix = &actions[i]
		}
	}
	if fix == nil || len(fix.Edit.DocumentChanges) != 1 || fix.Edit.Changes != nil ||
		fix.Edit.DocumentChanges[0].TextDocument.Version == nil || *fix.Edit.DocumentChanges[0].TextDocument.Version != 2 {
		t.Fatalf("quick fix %+v: want one versioned document change at version 2", fix)
	}
	c.change(uri, text, 3)
	editorVersion.Store(3)
	c.awaitDiagnostics(uri, 3)

	// Adopt, while the user types a line above.
	armed.Store(true)
	done := make(chan error, 1)
	go func() {
		var out CommandResult
		done <- c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
			"arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": uri}}}, &out)
	}()
	<-entered
	c.change(uri, "# a line typed meanwhile\n"+text, 4)
	editorVersion.Store(4)
	c.awaitDiagnostics(uri, 4)
	close(proceed)
	var rpcErr *jsonrpc2.Error
	if err := <-done; !errors.As(err, &rpcErr) || rpcErr.Code != codeRefused || !strings.Contains(err.Error(), "did not apply") {
		t.Fatalf("adopt of an edit for version 3 into version 4: %v; want refused, the editor did not apply it", err)
	}
	var rec schema.MemoryRecord
	withBolt(t, env, func(st store.Store) { rec, _ = st.Get(context.Background(), fact.Record.ID) })
	if rec.InvalidAt != "" {
		t.Fatalf("the record was retired though the editor refused the edit: %+v", rec)
	}
}

// TestAdoptEditMustLand: to a client that takes versioned edits, adopt
// retires the record only once the document shows the adopted line. Neovim
// skips an edit of an older version than its buffer's ("Buffer ... newer
// than edits") and still answers applied: the record was retired and its
// line written nowhere. An editor that applies the edit (and sends the
// change, as editors do) gets the record retired.
func TestAdoptEditMustLand(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, applies := range []bool{false, true} {
		t.Run(fmt.Sprintf("applies=%v", applies), func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			path := env.write(t, "deploy.agent.yaml", text)
			fact := agentSave(t, env, text, "Thursdays", "background.projectContext.deploy_window", "conv-1")
			c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), testHook: func(s *server) {
				s.editWait = time.Second // the silent skip is found out when it passes
			}})
			c.caps = func(caps map[string]any) {
				caps["workspace"] = map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}
			}
			uri := pathToURI(path)
			c.applyResult = func(params json.RawMessage) any {
				if applies {
					var p applyWorkspaceEditParams
					if err := json.Unmarshal(params, &p); err != nil || len(p.Edit.DocumentChanges) != 1 {
						return map[string]any{"applied": false, "failureReason": fmt.Sprintf("%v %s", err, params)}
					}
					c.change(uri, applyEdits(t, text, p.Edit.DocumentChanges[0].Edits), 2)
				}
				return map[string]any{"applied": true}
			}
			c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
			c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			var out CommandResult
			err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
				"arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": uri}}}, &out)
			var rec schema.MemoryRecord
			withBolt(t, env, func(st store.Store) { rec, _ = st.Get(context.Background(), fact.Record.ID) })
			if applies {
				if err != nil || rec.InvalidAt == "" {
					t.Fatalf("adopt into an editor that applied the edit: %v; record %+v", err, rec)
				}
				return
			}
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != codeRefused || !strings.Contains(err.Error(), "never showed") {
				t.Errorf("adopt into an editor that skipped the edit: %v (%+v); want refused, the document never showed the line", err, out)
			}
			if rec.InvalidAt != "" {
				t.Errorf("the record was retired though its line was written nowhere: %+v", rec)
			}
		})
	}
}

// TestAdoptNeedsApplyEdit: to a client without workspace.applyEdit, adopt
// is not offered (disabled with the reason where the client shows
// disabled actions) and, run anyway, is refused with the reason and keeps
// the record; before, it was offered and failed with MethodNotFound.
func TestAdoptNeedsApplyEdit(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("disabledSupport=%v", disabled), func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			path := env.write(t, "deploy.agent.yaml", text)
			fact := agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
			c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
			c.caps = func(caps map[string]any) {
				caps["workspace"] = map[string]any{}
				caps["textDocument"].(map[string]any)["codeAction"] = map[string]any{"disabledSupport": disabled}
			}
			c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			var actions []protocol.CodeAction
			c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
				"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}},
				"context": map[string]any{"diagnostics": []any{}}}, &actions)
			found := false
			for _, a := range actions {
				if a.Command == nil || a.Command.Command != CommandAdopt {
					continue
				}
				found = true
				if a.Disabled == nil || !strings.Contains(a.Disabled.Reason, "workspace/applyEdit") {
					t.Errorf("adopt offered to a client without applyEdit: %+v", a)
				}
			}
			if found != disabled {
				t.Errorf("adopt action listed: %v, want %v (disabled support %v)", found, disabled, disabled)
			}
			err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
				"arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": uri}}}, &CommandResult{})
			if err == nil || !strings.Contains(err.Error(), "workspace/applyEdit") {
				t.Errorf("adopt run by a client without applyEdit: %v", err)
			}
			if n := len(callsOf(c, methodApplyEdit)); n != 0 {
				t.Errorf("%d applyEdit requests sent", n)
			}
			withBolt(t, env, func(st store.Store) {
				rec, err := st.Get(context.Background(), fact.Record.ID)
				if err != nil || rec.InvalidAt != "" {
					t.Errorf("the record after a refused adopt: %+v, %v", rec, err)
				}
			})
		})
	}
}
