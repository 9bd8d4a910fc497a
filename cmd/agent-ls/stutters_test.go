package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/agent-ls/agent-ls/mcp"
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
		// A retarget is a save underneath: its answer says to try again, not to save.
		{w.dir, agent("memory", "retarget", s.aGuarded, "judgment.incident.escalationTriggers"), "memory retarget: conflict"},
	} {
		r := runBin(t, tc.dir, "", []string{"USER=ana"}, tc.args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		for _, stutter := range []string{"not_found", "conflict: conflict", "with " + s.aGuarded + ": conflict", "save: save:", "retarget: conflict: conflict", "save again"} {
			if strings.Contains(r.stderr, stutter) {
				t.Errorf("%v: %q says %q", tc.args, r.stderr, stutter)
			}
		}
	}
}

// TestMigrateWordedOnce: a migration into a store that is not empty is
// refused naming the destination once (it said "refused: copy: load into
// PATH: conflict: the destination is not empty"), and --store, which
// memory migrate does not take (--from and --to name its stores), is a
// usage error naming the flag, not silently ignored; its help lists no
// --store.
func TestMigrateWordedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	src := filepath.Join(dir, "src.db")
	saveJSON(t, dir, src, "--content", "the freeze lasts a week")
	dst := filepath.Join(dir, "dst.db")
	mustOK(t, runBin(t, dir, "", memEnv, "memory", "migrate", "--from", src, "--to", dst), "migrate")
	r := runBin(t, dir, "", memEnv, "memory", "migrate", "--from", src, "--to", dst)
	want := "agent-ls memory migrate: refused: the destination " + dst + " is not empty: migrate into a new or empty store\n"
	if r.code != exitFindings || r.stderr != want {
		t.Errorf("migrate into a full store: exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	other := filepath.Join(dir, "other.db")
	for _, args := range [][]string{
		{"memory", "migrate", "--store", other, "--from", src, "--to", filepath.Join(dir, "new1.db")},
		{"memory", "--store", other, "migrate", "--from", src, "--to", filepath.Join(dir, "new2.db")},
	} {
		r := runBin(t, dir, "", memEnv, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--store") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming --store", args, r.code, r.stderr)
		}
		if _, err := os.Stat(args[len(args)-1]); err == nil {
			t.Errorf("%v: the migration ran", args)
		}
	}
	if r := runBin(t, dir, "", memEnv, "memory", "migrate", "--help"); r.code != exitOK || strings.Contains(r.stdout, "--store") {
		t.Errorf("migrate --help: exit %d, lists --store:\n%s", r.code, r.stdout)
	}
}

// TestStoreNotAFileWordedOnce: a store path that is a symbolic link or a
// directory is refused saying what it is, once: the message ended
// "..., not a store file: not a regular file".
func TestStoreNotAFileWordedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	real := filepath.Join(dir, "real.db")
	saveJSON(t, dir, real, "--content", "the freeze lasts a week")
	link, sub := filepath.Join(dir, "link.db"), filepath.Join(dir, "sub.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		link: "agent-ls memory list: store " + link + " is a symbolic link (agent-ls never opens a store through one: name the real file)\n",
		sub:  "agent-ls memory list: store " + sub + " is a directory, not a store file\n",
	} {
		r := runBin(t, dir, "", memEnv, "memory", "--store", path, "list")
		if r.code == exitOK || r.stderr != want {
			t.Errorf("memory --store %s list: exit %d, stderr %q; want %q", path, r.code, r.stderr, want)
		}
	}
}

// TestTargetAndScopeWordedOnce: a bad target or scope pair is worded with
// the surface's name for it, once. Before: `--scope: scope value "c=d"
// holds '='`, `--target "...": judgment target: slot ...`, memory
// retarget's `target "...": target domain: ...`, and MCP's `target:
// judgment target: slot ...` for the object form.
func TestTargetAndScopeWordedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	db := filepath.Join(dir, "m.db")
	rec := saveJSON(t, dir, db, "--content", "the freeze lasts a week")
	stutters := []string{"scope value", "scope key", "judgment target", "target domain", " target: target", "target key"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "--store", db, "save", "--scope", "b=c=d", "x"}, `--scope: value "c=d" holds '='`},
		{[]string{"memory", "--store", db, "list", "--scope", "b;=c"}, `--scope: key "b;" holds ';'`},
		{[]string{"memory", "--store", db, "list", "--scope", "Agent=x"}, `--scope: key "Agent": did you mean "agent"?`},
		{[]string{"memory", "--store", db, "save", "--target", "judgment.x.nope", "x"}, `--target "judgment.x.nope": slot "nope" is not one of`},
		{[]string{"memory", "--store", db, "save", "--target", "judgment.a\x01b.heuristics", "x"}, `--target "judgment.a\x01b.heuristics": domain: contains a control character`},
		{[]string{"memory", "--store", db, "retarget", rec.ID, "judgment.a\x01b.heuristics"}, `target "judgment.a\x01b.heuristics": domain: contains a control character`},
		{[]string{"memory", "--store", db, "retarget", rec.ID, "background.projectContext. k"}, `target "background.projectContext. k": key: has leading white space`},
	} {
		r := runBin(t, dir, "", memEnv, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		for _, s := range stutters {
			if strings.Contains(r.stderr, s) {
				t.Errorf("%q: %q says %q", tc.args, r.stderr, s)
			}
		}
	}
	mdir, agentFile := mcpWorkspace(t)
	cs := mcpSession(t, mdir, agentFile)
	for _, tc := range []struct {
		target any
		want   string
	}{
		{map[string]any{"primitive": "judgment", "domain": "x", "slot": "nope"}, `target: slot "nope" is not one of`},
		{map[string]any{"primitive": "judgment", "domain": "a\x01b", "slot": "heuristics"}, `target: domain: contains a control character`},
		{map[string]any{"primitive": "nope"}, `target: primitive "nope" is not one of`},
		{"judgment.x.nope", `target "judgment.x.nope": slot "nope" is not one of`},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolSave, Arguments: map[string]any{"content": "x", "target": tc.target}})
		var text string
		if err != nil {
			text = err.Error()
		} else {
			if !res.IsError {
				t.Errorf("memory_save target %v: not refused", tc.target)
				continue
			}
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
		}
		if !strings.Contains(text, tc.want) {
			t.Errorf("memory_save target %v: %q; want %q", tc.target, text, tc.want)
		}
		for _, s := range stutters {
			if strings.Contains(text, s) {
				t.Errorf("memory_save target %v: %q says %q", tc.target, text, s)
			}
		}
	}
}

// TestUsageLinesListWhatTheyTake: every command's usage line names each
// flag its help lists, or ends with [flags] (render's omitted --summarize,
// overlay's --report, diff's --format, each --agent).
func TestUsageLinesListWhatTheyTake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmds := [][]string{{"init"}, {"lint"}, {"render"}, {"overlay"}, {"diff"}, {"bisect"}, {"learnings"}, {"garden"},
		{"proposals"}, {"approve"}, {"reject"}, {"promote"}, {"lens"}, {"serve"}, {"mcp"},
		{"token", "create"}, {"token", "list"}, {"token", "revoke"}}
	for _, s := range []string{"init", "migrate", "save", "save-batch", "list", "search", "show", "export", "import",
		"invalidate", "corroborate", "retarget", "ledger", "events", "backup", "restore"} {
		cmds = append(cmds, []string{"memory", s})
	}
	for _, c := range cmds {
		r := runBin(t, dir, "", memEnv, append(c, "--help")...)
		usage, _, _ := strings.Cut(r.stdout, "\n")
		if r.code != exitOK || !strings.HasPrefix(usage, "Usage: agent-ls "+strings.Join(c, " ")) {
			t.Errorf("%v --help: exit %d, first line %q", c, r.code, usage)
			continue
		}
		if strings.HasSuffix(usage, " [flags]") || strings.Contains(usage, " [flags] ") {
			continue
		}
		_, flags, _ := strings.Cut(r.stdout, "\nFlags:\n")
		for _, line := range strings.Split(flags, "\n") {
			if !strings.HasPrefix(line, "  --") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "  "), " ")
			if !strings.Contains(usage+" ", name+" ") && !strings.Contains(usage, name+"]") && !strings.Contains(usage, name+")") {
				t.Errorf("%v: usage line %q omits %s and has no [flags]", c, usage, name)
			}
		}
	}
}

// TestTokenRevokeUnknownWordedOnce: revoking a token that is not there says
// so once: it said "token revoke: revoke token: not found: no token ...".
func TestTokenRevokeUnknownWordedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runBin(t, dir, "", memEnv, "init"), "init")
	mustOK(t, runBin(t, dir, "", memEnv, "token", "create", "--agent", "my-agent.agent.yaml", "--name", "a"), "token create")
	secret := "als_" + strings.Repeat("A", 43)
	for arg, want := range map[string]string{
		"tok_01M999QP8RZGZSCZASM2TETJHW": "agent-ls token revoke: no token tok_01M999QP8RZGZSCZASM2TETJHW\n",
		secret:                           "agent-ls token revoke: no token has this secret\n",
	} {
		r := runBin(t, dir, "", memEnv, "token", "revoke", arg)
		if r.code != exitFindings || r.stderr != want {
			t.Errorf("token revoke %s: exit %d, stderr %q; want exit 1 and %q", arg, r.code, r.stderr, want)
		}
	}
}
