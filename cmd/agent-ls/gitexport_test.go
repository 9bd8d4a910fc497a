package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// gitOut runs git in dir (no user config) and returns its stdout.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// ledgerOf is the store's ledger (memory ledger --format json).
func ledgerOf(t *testing.T, w *evoWorkspace) []store.LedgerEntry {
	t.Helper()
	var l []store.LedgerEntry
	w.cliJSON(&l, "memory", "ledger")
	return l
}

// TestMemoryExportGit: memory export --git writes a commit per ledger entry
// that changes a composition (a candidate's write and a corroboration add
// none), authored by the entry's actor at the entry's time, each holding
// NAME.prompt.md for every agent file byte-equal to render at that point
// (HEAD: render now; HEAD~1: render --at the entry's time); a second run
// after a promotion appends exactly one commit whose diff adds the learned
// line; a third appends nothing; DIR that is a foreign repository or a
// non-empty directory is refused with exit 1.
func TestMemoryExportGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newEvoWorkspace(t, "")
	eng := w.engine("deploy-ops", nil)
	fact := w.save(eng, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "c1", "")
	if fact.State != "promoted" {
		t.Fatalf("auto-tier save: %+v", fact)
	}
	lesson := "Always run the smoke tests after every deploy"
	cand := w.save(eng, lesson, "judgment.deploy.heuristics", "c2", "")
	if cand.State != "candidate" {
		t.Fatalf("earned-tier save: %+v", cand)
	}
	repo := filepath.Join(w.dir, "history")
	r := w.cli("memory", "export", "--git", repo, "--format", "json")
	wantCode(t, r, 0, "export --git")
	var res gitExportResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Commits != 1 || len(res.Agents) != 2 {
		t.Fatalf("export result %q: %v", r.stdout, err)
	}
	entries := ledgerOf(t, w)
	var promote store.LedgerEntry
	for _, e := range entries {
		if e.Op == store.OpPromote && e.RecordID == fact.Record.ID {
			promote = e
		}
	}
	if promote.Seq == 0 {
		t.Fatalf("no promote entry of %s in %+v", fact.Record.ID, entries)
	}
	log := gitOut(t, repo, "log", "--format=%an|%ae|%at|%(trailers:key=Agent-Ls-Ledger-Seq,valueonly)")
	at, _ := schema.ParseTime(promote.At)
	want := "agent:deploy-ops|deploy-ops@agent.agent-ls.invalid|" + strconv.FormatInt(at.Unix(), 10) + "|" + strconv.FormatUint(promote.Seq, 10)
	if lines := strings.Fields(log); len(lines) != 1 || lines[0] != want {
		t.Errorf("git log after the first export:\n%s\nwant the one line %s", log, want)
	}
	for file, name := range map[string]string{"deploy.agent.yaml": "deploy-ops", "code-review.agent.yaml": "code-reviewer"} {
		if got, want := gitOut(t, repo, "show", "HEAD:"+name+".prompt.md"), w.cli("render", file).stdout; got != want {
			t.Errorf("HEAD's %s.prompt.md differs from render:\n%s\n---\n%s", name, got, want)
		}
	}

	// The lesson earns its promotion: a second conversation corroborates
	// it (no commit) and promotes it (one commit, adding the line).
	if res := w.save(eng, lesson, "judgment.deploy.heuristics", "c3", ""); res.State != "promoted" {
		t.Fatalf("corroborating save: %+v", res)
	}
	r = w.cli("memory", "export", "--git", repo)
	wantCode(t, r, 0, "second export")
	if !strings.Contains(r.stdout, "exported 1 commit") {
		t.Errorf("second export: %q", r.stdout)
	}
	entries = ledgerOf(t, w)
	last := entries[len(entries)-1]
	if last.Op != store.OpPromote || last.RecordID != cand.Record.ID {
		t.Fatalf("last entry %+v", last)
	}
	subjects := gitOut(t, repo, "log", "--format=%an %(trailers:key=Agent-Ls-Ledger-Seq,valueonly,separator=)%x09%s")
	lines := strings.Split(strings.TrimSpace(subjects), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], last.Actor.String()+" "+strconv.FormatUint(last.Seq, 10)+"\t") || !strings.Contains(lines[0], cand.Record.ID) {
		t.Errorf("git log after the promotion:\n%s", subjects)
	}
	if got, want := gitOut(t, repo, "show", "HEAD:deploy-ops.prompt.md"), w.cli("render", "deploy.agent.yaml").stdout; got != want {
		t.Errorf("HEAD's prompt differs from render after the promotion:\n%s\n---\n%s", got, want)
	}
	if got, want := gitOut(t, repo, "show", "HEAD~1:deploy-ops.prompt.md"), w.cli("render", "deploy.agent.yaml", "--at", promote.At).stdout; got != want {
		t.Errorf("HEAD~1's prompt differs from render --at %s", promote.At)
	}
	patch := gitOut(t, repo, "log", "-p", "--format=", "-1", "deploy-ops.prompt.md")
	var added []string
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			added = append(added, l)
		}
	}
	if len(added) != 1 || !strings.Contains(added[0], lesson) {
		t.Errorf("the promotion's diff adds %q, want the one learned line", added)
	}
	if got := gitOut(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("the work tree is not HEAD's: %q", got)
	}

	// Nothing new: nothing appended.
	r = w.cli("memory", "export", "--git", repo)
	wantCode(t, r, 0, "third export")
	if n := strings.Count(gitOut(t, repo, "log", "--format=%H"), "\n"); n != 2 || !strings.Contains(r.stdout, "up to date") {
		t.Errorf("third export: %q, %d commits", r.stdout, n)
	}

	// Refusals: a repository export did not make, a non-empty directory.
	foreign := filepath.Join(w.dir, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, foreign, "init", "-q")
	gitOut(t, foreign, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "mine")
	r = w.cli("memory", "export", "--git", foreign)
	if r.code != exitFindings || !strings.Contains(r.stderr, "not made by memory export") {
		t.Errorf("export into a foreign repository: exit %d, %q", r.code, r.stderr)
	}
	r = w.cli("memory", "export", "--git", filepath.Join(w.dir, ".agent-memory"))
	if r.code != exitFindings || !strings.Contains(r.stderr, "neither empty nor a repository") {
		t.Errorf("export into a non-empty directory: exit %d, %q", r.code, r.stderr)
	}
	// An empty directory is fine, and the export is the same history.
	empty := filepath.Join(w.dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.cli("memory", "export", "--git", empty), 0, "export into an empty directory")
	if a, b := gitOut(t, empty, "rev-parse", "HEAD"), gitOut(t, repo, "rev-parse", "HEAD"); a != b {
		t.Errorf("two exports of one ledger differ: %s vs %s", a, b)
	}
}

// TestMemoryExportGitAgentNameNotAPath: an agent whose roleTemplate.name
// holds a path separator ("../../evil") cannot name its NAME.prompt.md, and
// the export refuses it before it creates anything. It used to git-init the
// directory, write a commit whose tree holds "../../evil.prompt.md" (a
// repository git fsck rejects) and fail in `git reset` with exit 2.
func TestMemoryExportGitAgentNameNotAPath(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, name := range []string{"../../evil", "a/b", `a\b`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newEvoWorkspace(t, "")
			deploy, err := os.ReadFile(filepath.Join(w.dir, "deploy.agent.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			evil := strings.Replace(string(deploy), "name: deploy-ops", "name: '"+name+"'", 1)
			if err := os.WriteFile(filepath.Join(w.dir, "evil.agent.yaml"), []byte(evil), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := w.cli("memory", "save", "--agent", "deploy.agent.yaml", "--target", "background.projectContext.k", "a fact"); r.code != exitOK {
				t.Fatalf("save: exit %d %s", r.code, r.stderr)
			}
			dir := filepath.Join(w.dir, "out", "history")
			r := w.cli("memory", "export", "--git", dir)
			want := "evil.agent.yaml: agent name " + strconv.Quote(name) + " cannot name its file in the repository (NAME.prompt.md): it holds a path separator"
			if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, want) {
				t.Errorf("export --git: exit %d, stdout %q, stderr %q; want 2 and %q", r.code, r.stdout, r.stderr, want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the refused export created %s", dir)
			}
		})
	}
}
