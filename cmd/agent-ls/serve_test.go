package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeExitsWhileLinting: `exit` ends `agent-ls serve` (status 0 after
// shutdown) while the lint pass over a big store is still running. The
// workspace is bench/gen's: 1,000 promoted records and 5,000 heuristic
// candidates of the agent, which the contradiction rule compares pairwise.
// Before lint.Run looked at its context the server waited for the pass
// (over a minute here then; under 2 s since the rule analyzes each text
// once, so this is now mostly a hang guard of the exit path, and
// lsp.TestLintEngineCancelled pins the cancellation itself).
func TestServeExitsWhileLinting(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a store of 11,000 records")
	}
	dir := t.TempDir()
	gen := exec.Command("go", "run", "../../bench/gen", "-dir", dir, "-records", "11000", "-files", "1")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("bench/gen: %v\n%s", err, out)
	}
	agentFile := filepath.Join(dir, "bench.agent.yaml")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, c := startServe(ctx, t, dir, testLog{t})
	root := (&url.URL{Scheme: "file", Path: dir}).String()
	uri := (&url.URL{Scheme: "file", Path: agentFile}).String()
	c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": root,
		"capabilities":     map[string]any{"textDocument": map[string]any{"inlayHint": map[string]any{}}},
		"workspaceFolders": []any{map[string]any{"uri": root, "name": "ws"}}})
	c.notify("initialized", map[string]any{})
	text, err := os.ReadFile(agentFile)
	if err != nil {
		t.Fatal(err)
	}
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "yaml", "version": 1, "text": string(text)}})
	// The schema diagnostics come first; the lint pass starts after them.
	for {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if err := json.Unmarshal(c.read(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Method != "" && m.ID != nil {
			c.send(map[string]any{"id": m.ID, "result": nil})
		}
		if m.Method == "textDocument/publishDiagnostics" && m.Params.URI == uri {
			break
		}
	}
	// Let the lint pass get under way (it reads the store first). A slower
	// machine only makes the test weaker, never wrong.
	time.Sleep(time.Second)
	c.call("shutdown", nil)
	c.notify("exit", nil)
	go func() { _, _ = io.Copy(io.Discard, c.r) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("agent-ls serve exited with status %d after shutdown and exit, want 0", ee.ExitCode())
		}
		if err != nil {
			t.Fatalf("agent-ls serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatal("agent-ls serve did not exit within 10 s of shutdown and exit (a hang guard: it exits at once)")
	}
}

// TestServeMemProfile: `agent-ls serve --memprofile FILE` writes a heap
// profile (gzipped pprof) when the server exits after shutdown and exit,
// to a new file or an empty one (TestServeProfileRefusesExisting: any
// other is refused, as is a path that cannot be created, before serving).
func TestServeMemProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pprof")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		written    bool
	}{
		{"written", filepath.Join(dir, "heap.pprof"), true},
		{"empty file", empty, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr strings.Builder
			cmd, c := startServe(ctx, t, dir, &stderr, "--no-watch", "--memprofile", tc.path)
			root := (&url.URL{Scheme: "file", Path: dir}).String()
			c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": root, "capabilities": map[string]any{}})
			c.notify("initialized", map[string]any{})
			c.call("shutdown", nil)
			c.notify("exit", nil)
			go func() { _, _ = io.Copy(io.Discard, c.r) }()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("agent-ls serve: %v\n%s", err, stderr.String())
			}
			data, err := os.ReadFile(tc.path)
			if !tc.written {
				if err == nil {
					t.Fatalf("%s was written", tc.path)
				}
				if !strings.Contains(stderr.String(), "memprofile") {
					t.Errorf("stderr does not report the failed profile: %q", stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("no profile: %v", err)
			}
			if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
				t.Fatalf("profile is not gzipped pprof data: % x", data[:min(len(data), 8)])
			}
		})
	}
}
