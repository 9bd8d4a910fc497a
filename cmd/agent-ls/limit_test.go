package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

// TestLimitFlagsAgree: every command with --limit reads it the same way:
// N > 0 is at most N, 0 is no limit (as -1, the older spelling, still is),
// any other negative number or a non-number is a usage error (exit 2).
// Before, `memory list --limit 0` listed nothing while `memory ledger
// --limit 0` listed everything, and `--limit -7` listed everything.
func TestLimitFlagsAgree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	const n = 12 // more than search's default of 10
	for i := range n {
		saveJSON(t, dir, db, "--content", fmt.Sprintf("deploy note number %d", i))
	}
	count := map[string]func(t *testing.T, r binResult) int{
		"records": func(t *testing.T, r binResult) int { return len(decodeJSON[listing](t, r).Records) },
		"entries": func(t *testing.T, r binResult) int { return len(decodeJSON[[]store.LedgerEntry](t, r)) },
	}
	for _, tc := range []struct {
		cmd  []string
		kind string
	}{
		{[]string{"list"}, "records"},
		{[]string{"search", "--query", "deploy"}, "records"},
		{[]string{"ledger"}, "entries"},
		{[]string{"list", "--actor", "agent:bot"}, "records"}, // a confined view trims after filtering
		{[]string{"ledger", "--actor", "agent:bot"}, "entries"},
	} {
		for _, lim := range []struct {
			arg  string
			code int
			want int
		}{{"1", 0, 1}, {"5", 0, 5}, {"0", 0, n}, {"-1", 0, n}, {"-7", exitUsage, 0}, {"lots", exitUsage, 0}} {
			name := strings.Join(tc.cmd, " ") + " --limit " + lim.arg
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := mem(t, dir, db, append(append([]string{"--format", "json"}, tc.cmd...), "--limit", lim.arg)...)
				if r.code != lim.code {
					t.Fatalf("exit %d, want %d; stderr %q", r.code, lim.code, r.stderr)
				}
				if lim.code != 0 {
					if !strings.Contains(r.stderr, "--limit") || r.stdout != "" {
						t.Errorf("stderr %q, stdout %q: want the --limit flag named and no output", r.stderr, r.stdout)
					}
					return
				}
				if got := count[tc.kind](t, r); got != lim.want {
					t.Errorf("%d %s, want %d", got, tc.kind, lim.want)
				}
			})
		}
	}
	for _, sub := range []string{"list", "search", "ledger"} {
		if r := mem(t, dir, db, sub, "--help"); !strings.Contains(r.stdout, "0 for no limit") {
			t.Errorf("memory %s --help does not say what --limit 0 means:\n%s", sub, r.stdout)
		}
	}
}
