package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// runMCP serves the memory toolbox over MCP on stdin/stdout, bound to one
// agent and scope (stdout carries protocol messages only; logs go to
// stderr), or, with --http, over streamable HTTP for every agent file of
// the workspace, a request's token deciding the agent (runMCPHTTP).
func runMCP(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("agent-ls mcp", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var agentFile, scopeFlag, conv, run, logLevel string
	sf := storeFlags{lockTimeout: bolt.DefaultLockTimeout}
	fs.StringVar(&agentFile, "agent", "", "the agent `file` the server is bound to (the same as the AGENT_FILE argument); its roleTemplate.name is the agent key")
	fs.StringVar(&scopeFlag, "scope", "", "base scope: "+scopeUsage)
	fs.StringVar(&conv, "conversation", "", "provenance conversation `id` of saves (a request's _meta \"agent-ls/conversationId\" wins; never a tool argument)")
	fs.StringVar(&run, "run", "", "provenance run `id` of saves (a request's _meta \"agent-ls/runId\" wins; never a tool argument)")
	fs.StringVar(&logLevel, "log-level", "", "stderr log `level`: debug, info, warn or error (default warn; info with --http)")
	hf := httpFlags{}
	fs.StringVar(&hf.addr, "http", "", "serve MCP over streamable HTTP at `addr` (HOST:PORT; 127.0.0.1:0 picks a free port) instead of stdio: every agent file of the workspace, a request's bearer token deciding the agent")
	fs.StringVar(&hf.tlsCert, "tls-cert", "", "with --http: TLS certificate `file` (PEM); required for a non-loopback address")
	fs.StringVar(&hf.tlsKey, "tls-key", "", "with --http: TLS private key `file` (PEM)")
	fs.Var(&hf.allowedHosts, "allowed-host", "with --http: a `host` header value to accept besides the listen address (host:port, or a host for any port; repeatable), e.g. the name a reverse proxy forwards")
	fs.Var(&hf.allowedOrigins, "allowed-origin", "with --http: a browser `origin` (scheme://host[:port]) allowed to call (repeatable); any other Origin header is refused")
	durationVar(fs, &hf.readHeaderTimeout, "read-header-timeout", 10*time.Second, "with --http: how long a client may take to send a request's headers")
	durationVar(fs, &hf.idleTimeout, "idle-timeout", 2*time.Minute, "with --http: how long an idle keep-alive connection stays open")
	durationVar(fs, &hf.writeTimeout, "write-timeout", 2*time.Minute, "with --http: how long a request may take, from its headers to the end of its answer")
	durationVar(fs, &hf.shutdownTimeout, "shutdown-timeout", 10*time.Second, "with --http: how long SIGINT/SIGTERM waits for requests in flight")
	fs.IntVar(&hf.maxServers, "max-agents", 64, "with --http: how many (agent file, scope) servers are kept ready (at least 1)")
	sf.register(fs, sf)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "mcp", usage: "AGENT_FILE [--scope k=v,...] [--conversation ID] [--run ID] [--store PATH] [flags]\n       agent-ls mcp --http ADDR [--tls-cert FILE --tls-key FILE] [--allowed-host H]... [--store LOC] [flags]",
			body: `Serves the agent's memory toolbox over the Model Context Protocol on stdio: memory_save,
memory_search, memory_list, memory_invalidate, memory_learnings, compose, and the resource
agent-ls://compose/<agent>. Every tool acts as agent:<name>: none can approve, promote past
a gate, delete, or reach another agent's records. The store is opened per call
(calls wait their turn for it). A line that is not a JSON-RPC message is answered with
a JSON-RPC error and the server reads on; at the end of input every request read is
answered before the server exits.
The agent file is the argument (--agent FILE is the same).

With --http ADDR it serves MCP's streamable HTTP transport at /mcp instead (stateless: any
request may reach any of several servers on one store) and prints the endpoint URL as its
first stdout line. No agent file is given: it serves every agent file of the workspace
around the working directory, and a request's token (Authorization: Bearer, made by
'agent-ls token create --agent FILE') decides the agent and scope; the model never does.
A request without a valid token gets 401; GET /healthz answers without one. Loopback by
default; a non-loopback address needs --tls-cert and --tls-key. The conversation and run
of a save come from the request's _meta, as on stdio. Deploying it: docs/SERVICE.md.
Over HTTP on a free loopback port (the first line printed is the URL):
  agent-ls mcp --http 127.0.0.1:0`}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "mcp", err)
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "agent-ls mcp: %s\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	level := slog.LevelWarn
	if logLevel == "" && hf.addr != "" {
		level = slog.LevelInfo // a service logs its requests
	}
	if logLevel != "" {
		if err := level.UnmarshalText([]byte(strings.ToUpper(logLevel))); err != nil {
			return fail("--log-level %q: want debug, info, warn or error", logLevel)
		}
	}
	if hf.addr != "" {
		if agentFile != "" || len(pos) > 0 || scopeFlag != "" || conv != "" || run != "" {
			return usageFail(e.stderr, "mcp", errors.New("--http serves every agent file of the workspace: a request's token decides the agent and scope, its _meta the conversation and run; give no AGENT_FILE, --scope, --conversation or --run"))
		}
		return runMCPHTTP(ctx, e, &hf, sf, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})))
	}
	for _, name := range []string{"tls-cert", "tls-key", "allowed-host", "allowed-origin", "read-header-timeout", "idle-timeout", "write-timeout", "shutdown-timeout", "max-agents"} {
		if flagSet(fs, name) {
			return usageFail(e.stderr, "mcp", fmt.Errorf("--%s goes with --http", name))
		}
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
	if err := checkProvenanceFlags(ws, conv, run); err != nil {
		return fail("%v", err)
	}
	path := ws.StorePath
	if sf.path != "" {
		path = engine.StoreLocation(e.cwd, sf.path)
	}
	opener, done := e.longLivedOpener()
	defer done()
	srv, err := mcpserver.New(mcpserver.Config{
		AgentFile:  agentFile,
		Workspace:  ws.Config,
		Scope:      scope,
		Provenance: schema.Provenance{ConversationID: conv, RunID: run},
		Open: func(ctx context.Context, readOnly bool) (store.Store, error) {
			return engine.OpenStore(ctx, opener, path, store.Options{Now: e.now, LockTimeout: sf.lockTimeout, ReadOnly: readOnly, Logger: logger})
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

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
