package main

import (
	"strings"
	"testing"
)

// TestIDArgumentsOneRule: every command taking a record or proposal id
// applies the one id rule (schema.CheckIDArg): an id with a terminal escape,
// white space, a bidi control or 300 bytes is refused as bad input (exit 2)
// with the field named, before any store is opened or created, and the
// message never carries the raw id.
func TestIDArgumentsOneRule(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, id := range []string{"01J\x1b[31mRED", "01J two", "01J\u202e", strings.Repeat("A", 300)} {
		for _, args := range [][]string{
			{"memory", "show", id},
			{"memory", "invalidate", id},
			{"memory", "corroborate", "--conversation", "c1", id},
			{"memory", "retarget", id, "judgment.deploy.heuristics"},
			{"promote", id},
			{"demote", "--reason", "r", id},
			{"approve", id},
			{"reject", "--reason", "r", id},
			{"memory", "restore", id},
		} {
			r := w.cli(args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "ID: ") || strings.Contains(r.stderr, "\x1b") || strings.Contains(r.stderr, "\u202e") {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 naming ID, without the raw id", args[:2], r.code, r.stderr)
			}
		}
		// Ids given to a flag: diff answered "no record <raw id>" (exit 1)
		// and ledger --record listed nothing (exit 0).
		for _, tc := range []struct {
			flag string
			args []string
		}{
			{"--with", []string{"diff", "deploy.agent.yaml", "--with", id}},
			{"--without", []string{"diff", "deploy.agent.yaml", "--without", id}},
			{"--record", []string{"memory", "ledger", "--record", id}},
		} {
			r := w.cli(tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.flag+": ") || strings.Contains(r.stderr, "\x1b") || strings.Contains(r.stderr, "\u202e") {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s, without the raw id", tc.args, r.code, r.stderr, tc.flag)
			}
		}
	}
}
