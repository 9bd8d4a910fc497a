package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/agent-ls/agent-ls/mcp"
)

// mcpWorkspace is a temp workspace (project scope atlas) holding the
// support-bot agent file; its store is the default .agent-memory/memory.db.
func mcpWorkspace(t *testing.T) (dir, agentFile string) {
	t.Helper()
	dir = t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agentFile = filepath.Join(dir, "support.agent.yaml")
	if err := os.WriteFile(agentFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte("scope:\n  project: atlas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, agentFile
}

// mcpSession starts the built `agent-ls mcp` in dir with args and connects
// the SDK client over its stdio.
func mcpSession(t *testing.T, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, agentLSBin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = testLog{t}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to agent-ls mcp: %v", err)
	}
	return cs
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func mcpSave(t *testing.T, cs *mcp.ClientSession, args map[string]any) mcpserver.SaveOutput {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolSave, Arguments: args})
	if err != nil {
		t.Fatalf("memory_save: %v", err)
	}
	if res.IsError {
		t.Fatalf("memory_save %v: %v", args, res.Content)
	}
	var out mcpserver.SaveOutput
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMCPUsage(t *testing.T) {
	t.Parallel()
	dir, _ := mcpWorkspace(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp", "--help"}, exitOK, "Usage: agent-ls mcp AGENT_FILE"},
		{[]string{"mcp"}, exitUsage, "agent-ls mcp: want the AGENT_FILE (or --agent FILE)"},
		{[]string{"mcp", "--agent", "support.agent.yaml", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"mcp", "--agent", "missing.agent.yaml"}, exitUsage, "missing.agent.yaml"},
		{[]string{"mcp", "--agent", "support.agent.yaml", "--scope", "nope"}, exitUsage, "--scope"},
		{[]string{"mcp", "--bogus"}, exitUsage, "--help"},
		{[]string{"mcp", "--agent", "support.agent.yaml", "--conversation", "c\x1b[2J"}, exitUsage, `--conversation "c\x1b[2J": contains a control character`},
		// The run was taken and every save then failed on it.
		{[]string{"mcp", "--agent", "support.agent.yaml", "--run", "r\x1b[2J"}, exitUsage, "--run: control character U+001B"},
	}
	for _, tt := range tests {
		r := runBin(t, dir, "", nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
			t.Errorf("%v: exit %d (want %d), stdout %q stderr %q, want %q", tt.args, r.code, tt.code, r.stdout, r.stderr, tt.want)
		}
	}
}

// TestMCPEndToEnd: two conversations of a real agent runtime talk to the
// built `agent-ls mcp` over stdio; the built `agent-ls render` and an
// `agent-ls serve` session then show what the agent learned, with its ids.
func TestMCPEndToEnd(t *testing.T) {
	t.Parallel()
	dir, agentFile := mcpWorkspace(t)
	fact := "Deploys to the shop freeze on Fridays after 15:00 CET"
	lesson := "Offer an exchange before a refund when the size is wrong"

	// Conversation 1: a project fact and a lesson.
	cs := mcpSession(t, dir, "--agent", "support.agent.yaml", "--conversation", "conv-1", "--run", "run-1")
	f := mcpSave(t, cs, map[string]any{"kind": "fact", "content": fact, "target": "background.projectContext.deploy_window"})
	l1 := mcpSave(t, cs, map[string]any{"kind": "fact", "content": lesson,
		"target": map[string]any{"primitive": "judgment", "domain": "refunds", "slot": "heuristics"}})
	if f.Status != "saved" || f.State != "promoted" || l1.Status != "saved" || l1.State != "candidate" {
		t.Fatalf("conversation 1: fact %+v, lesson %+v", f, l1)
	}
	if l1.Record.ConversationID != "conv-1" || l1.Record.RunID != "run-1" {
		t.Fatalf("provenance from the start flags: %+v", l1.Record)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	// Between conversations the candidate is not in the prompt.
	r := runBin(t, dir, "", nil, "render", agentFile)
	if r.code != exitOK || strings.Contains(r.stdout, lesson) || !strings.Contains(r.stdout, fact) {
		t.Fatalf("render after conversation 1 (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Conversation 2 teaches the same lesson.
	cs = mcpSession(t, dir, "--agent", agentFile, "--conversation", "conv-2")
	l2 := mcpSave(t, cs, map[string]any{"kind": "fact", "content": lesson, "target": "judgment.refunds.heuristics"})
	if !l2.Corroborated || l2.ID != l1.ID || l2.State != "promoted" || l2.Record.Conversations != 2 {
		t.Fatalf("conversation 2: %+v", l2)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolLearnings, Arguments: map[string]any{"since": "1h"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_learnings: %v %v", err, res)
	}
	var ls mcpserver.LearningsOutput
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &ls); err != nil {
		t.Fatal(err)
	}
	var learned []string
	for _, l := range ls.Learnings {
		learned = append(learned, l.Op+" "+l.RecordID)
	}
	if !slices.Contains(learned, "promote "+l1.ID) || !slices.Contains(learned, "promote "+f.ID) {
		t.Fatalf("learnings = %v, want promotions of %s and %s", learned, f.ID, l1.ID)
	}
	cs.Close()

	// The built render shows both lines with their memory ids.
	r = runBin(t, dir, "", nil, "render", agentFile, "--format", "json")
	if r.code != exitOK {
		t.Fatalf("render: exit %d: %s", r.code, r.stderr)
	}
	var rendered struct {
		Sections []struct {
			Fragments []struct {
				Text      string   `json:"text"`
				MemoryIDs []string `json:"memoryIds"`
			} `json:"fragments"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rendered); err != nil {
		t.Fatalf("render json: %v\n%s", err, r.stdout)
	}
	found := map[string]bool{}
	for _, s := range rendered.Sections {
		for _, fr := range s.Fragments {
			for _, want := range []struct{ text, id string }{{fact, f.ID}, {lesson, l1.ID}} {
				if strings.Contains(fr.Text, want.text) && slices.Contains(fr.MemoryIDs, want.id) {
					found[want.id] = true
				}
			}
		}
	}
	if !found[f.ID] || !found[l1.ID] {
		t.Fatalf("render json lacks the fact %s or the heuristic %s with their ids:\n%s", f.ID, l1.ID, r.stdout)
	}
	r = runBin(t, dir, "", nil, "render", agentFile, "--annotate")
	if !strings.Contains(r.stdout, f.ID) || !strings.Contains(r.stdout, l1.ID) {
		t.Fatalf("annotated render lacks the ids:\n%s", r.stdout)
	}

	// An editor session shows them as inlay hints.
	hints := lspInlayHints(t, dir, agentFile)
	for _, want := range []struct{ text, id string }{{fact, f.ID}, {lesson, l1.ID}} {
		ok := false
		for _, h := range hints {
			if strings.Contains(h.Label, want.text) && h.RecordID == want.id {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no inlay hint for %q (%s) in %+v", want.text, want.id, hints)
		}
	}
}

type lspHint struct {
	Label    string
	RecordID string
}

// startServe starts the built `agent-ls serve` with args in dir, stderr
// going to stderr, and returns the process and a connection over its pipes.
func startServe(ctx context.Context, t *testing.T, dir string, stderr io.Writer, args ...string) (*exec.Cmd, *lspConn) {
	t.Helper()
	cmd := exec.CommandContext(ctx, agentLSBin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &lspConn{t: t, w: stdin, r: bufio.NewReader(stdout)}
}

// lspInlayHints runs the built `agent-ls serve` over pipes, opens the agent
// file and returns its inlay hints.
func lspInlayHints(t *testing.T, dir, agentFile string) []lspHint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, c := startServe(ctx, t, dir, testLog{t}, "--no-watch")
	defer cmd.Wait()
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
	raw := c.call("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}})
	var hs []struct {
		Label string `json:"label"`
		Data  struct {
			RecordID string `json:"recordId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &hs); err != nil {
		t.Fatalf("inlay hints %s: %v", raw, err)
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)
	c.w.Close()
	out := make([]lspHint, len(hs))
	for i, h := range hs {
		out[i] = lspHint{h.Label, h.Data.RecordID}
	}
	return out
}

// lspConn is a minimal LSP client: Content-Length framing, requests answered
// in order, server-to-client requests answered with null.
type lspConn struct {
	t    *testing.T
	w    io.WriteCloser
	r    *bufio.Reader
	next int
}

func (c *lspConn) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("write to agent-ls serve: %v", err)
	}
}

func (c *lspConn) notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"method": method, "params": params})
}

func (c *lspConn) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.next++
	id := c.next
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.send(msg)
	for {
		m := c.read()
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m, &env); err != nil {
			c.t.Fatalf("bad message %s: %v", m, err)
		}
		switch {
		case env.Method != "" && env.ID != nil: // a request from the server
			c.send(map[string]any{"id": env.ID, "result": nil})
		case env.Method != "": // a notification
		case string(env.ID) == strconv.Itoa(id):
			if env.Error != nil {
				c.t.Fatalf("%s: %s", method, env.Error.Message)
			}
			return env.Result
		}
	}
}

func (c *lspConn) read() []byte {
	c.t.Helper()
	n := -1
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("read from agent-ls serve: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				c.t.Fatalf("bad header %q", line)
			}
		}
	}
	if n < 0 {
		c.t.Fatal("message without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return body
}
