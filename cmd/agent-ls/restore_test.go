package main

import (
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
)

// TestMemoryRestore: a promoted version superseded by a human comes back
// with `memory restore`: a new record with its content, target and
// supports supersedes the current version and is promoted again; the
// ledger verifies, the supersede entry carries provenance.restoredFrom,
// render --at a time before the restore is byte-equal to before, render now
// shows the restored content. Restoring it again, restoring the current
// version, an agent actor and an unknown id are refused (exit 1 each, as every memory command answers an unknown id) and
// write nothing. An invalidated version with no successor comes back as a
// plain write.
func TestMemoryRestore(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	type saved struct {
		Record struct{ ID string } `json:"record"`
		State  string              `json:"state"`
	}
	var a, b, c saved
	w.cliJSON(&a, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-1", "--run", "run-1",
		"--target", "background.projectContext.carrier", "Parcels ship with DHL")
	if r := w.cli("memory", "corroborate", a.Record.ID, "--conversation", "conv-2"); r.code != 0 {
		t.Fatalf("corroborate: %d %s", r.code, r.stderr)
	}
	w.cliJSON(&b, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-3",
		"--target", "background.projectContext.carrier", "--supersedes", a.Record.ID, "Parcels ship with UPS")
	w.cliJSON(&c, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-4",
		"--target", "background.projectContext.returns", "Returns go to Dock 4")
	if a.State != "promoted" || b.State != "promoted" || c.State != "promoted" {
		t.Fatalf("saves: %+v %+v %+v", a, b, c)
	}
	time.Sleep(20 * time.Millisecond)
	before := schema.FormatTime(time.Now())
	time.Sleep(20 * time.Millisecond)
	renderAt := func() string {
		r := w.cli("render", "deploy.agent.yaml", "--at", before)
		if r.code != 0 {
			t.Fatalf("render --at: %d %s", r.code, r.stderr)
		}
		return r.stdout
	}
	then := renderAt()
	if !strings.Contains(then, "Parcels ship with UPS") || strings.Contains(then, "DHL") {
		t.Fatalf("render before the restore:\n%s", then)
	}
	ledgerLen := func() int {
		var l []ledgerRow
		w.cliJSON(&l, "memory", "ledger")
		return len(l)
	}
	n0 := ledgerLen()

	// Refusals first: they write nothing.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{b.Record.ID}, 1, "is the current version"},
		{[]string{a.Record.ID, "--actor", "agent:deploy-ops"}, 1, "only a human"},
		{[]string{a.Record.ID, "--actor", "system:garden"}, 1, "only a human"},
		{[]string{"01J9Z8K3V4M5N6P7Q8R9S0T1U2"}, 1, "no record 01J9Z8K3V4M5N6P7Q8R9S0T1U2"}, // as every memory command
	} {
		r := w.cli(append([]string{"memory", "restore"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("restore %v: exit %d, want %d and %q\n%s%s", tc.args, r.code, tc.code, tc.want, r.stdout, r.stderr)
		}
	}
	if n := ledgerLen(); n != n0 {
		t.Fatalf("refused restores wrote %d ledger entries", n-n0)
	}

	var res struct {
		Status       string `json:"status"`
		RecordID     string `json:"recordId"`
		RestoredFrom string `json:"restoredFrom"`
		Superseded   string `json:"superseded"`
		WasPromoted  bool   `json:"wasPromoted"`
		Promotion    *struct {
			Status string `json:"status"`
		} `json:"promotion"`
		Record *schema.MemoryRecord `json:"record"`
	}
	r := w.cliJSON(&res, "memory", "restore", a.Record.ID)
	if r.code != 0 || res.RestoredFrom != a.Record.ID || res.Superseded != b.Record.ID || !res.WasPromoted ||
		res.Promotion == nil || res.Promotion.Status != "promoted" || res.Record == nil {
		t.Fatalf("restore: exit %d %+v %s", r.code, res, r.stderr)
	}
	rec := res.Record
	if rec.ID == a.Record.ID || rec.Content != "Parcels ship with DHL" || rec.Target == nil || rec.Target.String() != "background.projectContext.carrier" ||
		rec.Provenance.ConversationID != "conv-1" || rec.Provenance.RunID != "run-1" || rec.Provenance.RestoredFrom != a.Record.ID ||
		rec.DistinctConversations() != 2 {
		t.Errorf("restored record: %+v", rec)
	}
	// The ledger verifies, and the supersede entry that created the
	// restored record carries restoredFrom inside the chain.
	if r := w.cli("memory", "ledger", "--verify"); r.code != 0 {
		t.Fatalf("ledger --verify after restore: %d %s%s", r.code, r.stdout, r.stderr)
	}
	var entries []struct {
		Op       string               `json:"op"`
		RecordID string               `json:"recordId"`
		Record   *schema.MemoryRecord `json:"record"`
	}
	w.cliJSON(&entries, "memory", "ledger", "--record", rec.ID)
	if len(entries) == 0 || entries[0].Op != "supersede" || entries[0].RecordID != b.Record.ID || entries[0].Record == nil ||
		entries[0].Record.Provenance.RestoredFrom != a.Record.ID {
		t.Errorf("ledger of the restored record: %+v", entries)
	}
	if r := w.cli("memory", "ledger"); !strings.Contains(r.stdout, "restored from "+a.Record.ID) {
		t.Errorf("ledger text does not say restored from:\n%s", r.stdout)
	}
	// The past is unchanged; now renders the restored version.
	if got := renderAt(); got != then {
		t.Errorf("render --at %s changed by the restore:\nbefore\n%s\nafter\n%s", before, then, got)
	}
	now := w.cli("render", "deploy.agent.yaml")
	if now.code != 0 || !strings.Contains(now.stdout, "Parcels ship with DHL") || strings.Contains(now.stdout, "UPS") {
		t.Errorf("render after restore: %d\n%s%s", now.code, now.stdout, now.stderr)
	}
	// Again: already current.
	if r := w.cli("memory", "restore", a.Record.ID); r.code != 1 || !strings.Contains(r.stderr, "already the current version") {
		t.Errorf("restore twice: exit %d %s", r.code, r.stderr)
	}

	// An invalidated version with no successor comes back as a write.
	if r := w.cli("memory", "invalidate", c.Record.ID, "--reason", "moved docks"); r.code != 0 {
		t.Fatalf("invalidate: %d %s", r.code, r.stderr)
	}
	if r := w.cli("render", "deploy.agent.yaml"); strings.Contains(r.stdout, "Dock 4") {
		t.Fatalf("invalidated record still renders")
	}
	res.Superseded, res.Record = "", nil
	r = w.cliJSON(&res, "memory", "restore", c.Record.ID)
	if r.code != 0 || res.Superseded != "" || !res.WasPromoted || res.Record == nil || res.Record.Content != "Returns go to Dock 4" {
		t.Fatalf("restore invalidated: exit %d %+v %s", r.code, res, r.stderr)
	}
	if r := w.cli("render", "deploy.agent.yaml"); !strings.Contains(r.stdout, "Returns go to Dock 4") {
		t.Errorf("restored record does not render:\n%s", r.stdout)
	}
	if r := w.cli("memory", "ledger", "--verify"); r.code != 0 {
		t.Fatalf("ledger --verify: %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRestoreReadsTheLedger: whether a retired version was promoted when it
// was retired comes from the ledger itself, not from the ledgerof index
// that finds a record's entries for views. With the index key of its
// demotion removed (the chain still verifies, so the write is not refused),
// restore still brings the version back unpromoted.
func TestRestoreReadsTheLedger(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	var a struct {
		Record struct{ ID string } `json:"record"`
		State  string              `json:"state"`
	}
	w.cliJSON(&a, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-1",
		"--target", "background.projectContext.carrier", "Parcels ship with DHL")
	if a.State != "promoted" {
		t.Fatalf("save: %+v", a)
	}
	wantCode(t, w.cli("demote", a.Record.ID, "--reason", "carrier changed"), 0, "demote")
	wantCode(t, w.cli("memory", "invalidate", a.Record.ID, "--reason", "wrong"), 0, "invalidate")
	bdb, err := bbolt.Open(w.db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	err = bdb.Update(func(tx *bbolt.Tx) error {
		idx, ledger := tx.Bucket([]byte("ledgerof")), tx.Bucket([]byte("ledger"))
		prefix := append([]byte(a.Record.ID), 0)
		var keys [][]byte
		c := idx.Cursor()
		for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
			if strings.Contains(string(ledger.Get(k[len(prefix):])), `"op":"demote"`) {
				keys = append(keys, append([]byte(nil), k...))
			}
		}
		for _, k := range keys {
			if err := idx.Delete(k); err != nil {
				return err
			}
			removed++
		}
		return nil
	})
	bdb.Close()
	if err != nil || removed != 1 {
		t.Fatalf("removing the demotion's index key: %d removed, %v", removed, err)
	}
	var res struct {
		WasPromoted bool `json:"wasPromoted"`
		Promotion   *struct {
			Status string `json:"status"`
		} `json:"promotion"`
	}
	r := w.cliJSON(&res, "memory", "restore", a.Record.ID)
	if r.code != 0 || res.WasPromoted || res.Promotion != nil {
		t.Fatalf("restore with the demotion's index key gone: exit %d, %+v %s; want it back unpromoted", r.code, res, r.stderr)
	}
}

// TestRestoreInvalidatedLine: a version invalidated without a successor
// comes back once. Restoring it again, while the restored copy is current,
// is refused like any version already current (exit 1, nothing written),
// not a second copy colliding with the first on its key. And when another
// record took the key after the invalidation, the restore supersedes that
// record (the restored version is the current one on its slot), so no two
// live records hold the key.
func TestRestoreInvalidatedLine(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	type saved struct {
		Record struct{ ID string } `json:"record"`
		State  string              `json:"state"`
	}
	var a, b saved
	w.cliJSON(&a, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-1",
		"--target", "background.projectContext.dock", "Returns go to Dock 4")
	if r := w.cli("memory", "invalidate", a.Record.ID, "--reason", "moved"); r.code != 0 {
		t.Fatalf("invalidate: %d %s", r.code, r.stderr)
	}
	var res struct {
		Superseded string               `json:"superseded"`
		Record     *schema.MemoryRecord `json:"record"`
	}
	if r := w.cliJSON(&res, "memory", "restore", a.Record.ID); r.code != 0 || res.Record == nil {
		t.Fatalf("restore: %d %s", r.code, r.stderr)
	}
	first := res.Record.ID
	ledgerLen := func() int {
		var l []ledgerRow
		w.cliJSON(&l, "memory", "ledger")
		return len(l)
	}
	n0 := ledgerLen()
	if r := w.cli("memory", "restore", a.Record.ID); r.code != 1 || !strings.Contains(r.stderr, "already the current version") ||
		!strings.Contains(r.stderr, first) {
		t.Errorf("restore twice: exit %d, want 1 naming %s\n%s%s", r.code, first, r.stdout, r.stderr)
	}
	if n := ledgerLen(); n != n0 {
		t.Errorf("the refused restore wrote %d ledger entries", n-n0)
	}

	// Another record takes a freed key; restoring the old version
	// supersedes it.
	var c saved
	w.cliJSON(&c, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-1",
		"--target", "background.projectContext.gate", "Deploys leave from gate A")
	if r := w.cli("memory", "invalidate", c.Record.ID, "--reason", "moved"); r.code != 0 {
		t.Fatalf("invalidate: %d %s", r.code, r.stderr)
	}
	w.cliJSON(&b, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "conv-2",
		"--target", "background.projectContext.gate", "Deploys leave from gate B")
	if b.State != "promoted" {
		t.Fatalf("save on the freed key: %+v", b)
	}
	res.Superseded, res.Record = "", nil
	if r := w.cliJSON(&res, "memory", "restore", c.Record.ID); r.code != 0 || res.Superseded != b.Record.ID || res.Record == nil {
		t.Fatalf("restore over a new holder: exit %d, superseded %q (want %s) %s", r.code, res.Superseded, b.Record.ID, r.stderr)
	}
	var live struct{ Records []struct{ ID string } }
	w.cliJSON(&live, "memory", "list", "--target", "background.projectContext.gate")
	if len(live.Records) != 1 || live.Records[0].ID != res.Record.ID {
		t.Errorf("live records on the key after the restore: %+v, want only %s", live.Records, res.Record.ID)
	}
	if r := w.cli("render", "deploy.agent.yaml"); !strings.Contains(r.stdout, "gate A") || strings.Contains(r.stdout, "gate B") {
		t.Errorf("render after the restore:\n%s", r.stdout)
	}
	if r := w.cli("memory", "ledger", "--verify"); r.code != 0 {
		t.Fatalf("ledger --verify: %d %s%s", r.code, r.stdout, r.stderr)
	}
}
