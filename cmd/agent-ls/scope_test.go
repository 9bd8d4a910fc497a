package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
)

// TestScopeAddsOnSave is issue 30's reproduction 5: `memory save --scope
// agent=deploy-ops` in a workspace whose scope is {project: atlas} stored
// the record without project (the flag replaced the workspace scope), so
// it was "promoted" and never rendered. --scope adds to the workspace scope
// on save as on render: the record's scope is {project: atlas, agent:
// deploy-ops} and render shows it.
func TestScopeAddsOnSave(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	var res struct {
		Status string `json:"status"`
		State  string `json:"state"`
		Record struct {
			Scope map[string]string `json:"scope"`
		} `json:"record"`
	}
	r := w.cliJSON(&res, "memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.deploy_window",
		"--conversation", "c1", "Thursdays after 14:00 ET")
	wantCode(t, r, exitOK, "save")
	if res.Status != "saved" || res.State != "promoted" {
		t.Fatalf("save: status %q state %q, want saved and promoted; stderr %s", res.Status, res.State, r.stderr)
	}
	if got := engine.FormatScope(res.Record.Scope); got != "agent=deploy-ops,project=atlas" {
		t.Errorf("saved scope {%s}, want {agent=deploy-ops,project=atlas}: --scope adds to the workspace scope", got)
	}
	rr := w.cli("render", "deploy.agent.yaml")
	wantCode(t, rr, exitOK, "render")
	if !strings.Contains(rr.stdout, "Thursdays after 14:00 ET") {
		t.Errorf("render does not show the promoted line:\n%s", rr.stdout)
	}
	// save-batch takes the same rule.
	batch := filepath.Join(w.dir, "b.jsonl")
	if err := os.WriteFile(batch, []byte(`{"content":"freeze window is Friday","target":"background.projectContext.freeze","conversation":"c2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var answers []struct {
		Record struct {
			Scope map[string]string `json:"scope"`
		} `json:"record"`
	}
	wantCode(t, w.cliJSON(&answers, "memory", "save-batch", "--scope", "agent=deploy-ops", batch), exitOK, "save-batch")
	if len(answers) != 1 || engine.FormatScope(answers[0].Record.Scope) != "agent=deploy-ops,project=atlas" {
		t.Errorf("save-batch answers %+v, want one record in {agent=deploy-ops,project=atlas}", answers)
	}
	if rr := w.cli("render", "deploy.agent.yaml"); !strings.Contains(rr.stdout, "freeze window is Friday") {
		t.Errorf("render does not show the batch's line:\n%s", rr.stdout)
	}
}

// TestScopeGuardedSaveVisible is reproduction 5's guarded half: a guarded
// save made with --scope agent=NAME opened a proposal outside the
// workspace scope, so `proposals` said nothing was pending and `approve`
// printed a diff whose line never rendered. Now the proposal is listed and
// its approval renders.
func TestScopeGuardedSaveVisible(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	var res struct {
		Status     string `json:"status"`
		ProposalID string `json:"proposalId"`
	}
	r := w.cliJSON(&res, "memory", "save", "--actor", "agent:deploy-ops", "--scope", "agent=deploy-ops",
		"--target", "judgment.deploy.constraints", "--conversation", "c1", "Never deploy during the quarterly audit week")
	wantCode(t, r, exitOK, "guarded save")
	if res.ProposalID == "" {
		t.Fatalf("guarded save by an agent opened no proposal: %s %s", r.stdout, r.stderr)
	}
	p := w.cli("proposals")
	wantCode(t, p, exitOK, "proposals")
	if !strings.Contains(p.stdout, res.ProposalID) {
		t.Fatalf("proposals does not list %s:\n%s\n%s", res.ProposalID, p.stdout, p.stderr)
	}
	wantCode(t, w.cli("approve", res.ProposalID), exitOK, "approve")
	if rr := w.cli("render", "deploy.agent.yaml"); !strings.Contains(rr.stdout, "Never deploy during the quarterly audit week") {
		t.Errorf("the approved line does not render:\n%s", rr.stdout)
	}
}

// TestScopeInvisibleRefused: a save whose record no agent file of the
// workspace would see is refused with the reason (exit 1 for a record's
// scope, 2 for a --scope that contradicts the workspace scope), and
// nothing is stored. render, the evolution commands, list and mcp refuse
// the contradicting --scope the same way.
func TestScopeInvisibleRefused(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"memory", "save", "--scope", "project=other,agent=deploy-ops", "--target", "background.projectContext.x", "v"}, exitUsage,
			`--scope project=other: the workspace scope has project=atlas`},
		{[]string{"memory", "save", "--scope", "agent=deploy-op", "--target", "background.projectContext.x", "v"}, exitFindings,
			`no agent file in the workspace names agent "deploy-op" (did you mean deploy-ops?)`},
		{[]string{"memory", "save-batch", "--scope", "project=other", "b.jsonl"}, exitUsage, `--scope project=other: the workspace scope has project=atlas`},
		{[]string{"memory", "list", "--scope", "project=other"}, exitUsage, `--scope project=other: the workspace scope has project=atlas`},
		{[]string{"render", "deploy.agent.yaml", "--scope", "project=other"}, exitUsage, `--scope project=other: the workspace scope has project=atlas`},
		{[]string{"garden", "--scope", "project=other"}, exitUsage, `--scope project=other: the workspace scope has project=atlas`},
		{[]string{"mcp", "deploy.agent.yaml", "--scope", "project=other"}, exitUsage, `--scope project=other: the workspace scope has project=atlas`},
	} {
		if err := os.WriteFile(filepath.Join(w.dir, "b.jsonl"), []byte(`{"content":"v"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := w.cli(tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	var l listing
	w.cliJSON(&l, "memory", "list")
	if len(l.Records) != 0 {
		t.Errorf("refused saves stored %d record(s): %+v", len(l.Records), l.Records)
	}
	// The refusal is an answer in JSON too.
	var res struct {
		Status   string `json:"status"`
		Guidance string `json:"guidance"`
	}
	r := w.cliJSON(&res, "memory", "save", "--scope", "agent=deploy-op", "v")
	if r.code != exitFindings || res.Status != "refused" || !strings.Contains(res.Guidance, "reach no composition") {
		t.Errorf("save --format json for an unknown agent: exit %d, %+v", r.code, res)
	}
}

// TestScopeMCPVisible: the MCP server's scope is the workspace scope plus
// --scope, and its saves land where the agent's render reads.
func TestScopeMCPVisible(t *testing.T) {
	t.Parallel()
	dir, agentFile := mcpWorkspace(t)
	cs := mcpSession(t, dir, agentFile, "--scope", "team=billing", "--conversation", "m1")
	defer cs.Close()
	out := mcpSave(t, cs, map[string]any{"content": "Refund windows close at 18:00 CET", "target": "background.projectContext.refund_cutoff"})
	if out.Status != "saved" || out.Record == nil {
		t.Fatalf("memory_save: %+v", out)
	}
	if got := engine.FormatScope(out.Record.Scope); got != "agent=support-bot,project=atlas,team=billing" {
		t.Errorf("MCP saved scope {%s}, want {agent=support-bot,project=atlas,team=billing}", got)
	}
	data, _ := json.Marshal(out.Record.Scope)
	r := runBin(t, dir, "", nil, "render", agentFile)
	if !strings.Contains(r.stdout, "Refund windows close at 18:00 CET") {
		t.Errorf("render does not show the MCP save (scope %s):\n%s", data, r.stdout)
	}
}

// TestScopeAgentKeyCaseRefused: `--scope Agent=deploy-ops` (the agent key
// in another case) is refused on every command (exit 2) and saves nothing.
// It saved a record without the agent key, a shared one that every agent
// of the workspace composed (code-reviewer's render showed it) while the
// save answered that it was part of deploy-ops's composition.
func TestScopeAgentKeyCaseRefused(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if err := os.WriteFile(filepath.Join(w.dir, "b.jsonl"), []byte(`{"content":"v"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `--scope: key "Agent": did you mean "agent"?`
	for _, args := range [][]string{
		{"memory", "save", "--scope", "Agent=deploy-ops", "--target", "background.projectContext.x", "v"},
		{"memory", "save-batch", "--scope", "Agent=deploy-ops", "b.jsonl"},
		{"memory", "list", "--scope", "Agent=deploy-ops"},
		{"render", "deploy.agent.yaml", "--scope", "Agent=deploy-ops"},
		{"garden", "--scope", "Agent=deploy-ops"},
		{"mcp", "deploy.agent.yaml", "--scope", "Agent=deploy-ops"},
	} {
		r := w.cli(args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	if _, err := os.Stat(w.db); err == nil {
		t.Error("a refused save created the store")
	}
}
