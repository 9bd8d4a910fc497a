package lsp

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestLedgerBrokenReadOnly: with a ledger entry of the store edited, the
// server reports the store as unverified (agent-ls/status naming the
// entry), keeps its read-only services, and refuses to approve a pending
// proposal with codeReadOnly saying the ledger does not verify.
func TestLedgerBrokenReadOnly(t *testing.T) {
	t.Parallel()
	env, path, text, proposalID := brokenLedgerEnv(t)
	c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true})
	c.initialize(env.root, nil, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	c.waitFor("unverified status", func(ns, _ []note) bool { return statusCount(ns, uri, StoreUnverified) > 0 })
	var out CommandResult
	err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandApprove,
		"arguments": []any{map[string]any{"uri": uri, "proposalId": proposalID}}}, &out)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != codeReadOnly || !strings.Contains(je.Message, "ledger does not verify at entry 1") {
		t.Fatalf("approve on a broken chain: %v (%+v); want codeReadOnly naming the entry", err, out)
	}
}

// TestLimitsThroughLSP: a retarget through the language server goes through
// the one save path, so the workspace's limits apply: a record longer than
// limits.content (set after it was saved) cannot be moved, and the answer
// names the limit.
func TestLimitsThroughLSP(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	env := newTestEnv(t)
	path := env.write(t, "deploy.agent.yaml", text)
	res := agentSave(t, env, text, "deploys happen on tuesdays after the freeze", "background.projectContext.deploy_window", "conv-1")
	if res.Record == nil {
		t.Fatalf("save: %+v", res)
	}
	env.write(t, ".agent-ls.yaml", "actor: human:ana\nlimits:\n  content: 20\n")
	c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true})
	c.initialize(env.root, nil, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	var out CommandResult
	err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandRetarget,
		"arguments": []any{map[string]any{"uri": uri, "recordId": res.Record.ID, "target": "background.projectContext.release_day"}}}, &out)
	if err == nil || !strings.Contains(err.Error(), "limits.content") {
		t.Fatalf("retarget of a record over limits.content: %v (%+v); want refused naming the limit", err, out)
	}
}

// breakLedgerEntry edits ledger entry 1 of the store at path in place (same
// length, inside the saved trigger): its hash no longer matches.
func breakLedgerEntry(t *testing.T, path string) {
	t.Helper()
	bolttest.EditLedgerEntry(t, path, 1, func(v []byte) []byte {
		v[strings.Index(string(v), trigger)] = 'a'
		return v
	})
}

// brokenLedgerEnv is a workspace with the deploy agent, a pending proposal
// saved for it, and a ledger entry of its store edited: the agent file's
// path and text, and the proposal's id.
func brokenLedgerEnv(t *testing.T) (env *testEnv, path, text, proposalID string) {
	t.Helper()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text = string(data)
	env = newTestEnv(t)
	path = env.write(t, "deploy.agent.yaml", text)
	res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9")
	if res.ProposalID == "" {
		t.Fatalf("save trigger: %+v", res)
	}
	breakLedgerEntry(t, env.storePath)
	return env, path, text, res.ProposalID
}
