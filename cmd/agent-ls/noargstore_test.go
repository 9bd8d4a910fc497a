package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedArgumentsCreateNoStore: a command that fails its arguments
// (a bad actor, target, payload, scope, an unknown agent, a record ID on an
// empty store, an invalid batch) answers without creating the store: the
// workspace has no .agent-memory/ afterwards (issue 32, small things).
func TestFailedArgumentsCreateNoStore(t *testing.T) {
	t.Parallel()
	const id = "mem_00000000000000000000000000"
	batches := map[string]string{
		"bad-payload.jsonl": `{"content":"x","kind":"fact","target":"example.deploy","payload":{"foo":1}}` + "\n",
		"plain.jsonl":       `{"content":"x","kind":"fact"}` + "\n",
		"malformed.jsonl":   `{"content":` + "\n",
		"records.jsonl":     `{"bad json` + "\n",
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"memory", "save", "--actor", "bogus", "x"}, exitUsage, `--actor: actor "bogus"`},
		{[]string{"memory", "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "--target", "judgment.bad", "x"}, exitUsage, "--target"},
		{[]string{"memory", "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "--target", "example.deploy", "--payload", `{"foo":1}`, "x"}, exitUsage, `unknown property "foo"`},
		{[]string{"memory", "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "--target", "judgment.newdomain.heuristics", "x"}, exitFindings, `no judgment domain "newdomain"`},
		{[]string{"memory", "save", "--actor", "human:ana", "--scope", "agent=nosuch", "x"}, exitFindings, `no agent file in the workspace names agent "nosuch"`},
		{[]string{"memory", "save", "--actor", "agent:deploy-ops", "--scope", "agent=code-review", "x"}, exitFindings, "forbidden"},
		{[]string{"memory", "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "--supersedes", id, "x"}, exitFindings, "memory save: no record " + id},
		{[]string{"memory", "save-batch", "--actor", "bogus", "plain.jsonl"}, exitUsage, "--actor"},
		{[]string{"memory", "save-batch", "--actor", "human:ana", "--scope", "agent=deploy-ops", "bad-payload.jsonl"}, exitUsage, `bad-payload.jsonl:1: invalid request`},
		{[]string{"memory", "save-batch", "--actor", "human:ana", "--scope", "agent=nosuch", "plain.jsonl"}, exitFindings, "1 of 1 line(s) not saved"},
		{[]string{"memory", "save-batch", "--actor", "agent:deploy-ops", "--scope", "agent=code-review", "plain.jsonl"}, exitFindings, "forbidden"},
		{[]string{"memory", "save-batch", "--actor", "human:ana", "malformed.jsonl"}, exitUsage, "malformed.jsonl:1: invalid request"},
		{[]string{"memory", "import", "--actor", "human:ana", "records.jsonl"}, exitUsage, "records.jsonl:1"},
		{[]string{"memory", "import", "--actor", "bogus", "records.jsonl"}, exitUsage, "--actor"},
		{[]string{"memory", "invalidate", "--actor", "bogus", id}, exitUsage, "--actor"},
		{[]string{"memory", "invalidate", "--actor", "human:ana", id}, exitFindings, "no record " + id},
		{[]string{"memory", "corroborate", "--actor", "human:ana", "--conversation", "c1", id}, exitFindings, "no record " + id},
		{[]string{"memory", "corroborate", "--actor", "bogus", "--conversation", "c1", id}, exitUsage, "--actor"},
		{[]string{"memory", "retarget", "--actor", "human:ana", id, "judgment.deploy.heuristics"}, exitFindings, "no record " + id},
		{[]string{"memory", "retarget", "--actor", "human:ana", id, "judgment.bad"}, exitUsage, "judgment.bad"},
		{[]string{"promote", "--actor", "human:ana", id}, exitFindings, "no memory store"},
		{[]string{"approve", "--actor", "human:ana", "prop_x"}, exitFindings, ""},
	} {
		name := strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newEvoWorkspace(t, "")
			for f, text := range batches {
				if err := os.WriteFile(filepath.Join(w.dir, f), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := runBin(t, w.dir, "", nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(filepath.Join(w.dir, ".agent-memory")); !os.IsNotExist(err) {
				t.Errorf(".agent-memory exists after a failed command (stat: %v); stderr %q", err, r.stderr)
			}
		})
	}
	// A save that passes its checks creates the store, once.
	w := newEvoWorkspace(t, "")
	r := runBin(t, w.dir, "", nil, "memory", "save", "--actor", "human:ana", "--scope", "agent=deploy-ops", "a fact")
	if _, err := os.Stat(w.db); r.code != exitOK || err != nil || !strings.Contains(r.stderr, "created memory store") {
		t.Fatalf("save: exit %d, stderr %q, store: %v", r.code, r.stderr, err)
	}
}
