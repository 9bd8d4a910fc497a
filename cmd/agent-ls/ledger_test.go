package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	bbolt "go.etcd.io/bbolt"

	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
)

// editLedgerEntry changes one byte of ledger entry seq in the bbolt file
// db, keeping its length (the hash no longer matches).
func editLedgerEntry(t *testing.T, db string, seq uint64) {
	t.Helper()
	bolttest.EditLedgerEntry(t, db, seq, func(v []byte) []byte {
		i := strings.Index(string(v), `"at":"`) + len(`"at":"`) + 3
		v[i] ^= 1 // a digit of the year
		return v
	})
}

// TestLedgerThroughCLI: --head prints SEQ:HASH; --verify --head passes
// while the chain extends the pin; after a ledger entry is edited, verify
// exits 1 naming the entry, a save and a promote are refused with exit 2
// and "ledger does not verify at entry N", render --at, diff --from/--to
// and learnings refuse (exit 2); after an edit of a record's content alone (records
// bucket), verify lists the difference with the record's id (exit 1).
func TestLedgerThroughCLI(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	var ids []string
	for i := range 3 {
		var out struct {
			Record struct{ ID string } `json:"record"`
		}
		mustOK(t, w.cliJSON(&out, "memory", "save", "--content", fmt.Sprintf("fact number %d", i), "--scope", "project=atlas,agent=deploy-ops"), "save")
		ids = append(ids, out.Record.ID)
	}
	r := mustOK(t, w.cli("memory", "ledger", "--head"), "--head")
	head := strings.TrimSpace(r.stdout)
	if !regexp.MustCompile(`^3:[0-9a-f]{64}$`).MatchString(head) {
		t.Fatalf("--head printed %q, want 3:HASH", head)
	}
	r = mustOK(t, w.cli("memory", "ledger", "--verify", "--head", head), "--verify --head")
	if !strings.Contains(r.stdout, "extends the pinned head "+head) {
		t.Errorf("--verify --head: %q", r.stdout)
	}
	if r := w.cli("memory", "ledger", "--verify", "--head", "3:abc"); r.code != exitUsage || !strings.Contains(r.stderr, "64 hex digits") {
		t.Errorf("a malformed pin: exit %d, %q", r.code, r.stderr)
	}
	mustOK(t, w.cli("memory", "save", "--content", "a fourth fact", "--scope", "project=atlas,agent=deploy-ops"), "save")
	mustOK(t, w.cli("memory", "ledger", "--verify", "--head", head), "the pin still holds after a write")

	// A copy with a record's content edited in the records bucket alone.
	data, err := os.ReadFile(w.db)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(cp, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("records"))
		v := append([]byte(nil), b.Get([]byte(ids[1]))...)
		return b.Put([]byte(ids[1]), []byte(strings.Replace(string(v), "fact number 1", "fact number 7", 1)))
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = w.cli("memory", "ledger", "--verify", "--store", cp)
	if r.code != exitFindings || !strings.Contains(r.stdout, "record "+ids[1]+": stored content differ") {
		t.Errorf("verify of an edited record: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	editLedgerEntry(t, w.db, 2)
	r = w.cli("memory", "ledger", "--verify", "--head", head)
	if r.code != exitFindings || !strings.Contains(r.stderr, "ledger entry 2") {
		t.Errorf("verify of an edited entry: exit %d, %q", r.code, r.stderr)
	}
	want := "ledger does not verify at entry 2: run agent-ls memory ledger --verify"
	for _, args := range [][]string{
		{"memory", "save", "--content", "one more", "--scope", "project=atlas,agent=deploy-ops"},
		{"memory", "invalidate", ids[0], "--reason", "x"},
		{"render", "deploy.agent.yaml", "--at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
		{"diff", "deploy.agent.yaml", "--from", "2020-01-01T00:00:00Z", "--to", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
		{"learnings"},
	} {
		r := w.cli(args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%v on a broken chain: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
}

// TestStoreNotARegularFileCLI: a FIFO, a socket or a directory as the
// store makes a command fail at once (exit 2) saying what it is.
func TestStoreNotARegularFileCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a FIFO"},
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"socket", func(t *testing.T, p string) {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skip(err)
			}
			t.Cleanup(func() { l.Close() })
		}, "is a socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newEvoWorkspace(t, "store: odd.db\n")
			tc.make(t, filepath.Join(w.dir, "odd.db"))
			for _, args := range [][]string{{"memory", "list"}, {"memory", "save", "--content", "x", "--scope", "project=atlas,agent=deploy-ops"}, {"render", "deploy.agent.yaml"}} {
				start := time.Now()
				r := w.cli(append(args, "--lock-timeout", "30s")...)
				if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", args, r.code, r.stderr, tc.want)
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("%v took %s", args, d)
				}
			}
		})
	}
}

// TestSIGTERMEndsALockWait: a command waiting for a lock another process
// holds ends with exit 2 on SIGTERM, long before its lock timeout.
func TestSIGTERMEndsALockWait(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	mustOK(t, w.cli("memory", "save", "--content", "first", "--scope", "project=atlas,agent=deploy-ops"), "save")
	holder, err := bbolt.Open(w.db, 0o600, nil) // holds the writer lock
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cmd := exec.Command(agentLSBin, "memory", "save", "--content", "second", "--scope", "project=atlas,agent=deploy-ops", "--lock-timeout", "5m")
	cmd.Dir = w.dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the child has the store open (it is then waiting for the
	// lock, its signal handler long installed).
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	deadline := time.Now().Add(20 * time.Second)
	for open := false; !open; {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the child never opened the store")
		}
		ents, _ := os.ReadDir(fdDir)
		for _, e := range ents {
			if l, _ := os.Readlink(filepath.Join(fdDir, e.Name())); l == w.db {
				open = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Fatalf("after SIGTERM: %v (stderr %q); want exit 2", err, stderr.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("exited %s after SIGTERM", d)
	}
}

// TestLimitsThroughCLI: content over the workspace's limits.content, and
// content with a NUL byte, are refused with a precise error; a JSONL
// import opening with a byte order mark is accepted.
func TestLimitsThroughCLI(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "limits:\n  content: 100\n")
	r := w.cli("memory", "save", "--content", strings.Repeat("a", 101), "--scope", "project=atlas,agent=deploy-ops")
	if r.code == 0 || !strings.Contains(r.stderr, "more than the limit of 100 (limits.content") {
		t.Errorf("101 bytes over a limit of 100: exit %d, %q", r.code, r.stderr)
	}
	mustOK(t, w.cli("memory", "save", "--content", strings.Repeat("a", 100), "--scope", "project=atlas,agent=deploy-ops"), "100 bytes")
	saves := filepath.Join(w.dir, "saves.jsonl")
	if err := os.WriteFile(saves, []byte(`{"content":"a\u0000b"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = w.cli("memory", "save-batch", saves, "--scope", "project=atlas,agent=deploy-ops")
	if r.code == 0 || !strings.Contains(r.stderr, "control character U+0000") {
		t.Errorf("NUL in content: exit %d, %q", r.code, r.stderr)
	}
	jl := filepath.Join(w.dir, "bom.jsonl")
	line := `{"id":"01K00000000000000000000001","scope":{"project":"atlas"},"kind":"fact","content":"with a bom","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`
	if err := os.WriteFile(jl, []byte("\xef\xbb\xbf"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, w.cli("memory", "import", jl), "import with a BOM")
}

// TestMCPLimits: through the real MCP wire protocol, a content over the
// limit is refused naming limits.content; a message larger than the server
// reads is answered with a JSON-RPC error and the server keeps serving; a
// target object with an unknown key is refused.
func TestMCPLimits(t *testing.T) {
	t.Parallel()
	dir, agentFile := mcpWorkspace(t)
	cs := mcpSession(t, dir, agentFile)
	ctx := context.Background()
	call := func(args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSave, Arguments: args})
	}
	text := func(res *mcp.CallToolResult) string {
		if res == nil {
			return ""
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	res, err := call(map[string]any{"kind": "fact", "content": strings.Repeat("b", 70<<10)})
	if err != nil || !res.IsError || !strings.Contains(text(res), "limits.content") {
		t.Logf("answer: %s", text(res))
		t.Errorf("70 KiB content: %v, %+v; want a tool error naming limits.content", err, res)
	}
	_, err = call(map[string]any{"kind": "fact", "content": strings.Repeat("c", 3<<20)})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 3 MiB message: %v; want a JSON-RPC error", err)
	}
	res, err = call(map[string]any{"kind": "fact", "content": "x", "target": map[string]any{"primitive": "judgment", "domain": "billing", "slot": "heuristics", "sneaky": 1}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "sneaky") {
		t.Logf("answer: %s", text(res))
		t.Errorf("target with an unknown key: %v, %+v; want refused naming it", err, res)
	}
	res, err = call(map[string]any{"kind": "fact", "content": "the server still serves"})
	if err != nil || res.IsError {
		t.Errorf("after the oversized message: %v, %s", err, text(res))
	}
}

// TestLedgerOpFilterChecked: `memory ledger --op` takes ledger ops only. A
// misspelt op (promoted for promote) matched nothing and printed nothing
// with exit 0, as if no entry of that op existed; it is refused now (exit
// 2) with the ops and the nearest one, as --kind refuses a bad kind.
func TestLedgerOpFilterChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	saveJSON(t, dir, db, "--content", "a fact", "--target", "background.projectContext.k")
	for _, tc := range []struct {
		ops, want string
	}{
		{"promoted", `--op "promoted": not a ledger op (did you mean "promote"?); want write, supersede, invalidate, delete, corroborate, promote, demote, propose, approve, reject, expire, import, conflict, token-create or token-revoke`},
		{"write,bogus", `--op "bogus": not a ledger op; want write, `},
	} {
		r := mem(t, dir, db, "ledger", "--op", tc.ops)
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "agent-ls memory ledger: "+tc.want) {
			t.Errorf("ledger --op %s: exit %d, stdout %q, stderr %q; want 2 and %q", tc.ops, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	r := mustOK(t, mem(t, dir, db, "ledger", "--op", "promote,write"), "ledger --op promote,write")
	if n := strings.Count(r.stdout, "\n"); n != 2 || !strings.Contains(r.stdout, " promote ") || !strings.Contains(r.stdout, " write ") {
		t.Errorf("ledger --op promote,write printed %d lines, want the write and the promote:\n%s", n, r.stdout)
	}
}
