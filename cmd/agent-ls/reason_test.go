package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/store"
)

// TestReasonIsOneLineOfText: a --reason is untrusted text that `memory
// show`, `proposals` and the terminal print: one with a control character
// (an escape sequence that clears the screen, a newline that forges a
// field of `memory show`) is invalid input (exit 2, naming the reason) and
// changes nothing; an imported record's invalidReason too. Before, it was
// stored and printed raw.
func TestReasonIsOneLineOfText(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("deploy-ops", nil)
	lesson := w.save(eng, "Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", "")
	fact := w.save(eng, "Deploys go out on Thursdays", "background.projectContext.deploy_window", "conv-1", "")
	if lesson.ProposalID == "" || fact.Record == nil {
		t.Fatalf("saves: %+v %+v", lesson, fact)
	}
	ledger := func() int {
		var ents []store.LedgerEntry
		w.cliJSON(&ents, "memory", "ledger")
		return len(ents)
	}
	before := ledger()
	for _, reason := range []string{"bad \x1b[2J\x1b[31mred", "ring\a", "x)\npromotion:     tier auto", "carriage\rreturn"} {
		for _, args := range [][]string{
			{"memory", "invalidate", fact.Record.ID, "--reason", reason},
			{"demote", fact.Record.ID, "--reason", reason},
			{"reject", lesson.ProposalID, "--reason", reason},
			{"approve", lesson.ProposalID, "--reason", reason},
		} {
			r := w.cli(args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "reason: control character U+") || strings.ContainsAny(r.stderr, "\x1b\a\r") {
				t.Errorf("%s %q: exit %d, stderr %q; want exit 2 naming the reason's control character", args[0], reason, r.code, r.stderr)
			}
		}
	}
	if after := ledger(); after != before {
		t.Errorf("refused reasons wrote %d ledger entries", after-before)
	}
	var sh shown
	w.cliJSON(&sh, "memory", "show", fact.Record.ID)
	if sh.Record.InvalidAt != "" {
		t.Errorf("the record was invalidated: %+v", sh.Record)
	}
	var o engine.Outcome
	wantCode(t, w.cliJSON(&o, "reject", lesson.ProposalID, "--reason", "keep it out — for now"), exitOK, "reject with a plain reason")

	line := `{"id":"01JB0000000000000000000015","scope":{},"kind":"fact","content":"c","provenance":{},"createdAt":"2026-01-01T10:00:00.000Z",` +
		`"updatedAt":"2026-01-02T10:00:00.000Z","invalidAt":"2026-01-02T10:00:00.000Z","invalidReason":"r\u001b[31m"}`
	file := filepath.Join(w.dir, "escape.jsonl")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.cli("memory", "import", file)
	if r.code != exitUsage || !strings.Contains(r.stderr, "escape.jsonl:1: invalid request: invalidReason: control character U+001B") {
		t.Errorf("import: exit %d, stderr %q", r.code, r.stderr)
	}
}
