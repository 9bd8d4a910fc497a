package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveAnswersWordedOnce: a save's refusal is worded for a person, each
// thing once: a supersede of no record says "no record ..." (it said
// "not_found: no record ...", the JSON status word), and a supersede that
// waits for a pending proposal says "conflict with ID: proposal ..." (it
// said "conflict with ID: conflict: proposal ...").
func TestSaveAnswersWordedOnce(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	mustOK(t, runBin(t, empty, "", memEnv, "init"), "init")
	w := newEvoWorkspace(t, "")
	s := seedTrust(t, w)
	agent := func(args ...string) []string { return append(args, "--actor", "agent:deploy-ops") }
	if r := w.cli(agent("memory", "invalidate", s.aGuarded, "--reason", "x")...); r.code != exitOK {
		t.Fatalf("invalidate: exit %d %s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		dir  string
		args []string
		want string
	}{
		{empty, []string{"memory", "save", "--supersedes", "01JZZZZZZZZZZZZZZZZZZZZZZZ", "x"}, "memory save: no record 01JZZZZZZZZZZZZZZZZZZZZZZZ to supersede"},
		{w.dir, agent("memory", "save", "--target", "judgment.deploy.heuristics", "--supersedes", "01JZZZZZZZZZZZZZZZZZZZZZZZ", "x"), "memory save: no record 01JZZZZZZZZZZZZZZZZZZZZZZZ to supersede"},
		{w.dir, agent("memory", "save", "--target", "judgment.deploy.escalationTriggers", "--supersedes", s.aGuarded, "Ask before deleting anything in prod"),
			"memory save: conflict with " + s.aGuarded + ": proposal "},
	} {
		r := runBin(t, tc.dir, "", []string{"USER=ana"}, tc.args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		for _, stutter := range []string{"not_found", "conflict: ", "save: save:"} {
			if strings.Contains(r.stderr, stutter) {
				t.Errorf("%v: %q says %q", tc.args, r.stderr, stutter)
			}
		}
	}
	_ = filepath.Join
}
