package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListAllShowsExpired: memory list --all (and search --all) lists an
// expired record with its state ([expired] in text, its expiresAt in
// JSON), as show and export have it; without --all it is left out. Before,
// the store's search never matched an expired record, so --all, which
// says it lists every record, did not list it.
func TestListAllShowsExpired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	const expired = "01JB0000000000000000000099"
	line := `{"id":"` + expired + `","scope":{},"kind":"fact","content":"the freeze lasts a week","provenance":{"conversationId":"c1"},` +
		`"createdAt":"2026-01-01T10:00:00.000Z","updatedAt":"2026-01-01T10:00:00.000Z","expiresAt":"2026-01-02T10:00:00.000Z"}`
	file := filepath.Join(dir, "expired.jsonl")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, mem(t, dir, db, "import", file, "--actor", "human:ana"), "import")
	live := saveJSON(t, dir, db, "--content", "the freeze is over")
	gone := saveJSON(t, dir, db, "--content", "the freeze starts on Friday")
	mustOK(t, mem(t, dir, db, "invalidate", gone.ID, "--reason", "moved"), "invalidate")

	ids := func(l listing) []string {
		var out []string
		for _, r := range l.Records {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(listJSON(t, dir, db, "list")); strings.Join(got, " ") != live.ID {
		t.Errorf("list = %v, want only the live record %s", got, live.ID)
	}
	all := listJSON(t, dir, db, "list", "--all")
	if got, want := ids(all), []string{gone.ID, live.ID, expired}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("list --all = %v, want %v (the expired record included)", got, want)
	}
	for _, r := range all.Records {
		if r.ID == expired && r.ExpiresAt != "2026-01-02T10:00:00.000Z" {
			t.Errorf("list --all --format json: the expired record has expiresAt %q", r.ExpiresAt)
		}
	}
	if got := ids(listJSON(t, dir, db, "search", "--all", "freeze week")); len(got) == 0 || got[0] != expired {
		t.Errorf("search --all 'freeze week' = %v, want the expired record first", got)
	}
	text := mustOK(t, mem(t, dir, db, "list", "--all"), "list --all").stdout
	for _, want := range []string{"the freeze lasts a week  [expired]", "the freeze starts on Friday  [invalid]", "the freeze is over"} {
		if !strings.Contains(text, want) {
			t.Errorf("list --all does not show %q:\n%s", want, text)
		}
	}
	if help := mustOK(t, mem(t, dir, db, "list", "--help"), "list --help").stdout; !strings.Contains(help, "include invalidated and expired records") {
		t.Errorf("list --help does not say --all lists expired records:\n%s", help)
	}
}

// TestSubcommandHelpStoreDefault: `memory --store X list --help` shows the
// --store default once, the store given before the subcommand, and a
// database URL's password redacted. Before, the flag's usage named the
// workspace default and then the given store (two defaults), the password
// in clear.
func TestSubcommandHelpStoreDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ store, want, never string }{
		{"X", `(default "X")`, ""},
		{"postgres://ana:hunter2@db.example/mem", `(default "postgres://ana:xxxxx@db.example/mem")`, "hunter2"},
	} {
		help := mustOK(t, runBin(t, dir, "", memEnv, "memory", "--store", tc.store, "list", "--help"), "list --help").stdout
		_, line, _ := strings.Cut(help, "  --store file\n")
		line, _, _ = strings.Cut(line, "\n")
		if strings.Count(line, "default") != 1 || !strings.Contains(line, tc.want) {
			t.Errorf("--store %s: list --help shows --store as %q, want one default %s", tc.store, line, tc.want)
		}
		if tc.never != "" && strings.Contains(help, tc.never) {
			t.Errorf("--store %s: list --help shows the password", tc.store)
		}
	}
	// Without --store the one default is the workspace's store.
	help := mustOK(t, runBin(t, dir, "", memEnv, "memory", "list", "--help"), "list --help").stdout
	if _, line, _ := strings.Cut(help, "  --store file\n"); !strings.Contains(line, "(default: the workspace's store") || strings.Count(strings.SplitN(line, "\n", 2)[0], "default") != 1 {
		t.Errorf("list --help without --store shows --store as %q", line)
	}
}

// TestServeProfileRefusesExisting: `serve --memprofile FILE` and
// `--cpuprofile FILE` refuse a FILE that exists and is not empty (exit 2,
// before serving, the file untouched), and a FILE that cannot be created.
// Before, the CPU profile truncated it at start and the heap profile
// overwrote it at exit: a mistyped path destroyed a file.
func TestServeProfileRefusesExisting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	precious := filepath.Join(dir, "notes.txt")
	const text = "three weeks of notes\n"
	if err := os.WriteFile(precious, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flagName := range []string{"--memprofile", "--cpuprofile"} {
		for _, tc := range []struct{ path, want string }{
			{precious, "exists and is not empty"},
			{filepath.Join(dir, "missing", "p.pprof"), "no such file or directory"},
		} {
			r := runBin(t, dir, "", nil, "serve", "--no-watch", flagName, tc.path)
			if r.code != exitUsage || !strings.Contains(r.stderr, flagName[2:]) || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("serve %s %s: exit %d, stderr %q; want exit 2 saying %q", flagName, tc.path, r.code, r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("serve %s %s served: %q", flagName, tc.path, r.stdout)
			}
		}
		if got, err := os.ReadFile(precious); err != nil || string(got) != text {
			t.Fatalf("serve %s changed %s: %q, %v", flagName, precious, got, err)
		}
	}
	// One file for both profiles would hold neither.
	both := filepath.Join(dir, "p.pprof")
	r := runBin(t, dir, "", nil, "serve", "--no-watch", "--memprofile", both, "--cpuprofile", "./p.pprof")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--memprofile and --cpuprofile name one file") {
		t.Errorf("serve with one file for both profiles: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(both); err == nil {
		t.Errorf("serve with one file for both profiles created it")
	}
}

// TestFlagErrorsNameTheFlagOnce: a bad flag value is worded once, by the
// flag, its value shortened: `--since "x": want ...`. Before, the flag
// prefixed the parser's own wording (`--since: since "x": ...`,
// `--poll: storePoll "1ms"`, `--target: target ...`, `--at: time ...`),
// a save's bad --conversation or --run was worded as the store's field
// (`save: invalid request: provenance.runId: ...`), and a 100 KB value
// came back whole.
func TestFlagErrorsNameTheFlagOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	agent := filepath.Join(dir, "my-agent.agent.yaml")
	db := filepath.Join(dir, "m.db")
	rec := saveJSON(t, dir, db, "--content", "the freeze lasts a week")
	huge := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "--store", db, "events", "--since", "x"}, `--since "x": want a duration such as 7d or 1h, or an RFC 3339 time`},
		{[]string{"memory", "--store", db, "ledger", "--since", "x"}, `--since "x": want a duration`},
		{[]string{"memory", "--store", db, "ledger", "--since", huge}, `--since "xxxx`},
		{[]string{"learnings", "--since", "x"}, `--since "x": want a duration`},
		{[]string{"memory", "--store", db, "events", "--follow", "--poll", "1ms"}, `--poll "1ms": at least 100ms, or off`},
		{[]string{"memory", "--store", db, "save", "--target", "judgment.x", "c"}, `--target "judgment.x": want judgment.DOMAIN.SLOT`},
		{[]string{"memory", "--store", db, "list", "--target", "bad"}, `--target "bad": unknown primitive "bad"`},
		{[]string{"memory", "--store", db, "save", "--conversation", "c\x01", "c"}, `--conversation "c\x01": contains a control character (U+0001) at rune 2`},
		{[]string{"memory", "--store", db, "save", "--run", "r\x01", "c"}, `--run: control character U+0001 at byte 1`},
		{[]string{"memory", "--store", db, "save", "--expires", "0s", "c"}, `--expires "0s": not after now`},
		{[]string{"memory", "--store", db, "save", "--expires", "2020-01-01T00:00:00Z", "c"}, `--expires "2020-01-01T00:00:00Z": not after now`},
		{[]string{"memory", "--store", db, "corroborate", rec.ID, "--conversation", "c\x01"}, `--conversation "c\x01": contains a control character`},
		{[]string{"memory", "--store", db, "corroborate", rec.ID, "--conversation", "c", "--run", "r\x01"}, `--run: control character U+0001 at byte 1`},
		{[]string{"render", "--at", "x", agent}, `--at "x": want RFC 3339`},
		{[]string{"diff", "--from", "2026-01-01T00:00:00Z", "--to", "x", agent}, `--to "x": want RFC 3339`},
		{[]string{"mcp", "--conversation", "c\x01", agent}, `--conversation "c\x01": contains a control character`},
		{[]string{"mcp", "--run", "r\x01", agent}, `--run: control character U+0001 at byte 1`},
	} {
		r := runBin(t, dir, "", memEnv, tc.args...)
		name := strings.Join(tc.args, " ")
		if len(name) > 120 {
			name = name[:120] + "..."
		}
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", name, r.code, r.stderr, tc.want)
		}
		if len(r.stderr) > 400 {
			t.Errorf("%s: %d bytes of stderr (the value echoed whole?)", name, len(r.stderr))
		}
		for _, stutter := range []string{": since ", "storePoll", ": target ", "conversation id", "run id", ": time ", "provenance", "save: save:"} {
			if strings.Contains(r.stderr, stutter) {
				t.Errorf("%s: %q words the value twice (%q)", name, r.stderr, stutter)
			}
		}
	}
}

// TestTokenCreateNamesItsFlags: token create words the engine's refusal of
// a spec field with its own flag (--agent, --scope, --name), once, exit 2.
// The engine now words them neutrally (engine.TokenSpecError): it said
// "--name: ..." to every surface, and the CLI's wording depended on it.
func TestTokenCreateNamesItsFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "notes.yaml"}, "agent-ls token create: --agent: " + filepath.Join(dir, "notes.yaml") + " is not an agent file"},
		{[]string{"--agent", "nope.agent.yaml"}, "agent-ls token create: --agent: open "},
		{[]string{"--agent", "my-agent.agent.yaml", "--name", "a\x01"}, "agent-ls token create: --name: contains a control character (U+0001) at rune 2"},
		{[]string{"--agent", "my-agent.agent.yaml", "--scope", "agent=x"}, "agent-ls token create: --scope: the key agent is the token's agent file's"},
	} {
		r := runBin(t, dir, "", memEnv, append([]string{"token", "create"}, tc.args...)...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("token create %q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		if strings.Count(r.stderr, "--") != 1 {
			t.Errorf("token create %q: %q names a flag more than once", tc.args, r.stderr)
		}
	}
}

// TestSaveSupersedesIDChecked: memory save --supersedes and a save-batch
// line's supersedes are ids: a malformed one (white space, an escape
// sequence, 5000 bytes) is a usage error naming the flag or field, exit 2,
// nothing saved, never echoed, as MCP's memory_save and every ID argument
// refuse it (schema.CheckIDArg). Before, "bad id" was answered not_found
// with the text echoed, and an escape or a long one as the store's field
// (`save: invalid request: supersededBy: ...`).
func TestSaveSupersedesIDChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	for _, tc := range []struct{ id, want string }{
		{"bad id", "--supersedes: is not an id: it contains white space (U+0020) at rune 4"},
		{"x\x1b[2J", "--supersedes: is not an id: it contains a control character (U+001B) at rune 2"},
		{strings.Repeat("a", 5000), "--supersedes: is longer than 256 bytes"},
	} {
		r := mem(t, dir, db, "save", "--supersedes", tc.id, "the new rule")
		if r.code != exitUsage || r.stderr != "agent-ls memory save: "+tc.want+"\n" || r.stdout != "" {
			t.Errorf("save --supersedes %.20q: exit %d, stderr %q; want exit 2 and %q", tc.id, r.code, r.stderr, tc.want)
		}
	}
	file := filepath.Join(dir, "batch.jsonl")
	if err := os.WriteFile(file, []byte(`{"content":"the new rule","supersedes":"bad id"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mem(t, dir, db, "save-batch", "--actor", "human:ana", file)
	if want := file + ":1: invalid request: supersedes: is not an id: it contains white space"; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("save-batch with supersedes \"bad id\": exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused save created the store")
	}
}

// TestSaveRefusalWordedOnce: a save the record rules refuse (content over
// the limit, an escape sequence in it) says so once after the command's
// name: `agent-ls memory save: invalid request: content: ...`. The save's
// own "save: " doubled it (`memory save: save: invalid request: ...`).
func TestSaveRefusalWordedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	for _, tc := range []struct{ content, want string }{
		{strings.Repeat("a", 70000), "agent-ls memory save: invalid request: content: 70000 bytes, more than the limit of 65536"},
		{"evil\x1b[2Jtext", "agent-ls memory save: invalid request: content: control character U+001B at byte 4"},
	} {
		r := mem(t, dir, db, "save", "--content", tc.content)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("save %.20q: exit %d, stderr %q; want exit 2 and %q", tc.content, r.code, r.stderr, tc.want)
		}
	}
}
