package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// memEnv pins the default actor for memory command tests.
var memEnv = []string{"USER=tester"}

// mem runs `agent-ls memory --store DB args...` in dir.
func mem(t *testing.T, dir, db string, args ...string) binResult {
	t.Helper()
	return runBin(t, dir, "", memEnv, append([]string{"memory", "--store", db}, args...)...)
}

func mustOK(t *testing.T, r binResult, what string) binResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, r.code, r.stdout, r.stderr)
	}
	return r
}

func decodeJSON[T any](t *testing.T, r binResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("decode JSON output %q: %v", r.stdout, err)
	}
	return v
}

func saveJSON(t *testing.T, dir, db string, args ...string) schema.MemoryRecord {
	t.Helper()
	r := mustOK(t, mem(t, dir, db, append([]string{"--format", "json", "save"}, args...)...), "save")
	res := decodeJSON[engine.SaveResult](t, r)
	if res.Status != engine.SaveSaved || res.Record == nil {
		t.Fatalf("save %v = %+v", args, res)
	}
	return *res.Record
}

func listJSON(t *testing.T, dir, db string, args ...string) listing {
	t.Helper()
	r := mustOK(t, mem(t, dir, db, append([]string{"--format", "json"}, args...)...), strings.Join(args, " "))
	return decodeJSON[listing](t, r)
}

func recIDs(recs []schema.MemoryRecord) string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return strings.Join(ids, ",")
}

func TestMemoryLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	deploy := saveJSON(t, dir, db, "--scope", "project=web,agent=bot", "--target", "background.projectContext.deploy_window",
		"--content", "Deploys go out Tuesdays after 14:00 ET", "--conversation", "c1", "--run", "r1", "--tags", "deploy,schedule")
	if deploy.Scope["project"] != "web" || deploy.Target == nil || deploy.Target.Key != "deploy_window" ||
		deploy.Provenance.ConversationID != "c1" || deploy.Provenance.Author != "human:tester" || len(deploy.Tags) != 2 {
		t.Fatalf("saved record = %+v", deploy)
	}
	dark := saveJSON(t, dir, db, "--kind", "preference", "--actor", "agent:bot", "Prefers", "dark-mode", "in", "the", "editor.")
	if dark.Content != "Prefers dark-mode in the editor." || dark.Provenance.Author != "agent:bot" {
		t.Fatalf("saved record from arguments = %+v", dark)
	}

	// Listing: newest first; scope is a subset filter.
	if got := listJSON(t, dir, db, "list"); recIDs(got.Records) != dark.ID+","+deploy.ID {
		t.Errorf("list = %s, want %s,%s", recIDs(got.Records), dark.ID, deploy.ID)
	}
	if got := listJSON(t, dir, db, "list", "--scope", "project=web"); recIDs(got.Records) != deploy.ID {
		t.Errorf("list --scope project=web = %s, want %s", recIDs(got.Records), deploy.ID)
	}
	if got := listJSON(t, dir, db, "list", "--kind", "preference"); recIDs(got.Records) != dark.ID {
		t.Errorf("list --kind preference = %s", recIDs(got.Records))
	}
	if got := listJSON(t, dir, db, "list", "--tags", "deploy"); recIDs(got.Records) != deploy.ID {
		t.Errorf("list --tags deploy = %s", recIDs(got.Records))
	}
	if got := listJSON(t, dir, db, "list", "--limit", "1"); recIDs(got.Records) != dark.ID {
		t.Errorf("list --limit 1 = %s", recIDs(got.Records))
	}
	for _, tc := range []struct{ query, want string }{
		{"editor", dark.ID},
		{"DARK mode", dark.ID},
		{"tuesdays editor", dark.ID + "," + deploy.ID},
		{"nothing-matches-this", ""},
	} {
		if got := listJSON(t, dir, db, "search", "--query", tc.query); recIDs(got.Records) != tc.want {
			t.Errorf("search %q = %s, want %s", tc.query, recIDs(got.Records), tc.want)
		}
	}
	text := mustOK(t, mem(t, dir, db, "list"), "list").stdout
	if !strings.Contains(text, deploy.ID) || !strings.Contains(text, "background.projectContext.deploy_window") || !strings.Contains(text, "{agent=bot,project=web}") {
		t.Errorf("list text output:\n%s", text)
	}

	// Corroboration counts distinct conversations.
	for _, tc := range []struct {
		conv    string
		counted bool
		convs   int
	}{{"c2", true, 2}, {"c2", false, 2}, {"c1", false, 2}, {"c3", true, 3}} {
		r := mustOK(t, mem(t, dir, db, "--format", "json", "corroborate", deploy.ID, "--conversation", tc.conv), "corroborate")
		got := decodeJSON[struct {
			Counted       bool `json:"counted"`
			Conversations int  `json:"conversations"`
		}](t, r)
		if got.Counted != tc.counted || got.Conversations != tc.convs {
			t.Errorf("corroborate %s = %+v, want counted %v, %d conversations", tc.conv, got, tc.counted, tc.convs)
		}
	}

	// Supersede, then show both sides.
	thu := saveJSON(t, dir, db, "--scope", "project=web,agent=bot", "--target", "background.projectContext.deploy_window",
		"--content", "Deploys go out Thursdays", "--supersedes", deploy.ID)
	r := mustOK(t, mem(t, dir, db, "--format", "json", "show", deploy.ID), "show")
	sh := decodeJSON[shown](t, r)
	if sh.Record.SupersededBy != thu.ID || sh.Record.InvalidAt == "" || len(sh.Record.Supports) != 2 || sh.Promotion == nil || sh.Promotion.Tier != schema.TierAuto {
		t.Errorf("show superseded record = %+v", sh)
	}
	var ops []string
	for _, e := range sh.Ledger {
		ops = append(ops, string(e.Op))
	}
	if strings.Join(ops, ",") != "write,promote,corroborate,corroborate,supersede" {
		t.Errorf("ledger of the record = %v", ops)
	}
	showText := mustOK(t, mem(t, dir, db, "show", deploy.ID), "show").stdout
	for _, want := range []string{"superseded by: " + thu.ID, "learned in:    3 conversations", "promotion:     tier auto", "ledger:        5 entries", "(tier auto)"} {
		if !strings.Contains(showText, want) {
			t.Errorf("show text lacks %q:\n%s", want, showText)
		}
	}
	if got := listJSON(t, dir, db, "list", "--scope", "project=web"); recIDs(got.Records) != thu.ID {
		t.Errorf("list after supersede = %s, want only %s", recIDs(got.Records), thu.ID)
	}

	// Invalidate, twice: the second changes nothing.
	for range 2 {
		mustOK(t, mem(t, dir, db, "invalidate", dark.ID, "--reason", "switched to light"), "invalidate")
	}
	if got := listJSON(t, dir, db, "list"); recIDs(got.Records) != thu.ID {
		t.Errorf("list after invalidate = %s", recIDs(got.Records))
	}
	if got := listJSON(t, dir, db, "list", "--all"); recIDs(got.Records) != thu.ID+","+dark.ID+","+deploy.ID {
		t.Errorf("list --all = %s", recIDs(got.Records))
	}
	entries := decodeJSON[[]store.LedgerEntry](t, mustOK(t, mem(t, dir, db, "--format", "json", "ledger", "--record", dark.ID), "ledger"))
	if len(entries) != 2 || entries[1].Op != store.OpInvalidate || entries[1].Reason != "switched to light" || entries[1].Actor.String() != "human:tester" {
		t.Errorf("ledger --record = %+v", entries)
	}
	all := decodeJSON[[]store.LedgerEntry](t, mustOK(t, mem(t, dir, db, "--format", "json", "ledger"), "ledger"))
	if len(all) != 8 {
		t.Errorf("ledger has %d entries, want 8 (3 writes, 2 auto promotions, 2 corroborations, 1 invalidation)", len(all))
	}
	if got := decodeJSON[[]store.LedgerEntry](t, mustOK(t, mem(t, dir, db, "--format", "json", "ledger", "--since", "1h", "--op", "invalidate"), "ledger")); len(got) != 1 {
		t.Errorf("ledger --since 1h --op invalidate = %d entries, want 1", len(got))
	}
	v := mustOK(t, mem(t, dir, db, "ledger", "--verify"), "ledger --verify")
	if !strings.Contains(v.stdout, "8 entries, hash chain intact") {
		t.Errorf("ledger --verify output %q", v.stdout)
	}
}

func TestMemoryErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	rec := saveJSON(t, dir, db, "--content", "a fact")
	missing := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"show unknown", []string{"show", missing}, 1, "agent-ls memory show: no record " + missing},
		{"invalidate unknown", []string{"invalidate", missing}, 1, "agent-ls memory invalidate: no record " + missing},
		{"corroborate unknown", []string{"corroborate", missing, "--conversation", "c"}, 1, "no record " + missing},
		{"corroborate without conversation", []string{"corroborate", rec.ID}, 2, "--conversation is required"},
		{"supersedes unknown", []string{"save", "--content", "x", "--supersedes", missing}, 1, "agent-ls memory save: no record " + missing},
		{"bad kind", []string{"save", "--kind", "rumour", "--content", "x"}, 2, `--kind "rumour"`},
		{"bad scope", []string{"save", "--scope", "project", "--content", "x"}, 2, "--scope"},
		{"bad target", []string{"save", "--target", "judgment.refunds.nope", "--content", "x"}, 2, "--target"},
		{"bad payload", []string{"save", "--payload", "{", "--content", "x"}, 2, "--payload is not valid JSON"},
		{"bad actor", []string{"save", "--actor", "robot", "--content", "x"}, 2, "--actor"},
		{"no content", []string{"save"}, 2, "no content"},
		{"no query", []string{"search"}, 2, "no query"},
		{"bad format", []string{"--format", "xml", "list"}, 2, "--format"},
		{"unknown flag", []string{"list", "--bogus"}, 2, "--help"},
		{"unknown subcommand", []string{"frobnicate"}, 2, `unknown subcommand "frobnicate"`},
		{"show without id", []string{"show"}, 2, "want one record ID"},
		{"bad since", []string{"ledger", "--since", "yesterday"}, 2, "--since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mem(t, dir, db, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.msg)
			}
			if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); tc.code == 1 && lines != 0 {
				t.Errorf("stderr has %d lines, want one: %q", lines+1, r.stderr)
			}
		})
	}
	if got := listJSON(t, dir, db, "list", "--all"); len(got.Records) != 1 {
		t.Errorf("failed commands changed the store: %d records", len(got.Records))
	}
}

func TestMemoryHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runBin(t, dir, "", nil, "memory", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: agent-ls memory") {
		t.Errorf("memory --help: exit %d, %q", r.code, r.stdout)
	}
	for _, sub := range memorySubs() {
		r := runBin(t, dir, "", nil, "memory", sub.name, "--help")
		// Every subcommand takes --store but migrate (--from and --to).
		if r.code != 0 || !strings.Contains(r.stdout, "Usage: agent-ls memory "+sub.name) || strings.Contains(r.stdout, "-store") != (sub.name != "migrate") {
			t.Errorf("memory %s --help: exit %d, stdout %q, stderr %q", sub.name, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent-memory")); !os.IsNotExist(err) {
		t.Errorf("--help created the store (err %v)", err)
	}
}

func TestMemoryImportExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	a := saveJSON(t, dir, src, "--scope", "project=web", "--content", "first", "--conversation", "c1")
	b := saveJSON(t, dir, src, "--kind", "preference", "--content", "second", "--target", "judgment.code-review.heuristics")
	mustOK(t, mem(t, dir, src, "corroborate", b.ID, "--conversation", "c9"), "corroborate")
	mustOK(t, mem(t, dir, src, "invalidate", a.ID, "--reason", "old"), "invalidate")
	exp := mustOK(t, mem(t, dir, src, "export"), "export").stdout
	if n := strings.Count(exp, "\n"); n != 2 {
		t.Fatalf("export wrote %d lines, want 2:\n%s", n, exp)
	}
	file := filepath.Join(dir, "backup.jsonl")
	if err := os.WriteFile(file, []byte(exp), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst.db")
	r := mustOK(t, mem(t, dir, dst, "import", file, "--actor", "human:ana"), "import")
	if !strings.Contains(r.stdout, "imported 2 records") {
		t.Errorf("import output %q", r.stdout)
	}
	if got := mustOK(t, mem(t, dir, dst, "export"), "export").stdout; got != exp {
		t.Errorf("export after import differs:\n%s\nwant\n%s", got, exp)
	}
	if entries := decodeJSON[[]store.LedgerEntry](t, mustOK(t, mem(t, dir, dst, "--format", "json", "ledger"), "ledger")); len(entries) != 2 || entries[0].Op != store.OpImport || entries[0].Actor.String() != "human:ana" {
		t.Errorf("ledger after import = %+v", entries)
	}
	// Importing the same file again: the first line's id exists.
	r = mem(t, dir, dst, "import", file)
	if r.code != 1 || !strings.Contains(r.stderr, file+":1: record "+a.ID+" already exists") {
		t.Errorf("re-import: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestMemoryImportBadLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `{"id":"01JB0000000000000000000001","scope":{},"kind":"fact","content":"fine","provenance":{},"createdAt":"2026-10-01T10:00:00.000Z","updatedAt":"2026-10-01T10:00:00.000Z"}`
	good2 := strings.Replace(good, "01", "02", 1)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"syntax error", good + "\n\n" + `{"id": "x",, }`, ":3:"},
		{"unknown field", good + "\n" + `{"id":"01JB0000000000000000000003","kind":"fact","content":"x","colour":"red"}`, `:2: invalid request: json: unknown field "colour"`},
		{"bad kind", good + "\n" + good2 + "\n" + strings.Replace(strings.Replace(good, "01", "03", 1), `"fact"`, `"rumour"`, 1), `:3: invalid request: invalid memory record: /kind: must be one of`},
		{"empty content", strings.Replace(good, `"fine"`, `"  "`, 1), ":1: invalid request: content is empty"},
		{"duplicate id", good + "\n" + good, ":2: invalid request: id 01JB0000000000000000000001 repeats line 1"},
		{"bad time", strings.Replace(good, "2026-10-01T10:00:00.000Z", "yesterday", 1), ":1: invalid request: invalid memory record: /createdAt:"},
		{"two values", good + " {}", ":1: invalid request: more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			if err := os.WriteFile(file, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, tc.name+".db")
			r := mem(t, dir, db, "import", file)
			if r.code != exitUsage || !strings.Contains(r.stderr, file+tc.want) {
				t.Errorf("import: exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, file+tc.want)
			}
			if got := listJSON(t, dir, db, "list", "--all"); len(got.Records) != 0 {
				t.Errorf("a failed import stored %d records", len(got.Records))
			}
		})
	}
}

// TestMemoryTamperedLedger edits a ledger entry with raw bbolt: --verify
// exits 1 naming it.
func TestMemoryTamperedLedger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	for i := range 3 {
		saveJSON(t, dir, db, "--content", fmt.Sprintf("fact %d", i))
	}
	raw, err := bbolt.Open(db, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("ledger"))
		k := []byte{0, 0, 0, 0, 0, 0, 0, 2}
		return b.Put(k, []byte(strings.Replace(string(b.Get(k)), "fact 1", "fact one", 1)))
	})
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := mem(t, dir, db, "ledger", "--verify")
	if r.code != 1 || !strings.Contains(r.stderr, "ledger entry 2") {
		t.Errorf("ledger --verify after tampering: exit %d, stderr %q", r.code, r.stderr)
	}
	j := mem(t, dir, db, "--format", "json", "ledger", "--verify")
	if got := decodeJSON[struct {
		OK     bool   `json:"ok"`
		BadSeq uint64 `json:"badSeq"`
	}](t, j); j.code != 1 || got.OK || got.BadSeq != 2 {
		t.Errorf("ledger --verify --format json: exit %d, %+v", j.code, got)
	}
}

func TestMemoryLockedAndCorrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	saveJSON(t, dir, db, "--content", "before")
	raw, err := bbolt.Open(db, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"save", "--content", "while locked"}} {
		r := mem(t, dir, db, append([]string{"--lock-timeout", "100ms"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "store locked") || !strings.Contains(r.stderr, db) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v while locked: exit %d, stderr %q; want exit 2 and one line naming %s", args, r.code, r.stderr, db)
		}
	}
	raw.Close()
	mustOK(t, mem(t, dir, db, "save", "--content", "after"), "save after unlock")

	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, []byte(strings.Repeat("not a database ", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"save", "--content", "x"}, {"export"}} {
		r := mem(t, dir, bad, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "store corrupt") || !strings.Contains(r.stderr, bad) {
			t.Errorf("%v on a corrupt file: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestMemoryWorkspaceStore: without --store the store comes from the nearest
// .agent-ls.yaml (its store: and actor:), or the default path under cwd.
func TestMemoryWorkspaceStore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sub := filepath.Join(root, "agents", "support")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent-ls.yaml"), []byte("store: data/memory.db\nactor: human:lead\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustOK(t, runBin(t, sub, "", memEnv, "memory", "--format", "json", "save", "--content", "from a subdirectory"), "save")
	rec := decodeJSON[engine.SaveResult](t, r).Record
	if rec == nil || rec.Provenance.Author != "human:lead" {
		t.Errorf("saved %+v, want the workspace actor human:lead as author", rec)
	}
	if _, err := os.Stat(filepath.Join(root, "data", "memory.db")); err != nil {
		t.Errorf("store not at the configured path: %v", err)
	}
	other := t.TempDir()
	mustOK(t, runBin(t, other, "", memEnv, "memory", "save", "--content", "no workspace"), "save")
	if _, err := os.Stat(filepath.Join(other, ".agent-memory", "memory.db")); err != nil {
		t.Errorf("store not at the default path: %v", err)
	}
	// An invalid config is reported with its position, not ignored.
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, ".agent-ls.yaml"), []byte("store: x.db\nstoer: y.db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, broken, "", memEnv, "memory", "list"); r.code != 2 || !strings.Contains(r.stderr, ".agent-ls.yaml:2:") {
		t.Errorf("list with an invalid config: exit %d, stderr %q; want exit 2 naming .agent-ls.yaml:2", r.code, r.stderr)
	}
	// A read-only command on a fresh directory creates nothing.
	fresh := t.TempDir()
	if r := mustOK(t, runBin(t, fresh, "", memEnv, "memory", "list"), "list"); r.stdout != "" {
		t.Errorf("list of a missing store printed %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(fresh, ".agent-memory")); !os.IsNotExist(err) {
		t.Errorf("list created the store directory (err %v)", err)
	}
}

// TestMemorySaveReconciles: memory save and invalidate go through the evolve
// engine: tiers apply at save, a second value for a background key is a
// conflict, and an agent cannot retire a guarded learning.
func TestMemorySaveReconciles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	r := mustOK(t, mem(t, dir, db, "--format", "json", "save", "--scope", "project=web", "--target", "background.projectContext.deploy_window", "Deploys go out Tuesdays"), "save")
	first := decodeJSON[engine.SaveResult](t, r)
	if first.State != engine.StatePromoted || first.Tier != schema.TierAuto {
		t.Errorf("auto-tier save = %+v, want promoted", first)
	}
	r = mem(t, dir, db, "save", "--scope", "project=web", "--target", "background.projectContext.deploy_window", "Deploys go out Fridays")
	if r.code != 1 || !strings.Contains(r.stderr, "conflict with "+first.Record.ID) {
		t.Errorf("second value for the key: exit %d, stderr %q; want a conflict naming %s", r.code, r.stderr, first.Record.ID)
	}
	if got := listJSON(t, dir, db, "list", "--all"); len(got.Records) != 1 {
		t.Errorf("a conflicting save wrote: %d records", len(got.Records))
	}
	r = mustOK(t, mem(t, dir, db, "--format", "json", "save", "--actor", "agent:bot", "--scope", "project=web",
		"--target", "judgment.deploy.escalationTriggers", "Ask before deleting any resource in prod"), "save guarded")
	guarded := decodeJSON[engine.SaveResult](t, r)
	if guarded.State != engine.StatePending || guarded.ProposalID == "" {
		t.Fatalf("guarded save = %+v, want pending with a proposal", guarded)
	}
	mustOK(t, runBin(t, dir, "", memEnv, "approve", guarded.ProposalID, "--store", db, "--reason", "yes"), "approve")
	r = mustOK(t, mem(t, dir, db, "invalidate", guarded.Record.ID, "--actor", "agent:bot", "--reason", "not needed"), "agent invalidate")
	if !strings.HasPrefix(r.stdout, "pending: ") {
		t.Errorf("agent invalidating a guarded learning printed %q, want pending", r.stdout)
	}
	if got := listJSON(t, dir, db, "list", "--targeted"); len(got.Records) != 2 {
		t.Errorf("after the agent's invalidate %d targeted records are live, want 2 (the guarded one keeps rendering)", len(got.Records))
	}
	r = mustOK(t, mem(t, dir, db, "invalidate", guarded.Record.ID, "--reason", "not needed"), "human invalidate")
	if !strings.HasPrefix(r.stdout, "invalidated "+guarded.Record.ID) {
		t.Errorf("human invalidate printed %q", r.stdout)
	}
}

// TestSaveRefusesAgentFileAsText: `memory save "text" ops.agent.yaml` (the
// agent file given the way other commands take it) is refused with the
// flag to use, instead of saving the file name into a shared record's
// text; no store is created.
func TestSaveRefusesAgentFileAsText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := runBin(t, dir, "", nil, "init", ".", "--agent", "ops"); r.code != exitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	r := runBin(t, dir, "", nil, "memory", "save", "--conversation", "c1", "--target", "judgment.code-review.heuristics", "Ask for benchmarks", "ops.agent.yaml")
	if r.code != exitUsage || !strings.Contains(r.stderr, `"ops.agent.yaml" looks like an agent file: pass it with --agent ops.agent.yaml`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent-memory", "memory.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused save created the store: %v", err)
	}
	r = runBin(t, dir, "", nil, "memory", "save", "--conversation", "c1", "--agent", "ops.agent.yaml", "--target", "judgment.code-review.heuristics", "Ask for benchmarks")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "saved ") {
		t.Fatalf("with --agent: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMemoryExportFormatFlag: export's help and its --format errors name
// the formats export takes, JSON lines the default. Its help said "text or
// json (default "text")" and a bad value "want text or json", while a bare
// export printed JSON lines and --format jsonl was accepted.
func TestMemoryExportFormatFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	saveJSON(t, dir, db, "--content", "first")
	h := mustOK(t, mem(t, dir, db, "export", "--help"), "export --help").stdout
	if want := "  --format format\n        output format: jsonl, text or json (default \"jsonl\")\n"; !strings.Contains(h, want) {
		t.Errorf("export --help lists --format as\n%s\nwant it to contain %q", h, want)
	}
	r := mem(t, dir, db, "export", "--format", "xml")
	if want := "agent-ls memory export: --format \"xml\": want jsonl, text or json (run 'agent-ls memory export --help')\n"; r.code != exitUsage || r.stderr != want {
		t.Errorf("export --format xml: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	for _, tc := range []struct {
		args []string
		want string // the output's first byte: '{' a JSON line or document, 'I' the listing's header
		doc  bool   // one indented JSON document
	}{
		{[]string{"export"}, "{\"id\":", false},
		{[]string{"export", "--format", "jsonl"}, "{\"id\":", false},
		{[]string{"--format", "jsonl", "export"}, "{\"id\":", false},
		{[]string{"export", "--format", "json"}, "{\n  \"records\"", true},
		{[]string{"--format", "json", "export"}, "{\n  \"records\"", true},
		{[]string{"export", "--format", "text"}, "ID ", false},
	} {
		out := mustOK(t, mem(t, dir, db, tc.args...), strings.Join(tc.args, " ")).stdout
		if !strings.HasPrefix(out, tc.want) {
			t.Errorf("%v: output %q, want it to start with %q", tc.args, out, tc.want)
		}
	}
	// The other subcommands still take text or json only.
	if r := mem(t, dir, db, "list", "--format", "jsonl"); r.code != exitUsage || !strings.Contains(r.stderr, `want text or json`) {
		t.Errorf("list --format jsonl: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestMemorySavePastExpiry: --expires 0s or a past time is an invalid
// request (exit 2) that creates no store; it used to save a record already
// expired ("saved untargeted: it reaches the agent through recall") or,
// on an auto-tier target, fail with "promote ID: promote ID: conflict:
// record ID is invalidated or expired" about a record it rolled back.
func TestMemorySavePastExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	for _, args := range [][]string{
		{"save", "--expires", "0s", "--target", "background.projectContext.k", "a fact"},
		{"save", "--expires", "2000-01-01T00:00:00Z", "an untargeted note"},
		{"save", "--expires", "0d", "--target", "judgment.code-review.heuristics", "a lesson"},
	} {
		r := mem(t, dir, db, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, `--expires "`+args[2]+`": not after now`) || strings.Contains(r.stderr, "promote") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and the expiry refused", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused save created the store")
	}
	if rec := saveJSON(t, dir, db, "--expires", "1h", "--content", "kept an hour"); rec.ExpiresAt == "" {
		t.Errorf("save --expires 1h: no expiresAt in %+v", rec)
	}
}

// TestLockTimeoutMustBePositive: --lock-timeout 0s (meant as "do not
// wait") and negative values were silently the default 2s wait (the
// store's default for an unset timeout). Every command that takes it
// refuses a value that is not positive (exit 2, naming the flag).
func TestLockTimeoutMustBePositive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	for _, args := range [][]string{
		{"memory", "--store", db, "list", "--lock-timeout", "0s"},
		{"memory", "--store", db, "--lock-timeout", "-1s", "list"},
		{"render", "x.agent.yaml", "--lock-timeout", "0"},
		{"serve", "--lock-timeout", "-5s"},
		{"mcp", "x.agent.yaml", "--lock-timeout", "0s"},
	} {
		r := runBin(t, dir, "", memEnv, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--lock-timeout: invalid value") || !strings.Contains(r.stderr, "want a positive duration") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 refusing --lock-timeout", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused command created the store (%v)", err)
	}
}

// TestExpiredRecordMarked: the text listing marks an expired record
// `[expired]` as it marks an invalidated one `[invalid]`: `memory export
// --format text` showed an expired record like a live one (list --all:
// TestListAllShowsExpired).
func TestExpiredRecordMarked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	const id = "01JB0000000000000000000099"
	line := `{"id":"` + id + `","scope":{},"kind":"fact","content":"the freeze lasts a week","provenance":{"conversationId":"c1"},` +
		`"createdAt":"2026-01-01T10:00:00.000Z","updatedAt":"2026-01-01T10:00:00.000Z","expiresAt":"2026-01-02T10:00:00.000Z"}`
	file := filepath.Join(dir, "expired.jsonl")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, mem(t, dir, db, "import", file, "--actor", "human:ana"), "import")
	out := mustOK(t, mem(t, dir, db, "export", "--format", "text"), "export").stdout
	if !strings.Contains(out, "the freeze lasts a week  [expired]") {
		t.Errorf("export --format text does not mark the expired record:\n%s", out)
	}
}
