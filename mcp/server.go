// Package mcpserver is the agents' side of agent-ls: the memory toolbox over
// the Model Context Protocol (memory_save, memory_search, memory_list,
// memory_invalidate, memory_learnings, compose and a composed-prompt
// resource), bound to one agent and scope for the server's whole life.
//
// Every tool acts as agent:<name> through the evolve engine, so no tool can
// approve, promote past a gate, delete, or reach another agent's records (a
// foreign id answers exactly like a missing one). The store is opened per
// call, so an editor or the CLI can use it between calls; the calls of one
// server wait their turn for it (engine.StoreQueue).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// OpenFunc opens the memory store for one tool call; readOnly calls must not
// create it. The server closes what it opens.
type OpenFunc = engine.OpenFunc

// Config is what a Server needs. AgentFile and Open are required.
type Config struct {
	// AgentFile is the authored agent file; roleTemplate.name is the agent
	// key. It is re-read on every call, so edits apply without a restart.
	AgentFile string
	// Workspace carries promotion, budget and staleness settings.
	Workspace schema.WorkspaceConfig
	// Scope is the base scope (an agent key in it is replaced by the agent's name).
	Scope map[string]string
	// Provenance is the conversation and run of saves, set by the runtime
	// that started the server (--conversation, --run); a request's _meta
	// (MetaConversationID, MetaRunID) overrides it for a long-lived server.
	Provenance schema.Provenance
	Open       OpenFunc
	// Queue is the line this process's calls wait in for the store
	// (engine.QueueFor of its location); nil is a queue of the server's own.
	Queue *engine.StoreQueue
	Now   func() time.Time
	// Evaluator runs the eval gate where the engine needs one (nil: none).
	Evaluator engine.Evaluator
	Logger    *slog.Logger
	// Version is reported to clients.
	Version string
	// ReadFile reads the agent file; nil is workspace.ReadFile (regular files only).
	ReadFile func(string) ([]byte, error)
}

// Server is an MCP server bound to one agent.
type Server struct {
	cfg   Config
	name  string
	base  map[string]string // without the agent key
	actor store.Actor
	srv   *mcp.Server
	// saveTool is memory_save's registration (its schema follows the agent file).
	saveTool saveTool
}

// ResourceURI is the URI of the composed-prompt resource of agent name.
func ResourceURI(name string) string { return "agent-ls://compose/" + name }

// New loads the agent file (a malformed one is an error naming file:line:col)
// and returns a server with every tool and the composed-prompt resource.
func New(c Config) (*Server, error) {
	if c.Open == nil {
		return nil, errors.New("mcp server: no store opener")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Queue == nil {
		c.Queue = engine.NewStoreQueue()
	}
	if c.ReadFile == nil {
		c.ReadFile = workspace.ReadFile
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	conv, err := schema.NormalizeConversationID(c.Provenance.ConversationID)
	if err != nil {
		return nil, err // a *schema.ValueError naming the conversation id
	}
	c.Provenance.ConversationID = conv
	if err := checkRunID(c.Workspace.Limits, c.Provenance.RunID); err != nil {
		return nil, err // a *schema.LimitError naming the run id
	}
	s := &Server{cfg: c, base: maps.Clone(c.Scope)}
	cfg, err := s.loadAgent()
	if err != nil {
		return nil, err
	}
	s.name = cfg.RoleTemplate.Name
	if s.base == nil {
		s.base = map[string]string{}
	}
	delete(s.base, store.AgentKey)
	s.actor = store.Actor{Kind: store.ActorAgent, Name: s.name}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "agent-ls", Title: "agent-ls memory", Version: c.Version},
		&mcp.ServerOptions{Logger: c.Logger, Instructions: instructions(s.name)})
	if err := s.register(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

func instructions(name string) string {
	return "Long-term memory of agent " + name + ". Save what you learn with memory_save (a target names the " +
		"prompt slot it belongs in; lessons become part of the prompt only when recurrence, an eval or a human " +
		"approves them). Search before saving. compose shows the prompt you run with."
}

// Agent is the agent key the server is bound to.
func (s *Server) Agent() string { return s.name }

// Actor is who every tool acts as: agent:<name>.
func (s *Server) Actor() store.Actor { return s.actor }

// MCP returns the SDK server (to connect it to another transport).
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one session over t until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.srv.Run(ctx, t)
}

// ServeStdio serves one session over newline-delimited JSON-RPC on in and
// out (a process's stdin and stdout) through GuardFrames with o: a line
// that is not a JSON-RPC message is answered with an error and the server
// reads on, and every request read before the input ends is answered
// before ServeStdio returns (within o.Drain). The end of input is a clean
// end (nil).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, o FrameOptions) error {
	if o.Logger == nil {
		o.Logger = s.cfg.Logger
	}
	r, w := GuardFrames(in, out, o)
	// GuardFrames bounds the message size; the SDK's own cap is off.
	err := s.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: -1})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (s *Server) loadAgent() (*schema.AgentConfig, error) {
	data, err := s.cfg.ReadFile(s.cfg.AgentFile)
	if err != nil {
		return nil, fmt.Errorf("agent file: %w", err)
	}
	cfg, err := engine.LoadAgent(s.cfg.AgentFile, data)
	if err != nil {
		return nil, err
	}
	if cfg.RoleTemplate.Name == "" {
		return nil, fmt.Errorf("%s: roleTemplate.name is empty", s.cfg.AgentFile)
	}
	if s.name != "" && cfg.RoleTemplate.Name != s.name {
		return nil, fmt.Errorf("%s: roleTemplate.name changed from %q to %q; restart the server", s.cfg.AgentFile, s.name, cfg.RoleTemplate.Name)
	}
	return cfg, nil
}

// withStore opens the store, runs fn and closes it (engine.WithStore:
// reads run on one snapshot), in its turn among this process's calls
// (Config.Queue): concurrent calls wait for each other here instead of
// racing for the store's file lock, whose timeout is left to mean another
// process.
func (s *Server) withStore(ctx context.Context, readOnly bool, fn func(store.Tx) error) error {
	return s.cfg.Queue.WithStore(ctx, s.cfg.Open, !readOnly, fn)
}

// engine is the evolve engine of this agent over st.
func (s *Server) engine(st store.Tx) (*engine.Agent, error) {
	cfg, err := s.loadAgent()
	if err != nil {
		return nil, err
	}
	return engine.NewAgent(engine.AgentSpec{Store: st, Workspace: &workspace.Workspace{Config: s.cfg.Workspace}, Agent: cfg, Scope: s.base,
		Now: s.cfg.Now, Evaluator: s.cfg.Evaluator, Logger: s.cfg.Logger, ChainCheck: s.cfg.Queue.ChainCheck(st)}), nil
}

// saveSpec is the engine's save door for this agent over st: the server's
// scope (the workspace scope plus --scope), acting as agent:<name>.
func (s *Server) saveSpec(st store.Tx) (engine.SaveSpec, error) {
	cfg, err := s.loadAgent()
	if err != nil {
		return engine.SaveSpec{}, err
	}
	return engine.SaveSpec{Store: st, Workspace: &workspace.Workspace{Config: s.cfg.Workspace}, View: s.view(), Scope: s.base, Agent: cfg,
		Now: s.cfg.Now, Evaluator: s.cfg.Evaluator, Logger: s.cfg.Logger}, nil
}

// The _meta keys a runtime sets on a tools/call request to name the
// conversation and run it belongs to (docs/MCP.md). The model writes tool
// arguments, never _meta.
const (
	MetaConversationID = "agent-ls/conversationId"
	MetaRunID          = "agent-ls/runId"
)

// checkRunID is the rule of a run id (schema.Limits.CheckID, as the store
// checks provenance.runId), applied where the runtime gives it: the
// server's run at start, a request's _meta.
func checkRunID(l schema.Limits, run string) error { return l.CheckID("run id", run) }

// provenance is the conversation and run of one tool call: the request's
// _meta when it names a conversation (its run then comes from _meta too),
// else the server's. The conversation id is normalized
// (schema.NormalizeConversationID); a _meta value that is not a string, or
// an id with a control character, is an error.
func (s *Server) provenance(call *mcp.CallToolRequest) (schema.Provenance, error) {
	p := s.cfg.Provenance
	var meta map[string]any
	if call != nil && call.Params != nil {
		meta = call.Params.GetMeta()
	}
	str := func(key string) (string, bool, error) {
		v, ok := meta[key]
		if !ok || v == nil {
			return "", false, nil
		}
		sv, ok := v.(string)
		if !ok {
			return "", false, fmt.Errorf("_meta %q: want a string, got %T", key, v)
		}
		return sv, true, nil
	}
	conv, hasConv, err := str(MetaConversationID)
	if err != nil {
		return p, err
	}
	run, hasRun, err := str(MetaRunID)
	if err != nil {
		return p, err
	}
	if hasConv {
		p.ConversationID, p.RunID = conv, ""
	}
	if hasRun {
		if err := checkRunID(s.cfg.Workspace.Limits, run); err != nil {
			return p, fmt.Errorf("_meta %q: %w", MetaRunID, err)
		}
		p.RunID = run
	}
	if p.ConversationID, err = schema.NormalizeConversationID(p.ConversationID); err != nil {
		return p, fmt.Errorf("_meta %q: %w", MetaConversationID, err)
	}
	return p, nil
}

// view is this agent's view of the store (engine.View: inside the base
// scope, the agent's own records and shared ones).
func (s *Server) view() engine.View { return engine.ViewOf(s.actor, s.base) }

// instantiate composes the agent now or at at, with its recall block
// (query adds hits). Composing now is an instantiate: it records its
// overlay summary (the rotating candidate slice it shows, the conflicts it
// sees); composing at a past time replays and records nothing.
func (s *Server) instantiate(ctx context.Context, at, query string) (*engine.ComposeResult, engine.RecallBlock, error) {
	var res *engine.ComposeResult
	var block engine.RecallBlock
	err := s.withStore(ctx, at != "", func(st store.Tx) error {
		var err error
		res, err = engine.Compose(ctx, engine.ComposeRequest{AgentFile: s.cfg.AgentFile, Store: st, Scope: maps.Clone(s.base),
			At: at, Policy: engine.PolicyFrom(s.cfg.Workspace), Now: s.cfg.Now, ReadFile: s.cfg.ReadFile, Summarize: at == ""})
		if err != nil {
			return err
		}
		block, err = res.Recall(ctx, query)
		return err
	})
	return res, block, err
}
