package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// runMCP serves the memory toolbox over MCP on stdin/stdout, bound to one
// agent and scope. Stdout carries protocol messages only; logs go to stderr.
func runMCP(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("agent-ls mcp", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var agentFile, scopeFlag, conv, run, logLevel string
	sf := storeFlags{lockTimeout: bolt.DefaultLockTimeout}
	fs.StringVar(&agentFile, "agent", "", "the agent `file` the server is bound to (the same as the AGENT_FILE argument); its roleTemplate.name is the agent key")
	fs.StringVar(&scopeFlag, "scope", "", "base scope: "+scopeUsage)
	fs.StringVar(&conv, "conversation", "", "provenance conversation `id` of saves (a tool's conversationId wins)")
	fs.StringVar(&run, "run", "", "provenance run `id` of saves (a tool's runId wins)")
	fs.StringVar(&logLevel, "log-level", "warn", "stderr log `level`: debug, info, warn or error")
	sf.register(fs, sf)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "mcp", usage: "AGENT_FILE [--scope k=v,...] [--conversation ID] [--run ID] [--store PATH]",
			body: `Serves the agent's memory toolbox over the Model Context Protocol on stdio: memory_save,
memory_search, memory_list, memory_invalidate, memory_learnings, compose, and the resource
agent-ls://compose/<agent>. Every tool acts as agent:<name>: none can approve, promote past
a gate, delete, or reach another agent's records. The store is opened per call
(calls wait their turn for it). A line that is not a JSON-RPC message is answered with
a JSON-RPC error and the server reads on; at the end of input every request read is
answered before the server exits.
The agent file is the argument (--agent FILE is the same).`}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "mcp", err)
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "agent-ls mcp: %s\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	if len(pos) > 0 && agentFile == "" {
		agentFile, pos = pos[0], pos[1:]
	}
	if len(pos) > 0 {
		return usageFail(e.stderr, "mcp", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if agentFile == "" {
		return usageFail(e.stderr, "mcp", errors.New("want the AGENT_FILE (or --agent FILE)"))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(logLevel))); err != nil {
		return fail("--log-level %q: want debug, info, warn or error", logLevel)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	if !filepath.IsAbs(agentFile) {
		agentFile = filepath.Join(e.cwd, agentFile)
	}
	ws, err := workspace.ForFile(agentFile) // a file resolving outside its workspace is refused
	if err != nil {
		return fail("%v", err)
	}
	scope, err := withScopeFlag(ws.Config.Scope, scopeFlag)
	if err != nil {
		return fail("%v", err)
	}
	path := ws.StorePath
	if sf.path != "" {
		path = engine.StoreLocation(e.cwd, sf.path)
	}
	srv, err := mcpserver.New(mcpserver.Config{
		AgentFile:  agentFile,
		Workspace:  ws.Config,
		Scope:      scope,
		Provenance: schema.Provenance{ConversationID: conv, RunID: run},
		Open: func(ctx context.Context, readOnly bool) (store.Store, error) {
			return engine.OpenStore(ctx, e.opener(), path, store.Options{Now: e.now, LockTimeout: sf.lockTimeout, ReadOnly: readOnly, Logger: logger})
		},
		// The calls of this process wait their turn for the store.
		Queue:     engine.QueueFor(path),
		Now:       e.now,
		Evaluator: engine.EvaluatorFor(ws),
		Logger:    logger,
		Version:   versionString(),
	})
	if err != nil {
		return fail("%v", err)
	}
	// A line that is not a JSON-RPC message (or is over the limit) gets a
	// JSON-RPC error and the server reads on; every request read before the
	// end of input is answered before it exits.
	if err := srv.ServeStdio(ctx, e.stdin, e.stdout, mcpserver.FrameOptions{Max: mcpserver.MaxMessage(ws.Config.Limits)}); err != nil && !errors.Is(err, context.Canceled) {
		return fail("%v", err)
	}
	return exitOK
}
