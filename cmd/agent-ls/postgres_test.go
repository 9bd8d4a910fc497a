package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/events"
	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// pgWorkspace is a workspace with the deploy agent whose .agent-ls.yaml
// names a fresh schema of the test server as its store.
func pgWorkspace(t *testing.T) (dir, url string) {
	t.Helper()
	url = pgtest.Fresh(t)
	dir = t.TempDir()
	agent, err := os.ReadFile("../../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy.agent.yaml"), agent, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "store: " + strconv.Quote(url) + "\nscope:\n  user: u1\n"
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, url
}

func cliOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return mustOK(t, runBin(t, dir, "", memEnv, args...), strings.Join(args, " ")).stdout
}

// TestPostgresWorkspaceCLI: a workspace whose .agent-ls.yaml names a
// postgres:// URL works for the commands (init, save, list, render, the
// ledger's verify); an unreachable server is exit 2 within the connect
// timeout, and the password appears nowhere in the output.
func TestPostgresWorkspaceCLI(t *testing.T) {
	t.Parallel()
	dir, _ := pgWorkspace(t)
	if out := cliOK(t, dir, "memory", "init"); !strings.Contains(out, "ready (schema version") {
		t.Errorf("memory init: %q", out)
	}
	cliOK(t, dir, "memory", "save", "--scope", "user=u1,agent=deploy-ops", "--target", "background.projectContext.deploy_window",
		"--conversation", "c1", "--actor", "agent:deploy-ops", "Deploys go out Tuesdays after 14:00 ET")
	var l listing
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "list", "--format", "json")), &l); err != nil || len(l.Records) != 1 {
		t.Fatalf("memory list: %v %+v", err, l)
	}
	if out := cliOK(t, dir, "render", "deploy.agent.yaml"); !strings.Contains(out, "Deploys go out Tuesdays after 14:00 ET") {
		t.Errorf("render does not show the promoted fact:\n%s", out)
	}
	cliOK(t, dir, "memory", "ledger", "--verify")

	// A backup of the team store is a bbolt file of the same state: it
	// verifies and renders byte-identically.
	backup := filepath.Join(t.TempDir(), "team.db")
	var br backupResult
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "backup", backup, "--actor", "human:ana", "--format", "json")), &br); err != nil || !br.Verified || br.Records != 1 {
		t.Errorf("memory backup of a PostgreSQL store: %v %+v", err, br)
	}
	cliOK(t, dir, "memory", "ledger", "--verify", "--store", backup)
	if a, b := cliOK(t, dir, "render", "deploy.agent.yaml"), cliOK(t, dir, "render", "deploy.agent.yaml", "--store", backup); a != b {
		t.Errorf("the backup renders differently:\n%s\n---\n%s", a, b)
	}

	r := runBin(t, dir, "", memEnv, "memory", "--store", "postgres://agent:hunter2secret@127.0.0.1:1/agentls", "--lock-timeout", "1s", "list")
	if r.code != exitUsage || !strings.Contains(r.stderr, "xxxxx") || strings.Contains(r.stderr+r.stdout, "hunter2secret") {
		t.Errorf("unreachable server: exit %d, stderr %q; want 2, the URL with its password hidden", r.code, r.stderr)
	}
}

// TestPostgresConcurrentSaves: six agent-ls processes started at once each
// save a fact of their own and the same lesson from their own
// conversation: the store ends with exactly seven records, the lesson once
// with five supports, and a ledger that verifies.
func TestPostgresConcurrentSaves(t *testing.T) {
	t.Parallel()
	dir, _ := pgWorkspace(t)
	cliOK(t, dir, "memory", "init")
	const procs = 6
	const lesson = "Roll back first when a canary's error rate rises, then investigate"
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		save := func(extra ...string) string {
			args := append([]string{agentLSBin, "memory", "save", "--scope", "agent=deploy-ops", "--actor", "agent:deploy-ops",
				"--conversation", fmt.Sprintf("conv-%d", i), "--lock-timeout", "30s"}, extra...)
			q := make([]string, len(args))
			for j, a := range args {
				q[j] = strconv.Quote(a)
			}
			return strings.Join(q, " ")
		}
		script := save(fmt.Sprintf("Service %d is owned by team %d", i, i)) + " && " +
			save("--target", "judgment.deploy.heuristics", lesson)
		cmds[i] = exec.Command("sh", "-c", script)
		cmds[i].Dir = dir
		cmds[i].Env = append(os.Environ(), memEnv...)
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	var l listing
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "list", "--format", "json", "--all", "--limit", "100")), &l); err != nil {
		t.Fatal(err)
	}
	recs := l.Records
	lessons := 0
	for _, r := range recs {
		if r.Content == lesson {
			lessons++
			if len(r.Supports) != procs-1 {
				t.Errorf("the lesson has %d supports, want %d (one per other conversation)", len(r.Supports), procs-1)
			}
		}
	}
	if len(recs) != procs+1 || lessons != 1 {
		t.Errorf("%d records with %d copies of the lesson, want %d and 1", len(recs), lessons, procs+1)
	}
	cliOK(t, dir, "memory", "ledger", "--verify")
	var entries []store.LedgerEntry
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "ledger", "--format", "json")), &entries); err != nil {
		t.Fatal(err)
	}
	count := map[store.Op]int{}
	for _, e := range entries {
		count[e.Op]++
	}
	if count[store.OpWrite] != procs+1 || count[store.OpCorroborate] != procs-1 {
		t.Errorf("ledger: %v, want %d writes and %d corroborations", count, procs+1, procs-1)
	}
}

// TestMigrateBothWays: memory migrate copies a file store into PostgreSQL
// and back; each destination verifies and renders the agent byte for byte
// as the source; a non-empty destination is refused with exit 1.
func TestMigrateBothWays(t *testing.T) {
	t.Parallel()
	w := newCompWorkspace(t)
	w.seed(func(ctx context.Context, s store.Store) {
		w.save(ctx, s, "background.projectContext.deploy_window", "Deploys go out Tuesdays after 14:00 ET", "c1", "", true)
		w.save(ctx, s, "judgment.deploy.heuristics", "Watch the canary for ten minutes", "c2", "", true)
		w.save(ctx, s, "judgment.deploy.heuristics", "Announce deploys in #deploys", "c3", "", false)
	})
	want := w.ok("render", "deploy.agent.yaml")
	url := pgtest.Fresh(t)
	back := filepath.Join(t.TempDir(), "back.db")
	for _, step := range []struct{ from, to string }{{w.db, url}, {url, back}} {
		if out := w.ok("memory", "migrate", "--from", step.from, "--to", step.to); !strings.Contains(out, "3 records") || !strings.Contains(out, "verifies") {
			t.Errorf("migrate %s -> %s: %q", step.from, step.to, out)
		}
		if got := w.ok("render", "deploy.agent.yaml", "--store", step.to); got != want {
			t.Errorf("render from %s differs from the source:\n%s\nwant:\n%s", step.to, got, want)
		}
		w.ok("memory", "--store", step.to, "ledger", "--verify")
	}
	if r := w.run("memory", "migrate", "--from", w.db, "--to", url); r.code != exitFindings || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("migrate into a non-empty store: exit %d, stderr %q; want 1, refused", r.code, r.stderr)
	}
}

// TestMCPPostgres: agent-ls mcp over a workspace whose store is a
// postgres:// URL: a fact is promoted at save, a lesson taught by two
// conversations (two server processes) is corroborated and promoted, the
// composed prompt shows both and the ledger verifies.
func TestMCPPostgres(t *testing.T) {
	t.Parallel()
	dir, agentFile := mcpWorkspace(t)
	url := pgtest.Fresh(t)
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte("store: "+strconv.Quote(url)+"\nscope:\n  project: atlas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fact := "Deploys to the shop freeze on Fridays after 15:00 CET"
	lesson := "Offer an exchange before a refund when the size is wrong"
	cs := mcpSession(t, dir, "--agent", agentFile, "--conversation", "conv-1")
	f := mcpSave(t, cs, map[string]any{"kind": "fact", "content": fact, "target": "background.projectContext.deploy_window"})
	l1 := mcpSave(t, cs, map[string]any{"kind": "fact", "content": lesson, "target": "judgment.refunds.heuristics"})
	if f.State != "promoted" || l1.State != "candidate" {
		t.Fatalf("conversation 1: fact %+v, lesson %+v", f, l1)
	}
	_ = cs.Close()
	cs = mcpSession(t, dir, "--agent", agentFile, "--conversation", "conv-2")
	l2 := mcpSave(t, cs, map[string]any{"kind": "fact", "content": lesson, "target": "judgment.refunds.heuristics"})
	_ = cs.Close()
	if !l2.Corroborated || l2.ID != l1.ID || l2.State != "promoted" {
		t.Fatalf("conversation 2: %+v", l2)
	}
	out := cliOK(t, dir, "render", agentFile)
	if !strings.Contains(out, fact) || !strings.Contains(out, lesson) {
		t.Errorf("render after two conversations lacks the fact or the lesson:\n%s", out)
	}
	cliOK(t, dir, "memory", "ledger", "--verify")
}

// TestMemoryEventsFollowPostgres: `memory events --follow` on a postgres://
// store prints another process's write within a second of its commit.
func TestMemoryEventsFollowPostgres(t *testing.T) {
	t.Parallel()
	dir, url := pgWorkspace(t)
	cliOK(t, dir, "memory", "init")
	if r := runBin(t, dir, "", memEnv, "memory", "events", "--follow", "--poll", "5ms"); r.code != exitUsage || !strings.Contains(r.stderr, "at least 100ms") {
		t.Errorf("--poll 5ms: exit %d, stderr %q; want 2 naming the floor", r.code, r.stderr)
	}
	follower := exec.Command(agentLSBin, "memory", "events", "--follow", "--format", "json", "--actor", "human:ana")
	follower.Dir = dir
	out, err := follower.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	follower.Stderr = &stderr
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follower.Process.Kill(); _ = follower.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for i := range 2 {
		var res struct {
			Record struct{ ID string } `json:"record"`
		}
		r := mustOK(t, runBin(t, dir, "", memEnv, "memory", "--store", url, "--format", "json", "save", "--scope", "agent=deploy-ops",
			"--actor", "agent:deploy-ops", "--content", fmt.Sprintf("fact %d", i)), "save")
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		// The first wait also covers the follower's start-up.
		limit := time.Second
		if i == 0 {
			limit = 15 * time.Second
		}
		select {
		case l, ok := <-lines:
			var ev events.Event
			if !ok || json.Unmarshal([]byte(l), &ev) != nil || ev.Type != events.Write || ev.RecordID != res.Record.ID {
				t.Fatalf("event line %q (open %v) for the save of %s; stderr: %s", l, ok, res.Record.ID, stderr.String())
			}
		case <-time.After(limit):
			t.Fatalf("no event within %s of the save of %s; stderr: %s", limit, res.Record.ID, stderr.String())
		}
	}
}

// TestMCPPostgresConcurrentLesson: four `agent-ls mcp` processes on one
// postgres:// store, each in its own conversation, save the same lesson at
// once: one record with four supports, every save answered with its id, a
// ledger that verifies.
func TestMCPPostgresConcurrentLesson(t *testing.T) {
	t.Parallel()
	dir, agentFile := mcpWorkspace(t)
	url := pgtest.Fresh(t)
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte("store: "+strconv.Quote(url)+"\nscope:\n  project: atlas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cliOK(t, dir, "memory", "init")
	const procs = 4
	lesson := "Offer an exchange before a refund when the size is wrong"
	sessions := make([]*mcp.ClientSession, procs)
	for i := range sessions {
		sessions[i] = mcpSession(t, dir, "--agent", agentFile, "--conversation", fmt.Sprintf("conv-%d", i))
		defer sessions[i].Close()
	}
	start := make(chan struct{})
	outs := make([]mcpserver.SaveOutput, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolSave,
				Arguments: map[string]any{"kind": "fact", "content": lesson, "target": "judgment.refunds.heuristics"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %v", res.Content)
			}
			if err == nil {
				data, _ := json.Marshal(res.StructuredContent)
				err = json.Unmarshal(data, &outs[i])
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
		if outs[i].ID != outs[0].ID {
			t.Errorf("save %d minted %s, save 0 %s: the same lesson became two records", i, outs[i].ID, outs[0].ID)
		}
	}
	var list struct {
		Records []schema.MemoryRecord `json:"records"`
	}
	if err := json.Unmarshal([]byte(cliOK(t, dir, "memory", "list", "--format", "json", "--all", "--limit", "100")), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range list.Records {
		if r.Content == lesson {
			n++
			if got := r.DistinctConversations(); got != procs {
				t.Errorf("the lesson has %d distinct conversations, want %d", got, procs)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d records of the lesson, want 1", n)
	}
	cliOK(t, dir, "memory", "ledger", "--verify")
}
