// Command runtime is a minimal agent runtime showing three of the four ways
// a runtime gets an agent's prompt from agent-ls and hands back what the
// agent learned (docs/RUNTIME.md, "From an agent runtime", numbered as
// there; the third, one MCP service over HTTP, is docs/SERVICE.md's):
//
//  1. MCP over stdio, one server per conversation: agent-ls mcp AGENT_FILE
//     --conversation ID; every memory_save carries that provenance.
//  2. One long-lived MCP server for many conversations: each tools/call
//     names its conversation in the request's _meta
//     ("agent-ls/conversationId", "agent-ls/runId").
//  4. No MCP: agent-ls render AGENT_FILE --recall --query FIRST_MESSAGE
//     --summarize --format json gives the composed system prompt and the
//     recall block for the runtime to build its own prompt.
//
// Usage: go run ./examples/runtime [-agent-ls PATH] [-dir DIR]. It works in
// a scratch workspace (DIR, default a new temporary directory) holding
// deploy.agent.yaml, and prints one line per step. make test runs it
// (test/repo.TestRuntimeExample).
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed deploy.agent.yaml
var agentFile []byte

func main() {
	bin := flag.String("agent-ls", "agent-ls", "the agent-ls binary")
	dir := flag.String("dir", "", "the scratch workspace (default: a new temporary directory)")
	flag.Parse()
	// The servers run in the scratch workspace: resolve a relative path
	// (bin/agent-ls) against this directory, a bare name on PATH.
	path, err := exec.LookPath(*bin)
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runtime: -agent-ls:", err)
		os.Exit(1)
	}
	if err := run(context.Background(), path, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "runtime:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "agent-ls-runtime-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy.agent.yaml"), agentFile, 0o644); err != nil {
		return err
	}
	// A workspace config pins the store (docs/STORE.md, "Where the store lives").
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte("store: .agent-memory/memory.db\nactor: human:ops\n"), 0o644); err != nil {
		return err
	}

	// Way 1: one MCP server per conversation, provenance from the flags.
	perConv, err := connect(ctx, bin, dir, "mcp", "deploy.agent.yaml", "--conversation", "conv-201", "--run", "run-1")
	if err != nil {
		return err
	}
	st, err := save(ctx, perConv, nil, "background.projectContext.deploy_window", "Deploys go out on Thursdays after 14:00 ET")
	perConv.Close()
	if err != nil {
		return err
	}
	fmt.Printf("1. per-conversation server: memory_save %s (conversation %s)\n", st.summary(), st.Record.ConversationID)

	// Way 2: one long-lived server; each call names its conversation in
	// _meta, so a lesson heard in two conversations earns its promotion.
	shared, err := connect(ctx, bin, dir, "mcp", "deploy.agent.yaml")
	if err != nil {
		return err
	}
	defer shared.Close()
	lesson := "Pause the rollout when the worker queue depth doubles"
	for _, conv := range []string{"conv-202", "conv-203"} {
		meta := map[string]any{"agent-ls/conversationId": conv, "agent-ls/runId": "run-" + conv}
		st, err := save(ctx, shared, meta, "judgment.deploy.heuristics", lesson)
		if err != nil {
			return err
		}
		fmt.Printf("2. long-lived server, _meta %s: memory_save %s\n", conv, st.summary())
	}

	// Way 3: the runtime builds its own prompt from render's JSON.
	render := exec.CommandContext(ctx, bin, "render", "deploy.agent.yaml", "--recall", "--query", "can I deploy today?",
		"--summarize", "--format", "json")
	render.Dir, render.Stderr = dir, os.Stderr
	out, err := render.Output()
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	var prompt struct {
		Agent  string `json:"agent"`
		Text   string `json:"text"`
		Recall *struct {
			Text string `json:"text"`
		} `json:"recall"`
	}
	if err := json.Unmarshal(out, &prompt); err != nil {
		return fmt.Errorf("render --format json: %w", err)
	}
	for _, want := range []string{"Thursdays after 14:00 ET", lesson} {
		fmt.Printf("4. render --recall --summarize --format json: agent %s, prompt holds %q: %v\n", prompt.Agent, want, strings.Contains(prompt.Text, want))
	}
	return nil
}

// connect starts `agent-ls ARGS...` in dir and opens an MCP session over
// its stdio.
func connect(ctx context.Context, bin, dir string, args ...string) (*mcp.ClientSession, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	client := mcp.NewClient(&mcp.Implementation{Name: "example-runtime", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("agent-ls %s: %w", strings.Join(args, " "), err)
	}
	return cs, nil
}

// saved is the part of memory_save's answer the example prints.
type saved struct {
	Status       string `json:"status"`
	Tier         string `json:"tier"`
	State        string `json:"state"`
	Corroborated bool   `json:"corroborated"`
	Record       struct {
		ConversationID string `json:"conversationId"`
	} `json:"record"`
}

func (s saved) summary() string {
	c := ""
	if s.Corroborated {
		c = ", corroborated"
	}
	return fmt.Sprintf("%s (%s tier, %s%s)", s.Status, s.Tier, s.State, c)
}

// save calls memory_save with meta as the request's _meta.
func save(ctx context.Context, cs *mcp.ClientSession, meta map[string]any, target, content string) (saved, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "memory_save",
		Arguments: map[string]any{"content": content, "target": target}})
	if err != nil {
		return saved{}, err
	}
	if res.IsError {
		return saved{}, fmt.Errorf("memory_save: %v", res.Content)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return saved{}, err
	}
	var s saved
	return s, json.Unmarshal(data, &s)
}
