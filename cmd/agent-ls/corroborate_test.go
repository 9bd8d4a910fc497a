package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

// TestCorroborateRefusesRetired: `agent-ls memory corroborate` on an
// invalidated, superseded or expired record is refused (exit 1, as
// retarget refuses a retired record), naming the record and why, and
// writes nothing: no support, no ledger entry. Before, the command called
// the store directly and counted support on retired records.
func TestCorroborateRefusesRetired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	wrong := saveJSON(t, dir, db, "--target", "judgment.code-review.heuristics", "--conversation", "c1", "--content", "Ask for a failing test first")
	mustOK(t, mem(t, dir, db, "invalidate", wrong.ID, "--reason", "wrong call"), "invalidate")
	old := saveJSON(t, dir, db, "--target", "background.projectContext.deploy_window", "--conversation", "c1", "--content", "Deploys on Tuesdays")
	saveJSON(t, dir, db, "--target", "background.projectContext.deploy_window", "--conversation", "c1", "--content", "Deploys on Thursdays", "--supersedes", old.ID)
	// An expired record: import writes it as it was (its expiry passed).
	const expired = "01JB0000000000000000000009"
	line := `{"id":"` + expired + `","scope":{},"kind":"fact","content":"the freeze lasts a week","provenance":{"conversationId":"c1"},` +
		`"createdAt":"2026-01-01T10:00:00.000Z","updatedAt":"2026-01-01T10:00:00.000Z","expiresAt":"2026-01-02T10:00:00.000Z"}`
	file := filepath.Join(dir, "expired.jsonl")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, mem(t, dir, db, "import", file, "--actor", "human:ana"), "import")
	ledger := func() int {
		return len(decodeJSON[[]store.LedgerEntry](t, mustOK(t, mem(t, dir, db, "--format", "json", "ledger"), "ledger")))
	}
	before := ledger()
	for _, tc := range []struct{ name, id, want string }{
		{"invalidated", wrong.ID, "record " + wrong.ID + " is already invalidated (wrong call)"},
		{"superseded", old.ID, "record " + old.ID + " is already invalidated (superseded by "},
		{"expired", expired, "record " + expired + " expired at 2026-01-02T10:00:00.000Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"text", "json"} {
				r := mem(t, dir, db, "--format", format, "corroborate", tc.id, "--conversation", "c7")
				if r.code != exitFindings || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line with %q", format, r.code, r.stderr, tc.want)
				}
				if format != "json" {
					continue
				}
				// The answer is on stdout as well, as invalidate and retarget
				// print theirs when they refuse.
				got := decodeJSON[struct {
					Status   string `json:"status"`
					Counted  bool   `json:"counted"`
					Guidance string `json:"guidance"`
				}](t, r)
				if got.Status != "conflict" || got.Counted || !strings.Contains(got.Guidance, tc.want) {
					t.Errorf("json answer %+v, want status conflict, not counted, saying %q", got, tc.want)
				}
			}
			sh := decodeJSON[shown](t, mustOK(t, mem(t, dir, db, "--format", "json", "show", tc.id), "show"))
			if n := sh.Record.DistinctConversations(); n != 1 {
				t.Errorf("the retired record now has %d conversations, want 1", n)
			}
		})
	}
	if after := ledger(); after != before {
		t.Errorf("refused corroborations wrote %d ledger entries", after-before)
	}
	if help := mustOK(t, mem(t, dir, db, "corroborate", "--help"), "--help").stdout; !strings.Contains(help, "A retired record (invalidated, superseded or expired) gathers no support") || !strings.Contains(help, "Exit 0 ") {
		t.Errorf("corroborate --help does not say what it refuses and its exit codes:\n%s", help)
	}
}

// TestCorroborateAppliesTier: a corroboration through the CLI is counted
// as a save of the same lesson would be: the earned lesson whose second
// conversation it is, is promoted (before, the command only added the
// support and left the lesson a candidate with its bar met).
func TestCorroborateAppliesTier(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	lesson := saveJSON(t, dir, db, "--scope", "agent=bot", "--target", "judgment.code-review.heuristics", "--conversation", "c1", "--content", "Ask for a failing test first")
	type answer struct {
		Status        string `json:"status"`
		Counted       bool   `json:"counted"`
		Conversations int    `json:"conversations"`
		State         string `json:"state"`
	}
	for _, tc := range []struct {
		conv string
		want answer
	}{{"c1", answer{"saved", false, 1, "candidate"}}, {"C2 ", answer{"saved", true, 2, "promoted"}}, {"c2", answer{"saved", false, 2, "promoted"}}} {
		got := decodeJSON[answer](t, mustOK(t, mem(t, dir, db, "--format", "json", "corroborate", lesson.ID, "--conversation", tc.conv), "corroborate"))
		if got != tc.want {
			t.Errorf("corroborate --conversation %q = %+v, want %+v", tc.conv, got, tc.want)
		}
	}
	r := mem(t, dir, db, "corroborate", lesson.ID, "--conversation", "c3", "--run", "r\x1b[2J")
	if want := "agent-ls memory corroborate: --run: control character U+001B at byte 1\n"; r.code != exitUsage || r.stderr != want {
		t.Errorf("a run id with an escape: exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
	}
	sh := decodeJSON[shown](t, mustOK(t, mem(t, dir, db, "--format", "json", "show", lesson.ID), "show"))
	if sh.Promotion == nil || sh.Promotion.Tier != "earned" {
		t.Errorf("promotion after two conversations: %+v", sh.Promotion)
	}
}
