package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 31, reproduction 8: files outside the workspace. Each attack runs
// the real binary.

// secretLines stand for a file outside the workspace that must never be
// quoted (the issue's /etc/shadow): shadow-like lines, each a YAML key.
const secretLines = "root:$6$saltsalt$SECRETHASHroot0123456789:19000:0:99999:7:::\n" +
	"daemon:*:SECRETHASHdaemon:0:99999:7:::\n"

// outsideWS is a workspace ws beside a directory out it must not read.
type outsideWS struct {
	t             *testing.T
	base, ws, out string
}

func newOutsideWS(t *testing.T) *outsideWS {
	t.Helper()
	base := t.TempDir()
	o := &outsideWS{t: t, base: base, ws: filepath.Join(base, "ws"), out: filepath.Join(base, "out")}
	deploy, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", "deploy.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o.write(o.ws, ".agent-ls.yaml", "scope:\n  project: atlas\n")
	o.write(o.ws, "deploy.agent.yaml", string(deploy))
	o.write(o.out, "shadow", secretLines)
	o.write(o.out, "deploy.agent.yaml", string(deploy))
	o.link(filepath.Join(o.out, "shadow"), "x.agent.yaml")
	o.link("../out/shadow", "rel.agent.yaml")
	o.link(filepath.Join(o.out, "deploy.agent.yaml"), "link.agent.yaml")
	return o
}

func (o *outsideWS) write(dir, name, content string) {
	o.t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		o.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		o.t.Fatal(err)
	}
}

// link makes ws/name a symlink to target.
func (o *outsideWS) link(target, name string) {
	o.t.Helper()
	p := filepath.Join(o.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		o.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		o.t.Fatal(err)
	}
}

func (o *outsideWS) cli(args ...string) binResult {
	o.t.Helper()
	return runBin(o.t, o.ws, "", []string{"USER=ana"}, args...)
}

// noSecret fails when r quotes the outside file.
func noSecret(t *testing.T, what string, r binResult) {
	t.Helper()
	for _, s := range []string{"SECRETHASH", "saltsalt", "daemon"} {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("%s quotes the outside file (%q):\nstdout: %s\nstderr: %s", what, s, r.stdout, r.stderr)
		}
	}
}

const outsideMsg = "resolves outside the workspace root"

// TestValidateOutsideWorkspace: `ln -s /etc/shadow x.agent.yaml; agent-ls
// validate x.agent.yaml` quoted the target's lines in "unknown property"
// errors. Now validate and lint refuse to read an agent file that resolves
// outside the workspace root (an absolute symlink, a relative one through
// .., one found walking a directory) with one finding at 1:1 naming it.
func TestValidateOutsideWorkspace(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	for _, args := range [][]string{
		{"validate", "x.agent.yaml"},
		{"validate", "rel.agent.yaml"},
		{"validate", "link.agent.yaml"},
		{"validate", "--format", "json", "x.agent.yaml"},
		{"lint", "x.agent.yaml"},
		{"lint", "rel.agent.yaml"},
		{"lint", "--format", "json", "link.agent.yaml"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := o.cli(args...)
			noSecret(t, strings.Join(args, " "), r)
			if r.code != exitFindings || !strings.Contains(r.stdout, outsideMsg) {
				t.Errorf("exit %d, want %d and a finding %q:\nstdout: %s\nstderr: %s", r.code, exitFindings, outsideMsg, r.stdout, r.stderr)
			}
			if args[1] != "--format" && !strings.HasPrefix(r.stdout, args[1]+":1:1: error: ") {
				t.Errorf("want one finding at %s:1:1, got:\n%s", args[1], r.stdout)
			}
			if n := strings.Count(r.stdout, outsideMsg); n != 1 {
				t.Errorf("%d findings, want 1:\n%s", n, r.stdout)
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		t.Parallel()
		r := o.cli("validate", ".")
		noSecret(t, "validate .", r)
		for _, f := range []string{"x.agent.yaml", "rel.agent.yaml", "link.agent.yaml"} {
			if !strings.Contains(r.stdout, f+":1:1: error: "+outsideMsg) {
				t.Errorf("validate . does not refuse %s:\n%s\n%s", f, r.stdout, r.stderr)
			}
		}
		if strings.Contains(r.stdout, "deploy.agent.yaml:") {
			t.Errorf("the workspace's own agent file has findings:\n%s", r.stdout)
		}
	})
}

// TestComposeOutsideWorkspace: render, overlay, diff and mcp --agent
// refuse an agent file that resolves outside the workspace root, before
// reading it or opening any store.
func TestComposeOutsideWorkspace(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	for _, args := range [][]string{
		{"render", "link.agent.yaml"},
		{"render", "x.agent.yaml"},
		{"overlay", "link.agent.yaml"},
		{"diff", "link.agent.yaml", "--from", "2020-01-01T00:00:00Z"},
		{"mcp", "--agent", "link.agent.yaml"},
		{"mcp", "--agent", "rel.agent.yaml"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := o.cli(args...)
			noSecret(t, strings.Join(args, " "), r)
			if r.code != exitUsage || !strings.Contains(r.stderr, outsideMsg) || r.stdout != "" {
				t.Errorf("exit %d, want %d with %q and no output:\nstdout: %s\nstderr: %s", r.code, exitUsage, outsideMsg, r.stdout, r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(o.ws, ".agent-memory")); err == nil {
		t.Error("a refused command created the store directory")
	}
	// The workspace's own file still renders.
	if r := o.cli("render", "deploy.agent.yaml"); r.code != exitOK {
		t.Errorf("render deploy.agent.yaml: exit %d %s", r.code, r.stderr)
	}
}

// TestOutsideWorkspaceConfig: a .agent-ls.yaml that is a symlink to a file
// outside its directory is refused: validate reports it, and no command
// uses it (its store is never created, its actor never acts).
func TestOutsideWorkspaceConfig(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	ws2 := filepath.Join(o.base, "ws2")
	stolen := filepath.Join(o.out, "stolen.db")
	o.write(o.out, "cfg.yaml", "store: "+stolen+"\nactor: human:SECRETHASHactor\n")
	deploy, err := os.ReadFile(filepath.Join(o.ws, "deploy.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o.write(ws2, "deploy.agent.yaml", string(deploy))
	if err := os.Symlink(filepath.Join(o.out, "cfg.yaml"), filepath.Join(ws2, ".agent-ls.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate", ".agent-ls.yaml"},
		{"render", "deploy.agent.yaml"},
		{"memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.k", "--conversation", "c1", "a fact"},
		{"memory", "list"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			t.Parallel()
			r := runBin(t, ws2, "", []string{"USER=ana"}, args...)
			noSecret(t, strings.Join(args, " "), r)
			if r.code == exitOK || !strings.Contains(r.stdout+r.stderr, outsideMsg) {
				t.Errorf("exit %d, want a refusal naming %q:\nstdout: %s\nstderr: %s", r.code, outsideMsg, r.stdout, r.stderr)
			}
		})
	}
	t.Cleanup(func() {
		if _, err := os.Stat(stolen); err == nil {
			t.Error("the outside config's store was created")
		}
	})
}

// TestNotAnAgentFile: a YAML or JSON file that is clearly not an agent file
// (no agent key at its top level, or a top level that is no object) gets
// one diagnostic saying so, quoting nothing of it; an unknown property
// names its key only, bounded.
func TestNotAnAgentFile(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	o.write(o.ws, "notes.agent.yaml", "password: hunter2SECRETHASH\napi_token: tokSECRETHASH\n"+secretLines)
	o.write(o.ws, "creds.agent.json", `{"aws_secret_access_key": "SECRETHASHjson", "region": "eu"}`)
	o.write(o.ws, "list.agent.yaml", "- SECRETHASHitem\n- daemon\n")
	o.write(o.ws, "text.agent.yaml", "SECRETHASH plain text\n")
	for _, f := range []string{"notes.agent.yaml", "creds.agent.json", "list.agent.yaml", "text.agent.yaml"} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"validate", f}, {"lint", f}, {"validate", "--format", "json", f}} {
				r := o.cli(args...)
				noSecret(t, strings.Join(args, " "), r)
				if strings.Contains(r.stdout, "hunter2") || strings.Contains(r.stdout, "aws_secret") || strings.Contains(r.stdout, "api_token") {
					t.Errorf("%v quotes the file's keys or values:\n%s", args, r.stdout)
				}
				if r.code != exitFindings || strings.Count(r.stdout, "not an agent file") != 1 {
					t.Errorf("%v: exit %d, want one diagnostic naming it not an agent file:\n%s\n%s", args, r.code, r.stdout, r.stderr)
				}
				if args[1] != "--format" && strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
					t.Errorf("%v: more than one diagnostic:\n%s", args, r.stdout)
				}
			}
		})
	}
	t.Run("a long unknown key", func(t *testing.T) {
		t.Parallel()
		deploy, err := os.ReadFile(filepath.Join(o.ws, "deploy.agent.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("k", 40) + strings.Repeat("S", 400)
		o.write(o.ws, "long.agent.yaml", string(deploy)+long+": SECRETHASHvalue\n")
		r := o.cli("validate", "--format", "json", "long.agent.yaml")
		var fs []finding
		if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
			t.Fatalf("decode %q: %v", r.stdout, err)
		}
		if len(fs) != 1 || !strings.HasPrefix(fs[0].Message, `unknown property "kkkk`) || len(fs[0].Message) > 120 {
			t.Errorf("want one bounded unknown-property message, got %+v", fs)
		}
		noSecret(t, "validate long.agent.yaml", r)
	})
}

// TestStoreSymlinkRefused: a store file that is a symbolic link is refused
// on every open, with a precise error and only that (a dangling one was
// also reported as no store at all); nothing is ever created or written
// through it (a dangling .agent-memory/memory.db -> /nonexistent/dir/x.db
// used to create its target).
func TestStoreSymlinkRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(o *outsideWS) string
	}{
		{"dangling", func(o *outsideWS) string { return filepath.Join(o.out, "nonexistent", "dir", "x.db") }},
		{"dangling into an existing directory", func(o *outsideWS) string { return filepath.Join(o.out, "x.db") }},
		{"to an empty file", func(o *outsideWS) string { o.write(o.out, "empty", ""); return filepath.Join(o.out, "empty") }},
		{"to a file inside", func(o *outsideWS) string { o.write(o.ws, "real.db", ""); return filepath.Join(o.ws, "real.db") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOutsideWS(t)
			target := tc.target(o)
			before, _ := os.Stat(target)
			o.link(target, filepath.Join(".agent-memory", "memory.db"))
			for _, args := range [][]string{
				{"memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--target", "background.projectContext.k", "--conversation", "c1", "a fact"},
				{"memory", "list"},
				{"memory", "backup", filepath.Join(o.base, "copy.db")},
			} {
				r := o.cli(args...)
				if r.code == exitOK || !strings.Contains(r.stderr, "is a symbolic link") {
					t.Errorf("%v: exit %d, want a refusal naming the symbolic link:\nstdout: %s\nstderr: %s", args[:2], r.code, r.stdout, r.stderr)
				}
				// The refusal alone: a dangling link is no missing store
				// ("no memory store at ...: no records" and then the refusal).
				if strings.Contains(r.stderr, "no memory store") {
					t.Errorf("%v: a link read as a missing store as well as refused:\n%s", args[:2], r.stderr)
				}
			}
			after, err := os.Stat(target)
			switch {
			case before == nil && err == nil:
				t.Errorf("the symlink's target %s was created", target)
			case before != nil && (err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime())):
				t.Errorf("the symlink's target %s was written", target)
			}
			if _, err := os.Stat(filepath.Join(o.out, "nonexistent")); err == nil {
				t.Error("the dangling target's directory was created")
			}
		})
	}
}

// TestBackupDestination: `memory backup DEST` refuses an existing
// destination unless --force, and never writes through a symlink, even
// with --force (issue 31, reproduction 7).
func TestBackupDestination(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	if r := o.cli("memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--target", "background.projectContext.k", "--conversation", "c1", "a fact"); r.code != exitOK {
		t.Fatalf("save: exit %d %s", r.code, r.stderr)
	}
	precious := filepath.Join(o.ws, "other.db")
	o.write(o.ws, "other.db", "precious bytes")
	r := o.cli("memory", "backup", "other.db")
	if r.code != exitFindings || !strings.Contains(r.stderr, "already exists") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("backup over an existing file: exit %d, want %d naming --force: %s", r.code, exitFindings, r.stderr)
	}
	if b, _ := os.ReadFile(precious); string(b) != "precious bytes" {
		t.Errorf("the existing file was replaced (%d bytes)", len(b))
	}
	if r := o.cli("memory", "backup", "--force", "other.db"); r.code != exitOK {
		t.Errorf("backup --force: exit %d %s", r.code, r.stderr)
	}
	if r := o.cli("memory", "ledger", "--verify", "--store", "other.db"); r.code != exitOK {
		t.Errorf("the forced copy does not verify: %d %s", r.code, r.stderr)
	}
	o.write(o.out, "target.db", "outside bytes")
	o.link(filepath.Join(o.out, "target.db"), "link.db")
	o.link(filepath.Join(o.out, "none", "new.db"), "dangling.db")
	for _, args := range [][]string{
		{"memory", "backup", "link.db"},
		{"memory", "backup", "--force", "link.db"},
		{"memory", "backup", "dangling.db"},
		{"memory", "backup", "--force", "dangling.db"},
	} {
		r := o.cli(args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, "symbolic link") {
			t.Errorf("%v: exit %d, want %d naming the symbolic link: %s", args, r.code, exitFindings, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(o.out, "target.db")); string(b) != "outside bytes" {
		t.Errorf("backup wrote through the symlink (%d bytes)", len(b))
	}
	if fi, err := os.Lstat(filepath.Join(o.ws, "link.db")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(o.out, "none")); err == nil {
		t.Error("backup created the dangling link's directory")
	}
	// A new destination needs no --force.
	if r := o.cli("memory", "backup", "fresh.db"); r.code != exitOK {
		t.Errorf("backup to a new file: exit %d %s", r.code, r.stderr)
	}
}

// TestSaveAgentFileOutsideWorkspace: memory save and save-batch refuse an
// --agent file that resolves outside the workspace they save into, as
// render and the other --agent commands do (docs/STORE.md). They read it:
// a link to an agent file elsewhere, or that file named by its absolute
// path, made its roleTemplate.name the record's agent, so a save the scope
// rule refuses with --scope agent=ghost ("no agent file in the workspace
// names agent ghost") went through with --agent, a record no agent file of
// the workspace would ever compose. Refused now with exit 2, before any
// store is created.
func TestSaveAgentFileOutsideWorkspace(t *testing.T) {
	t.Parallel()
	o := newOutsideWS(t)
	deploy, err := os.ReadFile(filepath.Join(o.ws, "deploy.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ghost := strings.Replace(string(deploy), "name: deploy-ops", "name: ghost", 1)
	if ghost == string(deploy) {
		t.Fatal("the testdata agent is not named deploy-ops")
	}
	o.write(o.out, "ghost.agent.yaml", ghost)
	o.link(filepath.Join(o.out, "ghost.agent.yaml"), "ghost-link.agent.yaml")
	batch := filepath.Join(o.base, "saves.jsonl")
	if err := os.WriteFile(batch, []byte(`{"content": "a ghost fact", "target": "background.projectContext.g"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"link.agent.yaml", "ghost-link.agent.yaml", filepath.Join(o.out, "ghost.agent.yaml"), "../out/ghost.agent.yaml"} {
		for _, args := range [][]string{
			{"memory", "save", "--agent", agent, "--target", "background.projectContext.g", "a ghost fact"},
			{"memory", "save-batch", "--agent", agent, batch},
		} {
			t.Run(strings.Join(args[:2], " ")+" --agent "+agent, func(t *testing.T) {
				t.Parallel()
				r := o.cli(args...)
				noSecret(t, strings.Join(args, " "), r)
				if r.code != exitUsage || !strings.Contains(r.stderr, outsideMsg) || r.stdout != "" {
					t.Errorf("exit %d, want %d with %q and no output:\nstdout: %s\nstderr: %s", r.code, exitUsage, outsideMsg, r.stdout, r.stderr)
				}
			})
		}
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(o.ws, ".agent-memory")); err == nil {
			t.Error("a refused save created the store")
		}
	})
	// The workspace's own file still saves (in a workspace of its own: the
	// refusals above run in parallel and must find no store).
	w := newOutsideWS(t)
	if r := w.cli("memory", "save", "--agent", "deploy.agent.yaml", "--target", "background.projectContext.k", "a fact"); r.code != exitOK {
		t.Errorf("save --agent deploy.agent.yaml: exit %d %s", r.code, r.stderr)
	}
}
