package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestPostgresRowsEditedBehindTheLedger (issue 31, reproduction 9, through
// the binary): a promotion row deleted with psql makes render exit 2
// naming the record instead of dropping the line; after ledger --verify
// found (exit 1) a record's content edited, memory save exits 2 until the row is put back
// and verify passes.
func TestPostgresRowsEditedBehindTheLedger(t *testing.T) {
	t.Parallel()
	dir, url := pgWorkspace(t)
	cliOK(t, dir, "memory", "init")
	cliOK(t, dir, "memory", "save", "--scope", "user=u1,agent=deploy-ops", "--target", "background.projectContext.deploy_window",
		"--conversation", "c1", "--actor", "agent:deploy-ops", "Deploys go out Tuesdays after 14:00 ET")
	var l listing
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "list", "--format", "json")), &l); err != nil || len(l.Records) != 1 {
		t.Fatalf("memory list: %v %+v", err, l)
	}
	id := l.Records[0].ID
	if out := cliOK(t, dir, "render", "deploy.agent.yaml"); !strings.Contains(out, "Deploys go out Tuesdays") {
		t.Fatalf("render does not show the promoted fact:\n%s", out)
	}

	pgtest.Exec(t, url, `DELETE FROM agent_ls_promotions WHERE record_id = $1`, id)
	if r := runBin(t, dir, "", memEnv, "render", "deploy.agent.yaml"); r.code != 2 || !strings.Contains(r.stderr, id) || strings.Contains(r.stdout, "Deploys go out") {
		t.Errorf("render after the promotion row was deleted: exit %d, stdout %q, stderr %q; want exit 2 naming %s", r.code, r.stdout, r.stderr, id)
	}

	dir2, url2 := pgWorkspace(t)
	cliOK(t, dir2, "memory", "init")
	cliOK(t, dir2, "memory", "save", "--scope", "user=u1", "--target", "judgment.deploy.constraints", "--actor", "agent:deploy-ops",
		"--conversation", "c1", "Never deploy on Friday")
	pgtest.Exec(t, url2, `UPDATE agent_ls_records SET body = replace(body, 'Friday', 'Monday')`)
	if r := runBin(t, dir2, "", memEnv, "memory", "ledger", "--verify"); r.code != 1 {
		t.Errorf("ledger --verify after a content edit: exit %d, stdout %q, stderr %q; want 1 (differences)", r.code, r.stdout, r.stderr)
	}
	save := []string{"memory", "save", "--scope", "user=u1", "--actor", "human:ana", "The api is versioned"}
	if r := runBin(t, dir2, "", memEnv, save...); r.code != 2 || !strings.Contains(r.stderr, "verification failed") {
		t.Errorf("memory save after a failed verify: exit %d, stderr %q; want 2 and the reason", r.code, r.stderr)
	}
	pgtest.Exec(t, url2, `UPDATE agent_ls_records SET body = replace(body, 'Monday', 'Friday')`)
	cliOK(t, dir2, "memory", "ledger", "--verify")
	cliOK(t, dir2, save...)
}
