package engine

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/trust"
	"github.com/agent-ls/agent-ls/workspace"
)

// Request is what a surface knows when it starts acting.
type Request struct {
	// Start is the file or directory the workspace is found from (the
	// working directory, an agent file).
	Start string
	// Dir resolves a relative Store ("" is Start).
	Dir string
	// Store is an explicit store location (--store, initializationOptions);
	// "" is the workspace's.
	Store string
	// Actor is the surface's explicit actor ("" when unset).
	Actor string
	// Getenv reads USER for the default human actor.
	Getenv func(string) string
}

// Session is a resolved workspace, actor, view and store location, with
// the opener that reaches the store.
type Session struct {
	Workspace *workspace.Workspace
	// Location is the store: an absolute file path or a database URL.
	Location    string
	Actor       store.Actor
	ActorSource ActorSource
	View        View
	Opener      Opener
	// StoreOptions are the options a verb that opens the store itself
	// (the token verbs) passes to Open, ReadOnly set per call: the
	// surface's clock and lock timeout. Zero is the defaults.
	StoreOptions store.Options
}

// Resolve finds the workspace around r.Start, the store location and the
// actor. An invalid workspace config or actor is an error (file:line:col
// where there is a file), whatever else the request names: the config
// names the actor, and nothing falls back past it.
func Resolve(o Opener, r Request) (*Session, error) {
	ws, err := workspace.Find(r.Start)
	if err != nil {
		return nil, err
	}
	loc := ws.StorePath
	if r.Store != "" {
		dir := r.Dir
		if dir == "" {
			dir = r.Start
		}
		loc = StoreLocation(dir, r.Store)
	}
	a, src, err := trust.ResolveActor(r.Actor, ws, r.Getenv)
	if err != nil {
		return nil, err
	}
	return &Session{Workspace: ws, Location: loc, Actor: a, ActorSource: src, View: trust.ViewOf(a, ws.Config.Scope), Opener: o}, nil
}

// Open opens the session's store (OpenStore).
func (s *Session) Open(ctx context.Context, opts store.Options) (store.Store, error) {
	return OpenStore(ctx, s.Opener, s.Location, opts)
}

// ResolveActor decides who acts: explicit (a flag; "" when unset), else the
// workspace's `actor:`, else human:$USER. An unusable config or an actor
// that does not parse is an error, never a fallback.
func ResolveActor(explicit string, ws *workspace.Workspace, getenv func(string) string) (store.Actor, ActorSource, error) {
	return trust.ResolveActor(explicit, ws, getenv)
}

// ViewOf is a's view of the records inside base.
func ViewOf(a store.Actor, base map[string]string) View { return trust.ViewOf(a, base) }

// NotFound is the error for a record id that does not exist or is not in
// the actor's view: the two answer alike.
func NotFound(id string) error { return trust.NotFound(id) }

// MayImport reports whether a may import records (humans only).
func MayImport(a store.Actor) bool { return trust.Decide(a, trust.OpImport, nil) != trust.Refuse }

// MayDecide reports whether a may approve or reject proposals (humans
// only), for surfaces that offer those actions.
func MayDecide(a store.Actor) bool {
	return trust.Decide(a, trust.OpApprove, nil) != trust.Refuse && trust.Decide(a, trust.OpReject, nil) != trust.Refuse
}

// Confine is the one rule for what agent a request may act for. For a
// view that is not confined (a human, the system) it returns scope as is.
// For an agent actor, a scope naming another agent, or an agent file
// (fileAgent, "" when none) of another agent, is refused with
// store.ErrForbidden; the returned scope (a copy) names the actor's agent.
func Confine(v View, scope map[string]string, fileAgent string) (map[string]string, error) {
	if !v.Confined() {
		return scope, nil
	}
	if err := v.ForeignAgent(scope[store.AgentKey]); err != nil {
		return nil, err
	}
	if fileAgent != "" {
		if err := v.ForeignAgent(fileAgent); err != nil {
			return nil, err
		}
	}
	out := maps.Clone(scope)
	if out == nil {
		out = map[string]string{}
	}
	out[store.AgentKey] = v.Agent
	return out, nil
}

// ConfineFile refuses an agent actor the memories of an agent file that is
// not its own: an agent reads and acts on its own records and shared ones
// only. A file with schema errors (cfg nil) names no agent, so an agent
// actor gets nothing from it either. Humans and the system may work on any
// agent's file.
func ConfineFile(v View, cfg *schema.AgentConfig) error {
	if !v.Confined() {
		return nil
	}
	if cfg == nil {
		return &forbidden{msg: v.Actor.String() + " cannot use the memories of a file with schema errors (it names no agent)"}
	}
	return v.ForeignAgent(cfg.RoleTemplate.Name)
}

type forbidden struct{ msg string }

func (e *forbidden) Error() string { return store.ErrForbidden.Error() + ": " + e.msg }
func (e *forbidden) Unwrap() error { return store.ErrForbidden }

// AgentSpec says which agent an Agent acts for, over which store.
type AgentSpec struct {
	// Store is a Store, an Update's Tx, or store.ReadOnly of a View's
	// Reader (for a surface that only reads).
	Store store.Tx
	// Workspace is the workspace (its config: promotion, budgets, eval);
	// nil is an empty config.
	Workspace *workspace.Workspace
	// Agent is the authored config (nil when none was found).
	Agent *schema.AgentConfig
	// Name is the agent's name when Agent is nil ("" for the shared
	// records).
	Name string
	// Scope is the base scope; the agent key is set from Agent (or Name).
	Scope map[string]string
	Now   func() time.Time
	// Evaluator runs the eval gate (nil: none; EvaluatorFor is the
	// workspace's eval.command). Surfaces that answer interactively (the
	// language server) pass none: an eval may take minutes.
	Evaluator Evaluator
	Logger    *slog.Logger
	// ChainCheck verifies Store's ledger chain where a read shows what the
	// ledger says (evolve.Config.ChainCheck); nil checks it every time.
	ChainCheck func(ctx context.Context) error
}

// NewAgent returns the engine of one agent's view of a store: every gated
// verb (save, promote, demote, approve, ...) runs on it.
func NewAgent(sp AgentSpec) *Agent {
	var cfg schema.WorkspaceConfig
	if sp.Workspace != nil {
		cfg = sp.Workspace.Config
	}
	scope := maps.Clone(sp.Scope)
	if scope == nil {
		scope = map[string]string{}
	}
	name := sp.Name
	if sp.Agent != nil {
		name = sp.Agent.RoleTemplate.Name
	}
	if name != "" {
		scope[store.AgentKey] = name
	}
	return newAgent(sp, cfg, scope)
}
