package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGardenResolvesConflictThroughCLI (issue 21 items 7 and 9): two
// promoted records on one key; an instantiate ledgers the conflict once,
// garden opens the supersede proposal, and `memory events` shows both as
// typed events.
func TestGardenResolvesConflictThroughCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "deploy.agent.yaml")
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "agents", "deploy.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "m.db")
	older := `{"id":"01M6GVD5B064BGYW3NH3ZQNJ0X","scope":{"agent":"deploy-ops"},"kind":"fact","content":"Freeze starts Monday","provenance":{},` +
		`"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","target":"background.currentState.freeze"}`
	jl := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(jl, []byte(older+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) binResult {
		t.Helper()
		r := runBin(t, dir, "", nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("memory", "--store", db, "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "--agent", agent,
		"--target", "background.currentState.freeze", "--content", "Freeze starts Tuesday")
	// An import (a concurrent learning from elsewhere) bypasses save's
	// reconciliation: both are promoted now, a residual conflict. Two
	// instantiates ledger it once.
	run("memory", "--store", db, "import", jl, "--actor", "human:ana")
	run("promote", "01M6GVD5B064BGYW3NH3ZQNJ0X", agent, "--store", db, "--actor", "human:ana")
	saved := run("memory", "--store", db, "list", "--format", "json").stdout
	if strings.Count(saved, `"id"`) != 2 {
		t.Fatalf("records: %s", saved)
	}
	run("render", agent, "--store", db, "--summarize")
	run("render", agent, "--store", db, "--summarize")
	g := run("garden", agent, "--store", db).stdout
	if !strings.Contains(g, "key-collision") || !strings.Contains(g, "01M6GVD5B064BGYW3NH3ZQNJ0X is shadowed") || !strings.Contains(g, "[proposal ") {
		t.Fatalf("garden:\n%s", g)
	}
	ev := run("memory", "--store", db, "--format", "json", "events").stdout
	if n := strings.Count(ev, `"type":"agent.memory.conflict"`); n != 1 {
		t.Errorf("%d conflict events, want 1:\n%s", n, ev)
	}
	if !strings.Contains(ev, `"type":"agent.memory.propose"`) || !strings.Contains(ev, `"actor":"system:garden"`) {
		t.Errorf("no garden proposal event:\n%s", ev)
	}
}
