package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// trustSeed is what TestAgentActorThroughCLI seeds: agent A (deploy-ops)
// and agent B (code-reviewer) in one store.
type trustSeed struct {
	aCandidate, aGuarded, aPendingProposal string // A: an earned candidate, a promoted guarded record, a pending proposal
	bAuto, bCandidate, bProposal           string // B: a promoted auto record, an earned candidate, a pending proposal
	bContent                               []string
}

func seedTrust(t *testing.T, w *evoWorkspace) trustSeed {
	t.Helper()
	ctx := context.Background()
	a, b := w.engine("deploy-ops", nil), w.engine("code-reviewer", nil)
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	var s trustSeed
	s.aCandidate = w.save(a, "Pause the rollout when the worker queue depth doubles", "judgment.deploy.heuristics", "conv-a1", "").Record.ID
	g := w.save(a, "Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-a2", "")
	if _, err := a.Approve(ctx, g.ProposalID, human, "yes"); err != nil {
		t.Fatal(err)
	}
	s.aGuarded = g.Record.ID
	s.aPendingProposal = w.save(a, "Page the on-call when a rollback fails twice", "judgment.deploy.escalationTriggers", "conv-a3", "").ProposalID
	s.bContent = []string{"Reviews happen in the monorepo zebra", "Flag quadruple nested closures", "Escalate when a reviewer finds leaked credentials"}
	s.bAuto = w.save(b, s.bContent[0], "background.projectContext.repo", "conv-b1", "").Record.ID
	s.bCandidate = w.save(b, s.bContent[1], "judgment.code-review.heuristics", "conv-b2", "").Record.ID
	s.bProposal = w.save(b, s.bContent[2], "judgment.code-review.escalationTriggers", "conv-b3", "").ProposalID
	if s.aPendingProposal == "" || s.bProposal == "" {
		t.Fatalf("seed: %+v", s)
	}
	return s
}

// bState is agent B's records, promotions and proposals as stored.
func bState(t *testing.T, db string) string {
	t.Helper()
	st, err := bolt.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	res, err := st.Search(ctx, store.Query{Scope: map[string]string{store.AgentKey: "code-reviewer"}, IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	prom, err := st.Promoted(ctx, map[string]string{"project": "atlas"}, "code-reviewer")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Proposals(ctx, store.ProposalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range res.Records {
		ids[r.ID] = true
	}
	var bps []store.Proposal
	for _, p := range ps {
		if ids[p.RecordID] {
			bps = append(bps, p)
		}
	}
	data, _ := json.Marshal([]any{res.Records, prom, bps})
	return string(data)
}

// TestAgentActorThroughCLI drives an agent: actor through every CLI command
// that reads or writes records, with the actor from --actor and from the
// workspace's `actor:` (the environment only ever gives human:$USER). The
// agent never approves or rejects, never promotes past a gate, never
// demotes or retires a guarded record, never deletes, and never reads or
// touches another agent's records: B's ids and content never appear in its
// output, B's id answers "not found" like a missing one, and B's stored
// state is byte-identical afterwards.
func TestAgentActorThroughCLI(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"flag", "config"} {
		t.Run(source, func(t *testing.T) {
			t.Parallel()
			extra := ""
			if source == "config" {
				extra = "actor: agent:deploy-ops\n"
			}
			w := newEvoWorkspace(t, extra)
			s := seedTrust(t, w)
			before := bState(t, w.db)
			asAgent := func(args ...string) []string {
				if source == "flag" {
					return append(args, "--actor", "agent:deploy-ops")
				}
				return args
			}
			foreignLine := filepath.Join(w.dir, "foreign.jsonl")
			foreign := `{"id":"01JZZZZZZZZZZZZZZZZZZZZZZZ","scope":{"project":"atlas","agent":"code-reviewer"},"kind":"fact","content":"planted","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}` + "\n"
			if err := os.WriteFile(foreignLine, []byte(foreign), 0o600); err != nil {
				t.Fatal(err)
			}
			ownLine := filepath.Join(w.dir, "own.jsonl")
			own := `{"id":"01JZZZZZZZZZZZZZZZZZZZZZZY","scope":{"project":"atlas","agent":"deploy-ops"},"kind":"fact","content":"forged","supports":[{"conversationId":"c1","at":"2026-01-01T00:00:00.000Z"},{"conversationId":"c2","at":"2026-01-01T00:00:00.000Z"}],"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}` + "\n"
			if err := os.WriteFile(ownLine, []byte(own), 0o600); err != nil {
				t.Fatal(err)
			}
			const missing = "01JYYYYYYYYYYYYYYYYYYYYYYY"
			rows := []struct {
				name   string
				args   []string
				code   int
				stderr string // a substring stderr must hold ("" = no check)
				stdout string // a substring stdout must hold
			}{
				{"approve own proposal", asAgent("approve", s.aPendingProposal), exitFindings, "only a human", ""},
				{"reject own proposal", asAgent("reject", s.aPendingProposal, "--reason", "no"), exitFindings, "only a human", ""},
				{"approve B's proposal", asAgent("approve", s.bProposal), exitFindings, "no proposal " + s.bProposal + "\n", ""},
				{"approve a missing proposal", asAgent("approve", missing), exitFindings, "no proposal " + missing + "\n", ""},
				{"reject B's proposal", asAgent("reject", s.bProposal, "--reason", "no"), exitFindings, "no proposal " + s.bProposal + "\n", ""},
				{"reject a missing proposal", asAgent("reject", missing, "--reason", "no"), exitFindings, "no proposal " + missing + "\n", ""},
				{"promote own earned candidate (1 conversation)", asAgent("promote", s.aCandidate), exitFindings, "", "blocked"},
				{"promote B's candidate", asAgent("promote", s.bCandidate), exitFindings, "no record ", ""},
				{"promote a missing id", asAgent("promote", missing), exitFindings, "no record ", ""},
				{"demote own guarded record", asAgent("demote", s.aGuarded, "--reason", "slow"), exitOK, "", "pending"},
				{"demote B's record", asAgent("demote", s.bAuto, "--reason", "x"), exitFindings, "no record ", ""},
				{"invalidate own guarded record", asAgent("memory", "invalidate", s.aGuarded, "--reason", "x"), exitOK, "", "pending"},
				{"invalidate B's record", asAgent("memory", "invalidate", s.bAuto, "--reason", "x"), exitFindings, "no record " + s.bAuto, ""},
				{"corroborate B's record", asAgent("memory", "corroborate", s.bCandidate, "--conversation", "conv-x"), exitFindings, "no record " + s.bCandidate, ""},
				{"show B's record", asAgent("memory", "show", s.bAuto), exitFindings, "no record " + s.bAuto, ""},
				{"show a missing record", asAgent("memory", "show", missing), exitFindings, "no record " + missing, ""},
				{"show own record", asAgent("memory", "show", s.aGuarded), exitOK, "", s.aGuarded},
				{"list", asAgent("memory", "list", "--all"), exitOK, "", s.aCandidate},
				{"list --format json", asAgent("memory", "--format", "json", "list", "--all", "--limit", "2"), exitOK, "", `"records"`},
				{"search B's words", asAgent("memory", "search", "--query", "zebra quadruple credentials deploy"), exitOK, "", ""},
				{"export", asAgent("memory", "export"), exitOK, "", s.aGuarded},
				{"ledger", asAgent("memory", "ledger"), exitOK, "", s.aGuarded},
				{"ledger --record B's id", asAgent("memory", "ledger", "--record", s.bAuto), exitOK, "", ""},
				{"ledger --verify", asAgent("memory", "ledger", "--verify"), exitOK, "", "hash chain intact"},
				{"save into B's scope", asAgent("memory", "save", "--scope", "project=atlas,agent=code-reviewer", "--target", "background.projectContext.repo", "planted"), exitFindings, "cannot act on or read agent \"code-reviewer\"", ""},
				{"save with B's agent file", asAgent("memory", "save", "--agent", "code-review.agent.yaml", "--target", "background.projectContext.repo", "planted"), exitFindings, "cannot act on or read", ""},
				{"save superseding B's record", asAgent("memory", "save", "--target", "background.projectContext.repo", "--supersedes", s.bAuto, "planted"), exitFindings, "no record " + s.bAuto + " to supersede", ""},
				{"import a record of B", asAgent("memory", "import", foreignLine), exitFindings, "import is a human operation", ""},
				{"import a record of its own", asAgent("memory", "import", ownLine), exitFindings, "import is a human operation", ""},
				{"delete (no such command)", asAgent("memory", "delete", s.bAuto), exitUsage, "unknown subcommand", ""},
				{"proposals", asAgent("proposals"), exitOK, "", s.aPendingProposal},
				{"proposals --scope agent=B", asAgent("proposals", "--scope", "project=atlas,agent=code-reviewer"), exitFindings, "cannot act on or read", ""},
				{"garden", asAgent("garden"), exitOK, "", "agent deploy-ops"},
				{"learnings", asAgent("learnings", "--since", "30d"), exitOK, "", s.aGuarded},
				{"learnings --agent B's file", asAgent("learnings", "--agent", "code-review.agent.yaml"), exitFindings, "cannot act on or read", ""},
				{"render own agent", asAgent("render", "deploy.agent.yaml", "--annotate"), exitOK, "", "Ask before deleting any resource in prod"},
				{"render B's agent", asAgent("render", "code-review.agent.yaml"), exitFindings, "cannot act on or read agent \"code-reviewer\"", ""},
				{"overlay B's agent", asAgent("overlay", "code-review.agent.yaml"), exitFindings, "cannot act on or read", ""},
				{"overlay own agent", asAgent("overlay", "deploy.agent.yaml"), exitOK, "", "deploy-ops"},
				{"diff own agent --with B's record", asAgent("diff", "deploy.agent.yaml", "--with", s.bAuto), exitFindings, "no record ", ""},
				{"diff B's agent", asAgent("diff", "code-review.agent.yaml", "--without", s.bAuto), exitFindings, "cannot act on or read", ""},
				{"retarget B's record", asAgent("memory", "retarget", s.bAuto, "background.projectContext.other"), exitFindings, "no record " + s.bAuto, ""},
				// The invalidate row above left a pending demotion of aGuarded:
				// a supersede waits for that decision (issue 19 item 8).
				{"retarget own guarded record while its invalidation is pending", asAgent("memory", "retarget", s.aGuarded, "judgment.incident.escalationTriggers"), exitFindings, "already pending", ""},
			}
			bMarks := append([]string{s.bAuto, s.bCandidate, s.bProposal, "code-reviewer", "planted"}, s.bContent...)
			for _, row := range rows {
				r := w.cli(row.args...)
				if r.code != row.code {
					t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", row.name, r.code, row.code, r.stdout, r.stderr)
					continue
				}
				if !strings.Contains(r.stderr, row.stderr) || !strings.Contains(r.stdout, row.stdout) {
					t.Errorf("%s: stdout %q, stderr %q; want stdout holding %q, stderr %q", row.name, r.stdout, r.stderr, row.stdout, row.stderr)
				}
				for _, m := range bMarks {
					if strings.Contains(r.stdout, m) {
						t.Errorf("%s: agent A's output shows agent B's %q:\n%s", row.name, m, r.stdout)
					}
					// An error names at most the id the command was given (B's
					// agent name may come from B's file, which A named).
					isID := m == s.bAuto || m == s.bCandidate || m == s.bProposal
					if isID && strings.Contains(r.stderr, m) && !slices.Contains(row.args, m) {
						t.Errorf("%s: agent A's error shows agent B's %q:\n%s", row.name, m, r.stderr)
					}
				}
				if r.code != exitOK && strings.Count(r.stderr, "\n") > 2 {
					t.Errorf("%s: stderr is not a short message: %q", row.name, r.stderr)
				}
			}
			if after := bState(t, w.db); after != before {
				t.Errorf("agent A changed agent B's records, promotions or proposals\nbefore %s\nafter  %s", before, after)
			}
			checkAgentLedger(t, w, s)
			// The same commands as a human see B (the confinement is the actor's, not the data's).
			if r := w.cli("memory", "show", s.bAuto, "--actor", "human:ana"); r.code != exitOK || !strings.Contains(r.stdout, s.bContent[0]) {
				t.Errorf("human show of B's record: exit %d, %q", r.code, r.stdout)
			}
		})
	}
}

// checkAgentLedger: no entry by the agent approves, rejects, deletes, or
// touches B's records; A's guarded record is still promoted and valid.
func checkAgentLedger(t *testing.T, w *evoWorkspace, s trustSeed) {
	t.Helper()
	st, err := bolt.Open(w.db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	entries, err := st.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	agent := store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	for _, e := range entries {
		if e.Actor != agent {
			continue
		}
		switch e.Op {
		case store.OpApprove, store.OpReject, store.OpDelete, store.OpDemote, store.OpImport:
			t.Errorf("ledger entry %d: the agent did %s", e.Seq, e.Op)
		}
		if e.Op == store.OpPromote {
			t.Errorf("ledger entry %d: the agent promoted %s", e.Seq, e.RecordID)
		}
		if rec, err := st.Get(ctx, e.RecordID); err == nil && rec.Scope[store.AgentKey] == "code-reviewer" {
			t.Errorf("ledger entry %d: the agent's %s touched B's record %s", e.Seq, e.Op, e.RecordID)
		}
	}
	if _, err := st.Promotion(ctx, s.aGuarded); err != nil {
		t.Errorf("A's guarded record lost its promotion: %v", err)
	}
	if rec, err := st.Get(ctx, s.aGuarded); err != nil || rec.InvalidAt != "" {
		t.Errorf("A's guarded record was retired by the agent: %+v %v", rec, err)
	}
	if _, err := st.Promotion(ctx, s.aCandidate); err == nil {
		t.Error("A's earned candidate was promoted past its gate")
	}
	if ps, _ := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalApproved}); len(ps) != 1 {
		t.Errorf("approved proposals: %d, want only the seed's human approval", len(ps))
	}
}

// TestLedgerVerifyThroughCLI: `memory ledger --verify` on a real bbolt file
// exits 0 on a clean chain and 1 naming the entry when one is edited,
// removed (in the middle or the newest), or two are swapped (reordered),
// in text and JSON.
func TestLedgerVerifyThroughCLI(t *testing.T) {
	t.Parallel()
	seq := func(n uint64) []byte { return []byte{0, 0, 0, 0, 0, 0, 0, byte(n)} }
	tests := []struct {
		name   string
		tamper func(b *bbolt.Bucket) error
		bad    uint64 // 0: clean
	}{
		{"clean", nil, 0},
		{"edited", func(b *bbolt.Bucket) error {
			return b.Put(seq(3), []byte(strings.Replace(string(b.Get(seq(3))), "fact 3", "fact three", 1)))
		}, 3},
		{"removed", func(b *bbolt.Bucket) error { return b.Delete(seq(2)) }, 2},
		{"newest removed", func(b *bbolt.Bucket) error { return b.Delete(seq(4)) }, 4},
		{"reordered", func(b *bbolt.Bucket) error {
			two, three := append([]byte(nil), b.Get(seq(2))...), append([]byte(nil), b.Get(seq(3))...)
			if err := b.Put(seq(2), three); err != nil {
				return err
			}
			return b.Put(seq(3), two)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "mem.db")
			for i := range 4 {
				saveJSON(t, dir, db, "--content", fmt.Sprintf("fact %d", i+1))
			}
			if tt.tamper != nil {
				raw, err := bbolt.Open(db, 0o600, &bbolt.Options{Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				err = raw.Update(func(tx *bbolt.Tx) error { return tt.tamper(tx.Bucket([]byte("ledger"))) })
				raw.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			r := mem(t, dir, db, "ledger", "--verify")
			j := mem(t, dir, db, "--format", "json", "ledger", "--verify")
			got := decodeJSON[struct {
				OK     bool   `json:"ok"`
				BadSeq uint64 `json:"badSeq"`
			}](t, j)
			if tt.bad == 0 {
				if r.code != 0 || !strings.Contains(r.stdout, "ledger ok: 4 entries") || j.code != 0 || !got.OK {
					t.Errorf("clean ledger: exit %d %q %q; json exit %d %+v", r.code, r.stdout, r.stderr, j.code, got)
				}
				return
			}
			want := fmt.Sprintf("ledger entry %d", tt.bad)
			if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("--verify: exit %d, stderr %q; want exit 1 and one line naming %q", r.code, r.stderr, want)
			}
			if j.code != 1 || got.OK || got.BadSeq != tt.bad {
				t.Errorf("--verify --format json: exit %d, %+v; want exit 1, badSeq %d", j.code, got, tt.bad)
			}
		})
	}
}

// corruptStore builds a store of n records through `memory import` and
// returns its path, the records, and the path of the JSONL it imported.
func corruptStore(t *testing.T, dir string, n int) (string, map[string]schema.MemoryRecord) {
	t.Helper()
	db := filepath.Join(dir, "mem.db")
	var b strings.Builder
	want := map[string]schema.MemoryRecord{}
	for i := range n {
		r := schema.MemoryRecord{ID: fmt.Sprintf("01K%023d", i+1), Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact,
			Content:   fmt.Sprintf("salvage record number %05d %s", i, strings.Repeat("x", 200)),
			CreatedAt: "2026-01-01T00:00:00.000Z", UpdatedAt: "2026-01-01T00:00:00.000Z"}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
		want[r.ID] = r
	}
	jl := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(jl, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, mem(t, dir, db, "import", jl), "import")
	return db, want
}

// TestCorruptStoreThroughCLI: on a truncated file and on one with damaged
// data pages (not "not a database": there is something to salvage),
// `memory export` hands over every record the library's salvage reads,
// each byte-identical to what was imported, and says it is a salvage
// (exit 2, "store corrupt" naming the file); every other command that
// touches the store fails with exit 2 naming the file, and no command
// changes a byte of the file (checksum before and after each). With four
// record leaves scrambled whole, every writing command fails with the page
// check's error naming the damaged page, and reads may answer from the
// intact pages.
func TestCorruptStoreThroughCLI(t *testing.T) {
	t.Parallel()
	ps := os.Getpagesize()
	damages := []struct {
		name   string
		damage func(t *testing.T, path string) func(off int) bool // returns: is byte offset off damaged/lost
	}{
		{"truncated", func(t *testing.T, path string) func(int) bool {
			// Cut inside the pages in use (bbolt's file has slack past its
			// high water mark, which a cut there would not damage).
			cut := inUse(t, path) * 3 / 4
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			return func(off int) bool { return int64(off) >= cut }
		}},
		{"damaged pages", func(t *testing.T, path string) func(int) bool {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pages := int(inUse(t, path)) / ps
			bad := map[int]bool{}
			for _, p := range []int{pages / 3, pages / 2, pages/2 + 1, 2 * pages / 3} {
				bad[p] = true
				for i := range 64 {
					data[p*ps+i] = 0xA5 ^ byte(i)
				}
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return func(off int) bool { return bad[off/ps] }
		}},
		// Four leaves of the records bucket in the tree's middle, scrambled
		// whole: commands that do not read them (show of the first record,
		// writes appending at the end) would see an intact store. Writing
		// commands must still refuse: the store checks the page tree.
		{"scrambled record leaves", func(t *testing.T, path string) func(int) bool {
			bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var root int
			_ = bdb.View(func(tx *bbolt.Tx) error { root = int(tx.Bucket([]byte("records")).Root()); return nil })
			if err := bdb.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			page := data[root*ps : (root+1)*ps]
			if count := int(binary.LittleEndian.Uint16(page[10:])); page[8] != 0x01 || count < 7 {
				t.Fatalf("records root page %d: flags %#x, %d children; want a branch of at least 7", root, page[8], count)
			}
			bad := map[int]bool{}
			for i := 2; i <= 5; i++ {
				// Branch elements follow the 16-byte header: pos, ksize u32, pgid u64.
				child := int(binary.LittleEndian.Uint64(page[16+i*16+8:]))
				bad[child] = true
				for j := range ps {
					data[child*ps+j] = byte(j*131+child*7) ^ 0x5A
				}
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return func(off int) bool { return bad[off/ps] }
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			w := newEvoWorkspace(t, "store: mem.db\n")
			db, want := corruptStore(t, w.dir, 300)
			orig, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			lost := d.damage(t, db)
			data, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)

			// The library's salvage of a copy is the reference.
			cp := filepath.Join(t.TempDir(), "copy.db")
			if err := os.WriteFile(cp, data, 0o600); err != nil {
				t.Fatal(err)
			}
			lib := map[string]bool{}
			st, err := bolt.Open(cp, store.Options{ReadOnly: true})
			if err == nil {
				_, _ = st.Export(context.Background(), func(r schema.MemoryRecord) error { lib[r.ID] = true; return nil })
				st.Close()
			}

			r := w.cli("memory", "export")
			if r.code != exitUsage || !strings.Contains(r.stderr, "store corrupt") || !strings.Contains(r.stderr, db) || !strings.Contains(r.stderr, "salvaged") {
				t.Errorf("export: exit %d, stderr %q; want exit 2, store corrupt naming %s, salvaged", r.code, r.stderr, db)
			}
			got := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if line == "" {
					continue
				}
				var rec schema.MemoryRecord
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("export line %q: %v", line, err)
				}
				w, ok := want[rec.ID]
				if !ok || w.Content != rec.Content || w.CreatedAt != rec.CreatedAt || engine.FormatScope(w.Scope) != engine.FormatScope(rec.Scope) {
					t.Errorf("salvaged %+v, imported %+v", rec, w)
				}
				got[rec.ID] = true
			}
			// Every record all of whose copies in the file as it was (the record's
			// own value and the ledger entry that carries it) lie in parts the
			// damage left intact is salvaged.
			intact := 0
			var missed []string
			for id, rec := range want {
				ok, text := true, string(orig)
				for from := 0; ; {
					i := strings.Index(text[from:], rec.Content)
					if i < 0 {
						break
					}
					off := from + i
					ok = ok && !lost(off) && !lost(off+len(rec.Content)-1)
					from = off + len(rec.Content)
				}
				if !ok || !strings.Contains(text, rec.Content) {
					continue
				}
				intact++
				if !got[id] {
					missed = append(missed, id)
				}
			}
			if len(missed) > 0 {
				t.Errorf("%d record(s) lie intact in the file but export did not salvage them, e.g. %s", len(missed), missed[0])
			}
			if len(got) != len(lib) || len(got) == 0 {
				t.Errorf("CLI export salvaged %d records, the library %d", len(got), len(lib))
			}
			t.Logf("%s: salvaged %d of %d records (%d intact in the file)", d.name, len(got), len(want), intact)

			// No command writes to the corrupt file.
			anyID := "01K00000000000000000000001"
			cmds := [][]string{
				{"memory", "list"}, {"memory", "show", anyID}, {"memory", "search", "salvage"}, {"memory", "export"},
				{"memory", "ledger"}, {"memory", "ledger", "--verify"},
				{"memory", "save", "--content", "new fact"}, {"memory", "save", "--target", "background.projectContext.a", "--agent", "deploy.agent.yaml", "a value"},
				{"memory", "invalidate", anyID}, {"memory", "corroborate", anyID, "--conversation", "c9"},
				{"memory", "retarget", anyID, "judgment.deploy.heuristics"},
				{"memory", "import", filepath.Join(w.dir, "in.jsonl")},
				{"promote", anyID}, {"demote", anyID, "--reason", "x"}, {"approve", anyID}, {"reject", anyID, "--reason", "x"},
				{"proposals"}, {"garden"}, {"learnings"},
				{"render", "deploy.agent.yaml"}, {"render", "deploy.agent.yaml", "--summarize"}, {"overlay", "deploy.agent.yaml"},
				{"diff", "deploy.agent.yaml", "--without", anyID},
				{"lint", "deploy.agent.yaml"},
			}
			writesTop := map[string]bool{"promote": true, "demote": true, "approve": true, "reject": true}
			for _, args := range cmds {
				r := w.cli(args...)
				composes := args[0] == "lint" || args[0] == "overlay" || args[0] == "diff" || (args[0] == "render" && len(args) == 2)
				writes := map[string]bool{"save": true, "invalidate": true, "corroborate": true, "retarget": true, "import": true,
					"promote": true, "demote": true, "approve": true, "reject": true}[args[min(1, len(args)-1)]] || writesTop[args[0]]
				switch {
				case d.name == "scrambled record leaves" && !writes:
					// A read of intact pages may answer; it must not write.
					t.Logf("%v on scrambled record leaves: exit %d %s", args, r.code, strings.TrimSpace(r.stderr))
				case d.name == "scrambled record leaves" && !strings.Contains(r.stderr, "(from page "):
					// The store's page-tree check refuses before bbolt reads a page.
					t.Errorf("%v: exit %d, stderr %q; want the page check's error naming the damaged page", args, r.code, r.stderr)
				case composes && d.name == "damaged pages":
					// Composing reads only the promoted records; with their pages intact it
					// may succeed (lint then has nothing to warn about). It must not write.
					t.Logf("%v on damaged pages: exit %d %s", args, r.code, strings.TrimSpace(r.stderr))
				case args[0] == "lint":
					if r.code != exitOK || !strings.Contains(r.stdout+r.stderr, "corrupt") {
						t.Errorf("%v: exit %d, out %q %q; want exit 0 with a corrupt-store warning", args, r.code, r.stdout, r.stderr)
					}
				case r.code != exitUsage || !strings.Contains(r.stderr, "store corrupt") || !strings.Contains(r.stderr, db):
					t.Errorf("%v: exit %d, stderr %q; want exit 2, store corrupt naming the file", args, r.code, r.stderr)
				}
				now, err := os.ReadFile(db)
				if err != nil {
					t.Fatal(err)
				}
				if sha256.Sum256(now) != sum {
					t.Fatalf("%v wrote to the corrupt file", args)
				}
			}
		})
	}
}

// inUse is the byte size of the pages a bbolt file's meta page says are in
// use (its high water mark), which may be less than the file's size.
func inUse(t *testing.T, path string) int64 {
	t.Helper()
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var n int64
	_ = bdb.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// TestUserActorChecked: with no --actor and no actor: in the config, a
// $USER that --actor would refuse (an escape sequence) is refused too,
// before any store is created, and the refusal does not echo it. It was
// taken as the actor's name: `memory ledger` then printed the escape
// sequence raw on every entry the user made.
func TestUserActorChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evil := []string{"USER=ev\x1b[2Jil"}
	for _, args := range [][]string{
		{"memory", "save", "--target", "background.projectContext.k", "a fact"},
		{"memory", "list"},
	} {
		r := runBin(t, dir, "", evil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "$USER: actor name: contains a control character (U+001B)") || strings.Contains(r.stdout+r.stderr, "\x1b") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and $USER refused without echoing it", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent-memory")); err == nil {
		t.Error("a refused save created the store")
	}
	// --actor still works with such a USER.
	if r := runBin(t, dir, "", evil, "memory", "save", "--actor", "human:ana", "--target", "background.projectContext.k", "a fact"); r.code != exitOK {
		t.Errorf("save --actor human:ana: exit %d, stderr %q", r.code, r.stderr)
	}
}
