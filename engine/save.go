package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// Save has one door. `memory save`, `memory save-batch` and MCP's
// memory_save all go through Save or SaveBatch below, which apply, in
// order:
//
//  1. who acts: every request's actor is the view's (SaveSpec.View);
//  2. confinement (Confine): an agent actor saves into its own agent only,
//     and a file or scope naming another agent is store.ErrForbidden;
//  3. the scope rule (CheckVisible): a record no agent file of the
//     workspace would see is refused with the reason (SaveRefused, nothing
//     written) — SaveSpec.Scope is already Scope(workspace, --scope);
//  4. validation and reconciliation, in the store transaction: the
//     record's fields and the workspace's limits (store.ValidateWrite,
//     store.CheckLimits), the target's tier, near-duplicates,
//     contradictions and key conflicts (package evolve).
//
// The transaction rule, stated once: Save is one store transaction (the
// search for a near-duplicate and the write or corroboration commit
// together), except an agent's supersede with an evaluator configured,
// whose eval gate may run for minutes outside the store's writer lock;
// SaveBatch is always one transaction and never runs the eval gate (where
// Save would run it, the batch opens the demotion proposal instead).
//
// The language server's retarget (Agent.Retarget) writes through the same
// reconciling save inside package evolve, in the scope of the agent file
// being edited, which CheckVisible always passes.

// SaveSpec says who saves, into which scope of which store.
type SaveSpec struct {
	// Store is a Store or an Update's Tx.
	Store store.Tx
	// Workspace is the workspace (scope, agent files, limits, promotion);
	// nil is an empty config with no visibility check.
	Workspace *workspace.Workspace
	// View is the actor's view (ViewOf): it names who saves and confines
	// an agent actor.
	View View
	// Scope is the record's scope, Scope(workspace scope, --scope); its
	// agent key names the agent (for an agent actor, its own).
	Scope map[string]string
	// Agent is the authored config when the surface holds it (MCP, the
	// language server). Else AgentFile is read, else the workspace's agent
	// file named by the scope's agent key (none found: no authored checks).
	Agent     *schema.AgentConfig
	AgentFile string
	Now       func() time.Time
	// Evaluator runs the eval gate of a single Save (EvaluatorFor).
	Evaluator Evaluator
	Logger    *slog.Logger
}

// Save saves one memory through the door (see above). A refusal, a
// conflict and an unknown supersedes are answers; an invalid request is an
// error wrapping store.ErrInvalid, a foreign agent store.ErrForbidden.
func Save(ctx context.Context, sp SaveSpec, r SaveRequest) (SaveResult, error) {
	ag, refused, err := sp.open()
	if err != nil {
		return SaveResult{}, err
	}
	if refused != nil {
		return *refused, nil
	}
	r.Actor = sp.View.Actor
	return ag.Save(ctx, r)
}

// CheckSave runs the door's steps that need no store on r: confinement,
// the scope rule, and the request's fields, limits and target tier (step 4
// before reconciliation, evolve.Engine.CheckSave). It never touches
// sp.Store (which may be nil): a command checks its arguments with it
// before it opens, and so creates, a store. A refusal is a result, an
// invalid or forbidden request an error, as Save answers them; (nil, nil)
// is a request Save goes on to reconcile.
func CheckSave(sp SaveSpec, r SaveRequest) (*SaveResult, error) {
	ag, refused, err := sp.open()
	if err != nil || refused != nil {
		return refused, err
	}
	r.Actor = sp.View.Actor
	return ag.CheckSave(r)
}

// SaveBatch saves rs in order in one store transaction through the door:
// each is answered as Save answers it, reconciled against the earlier
// ones; an invalid request saves nothing (a *BatchError naming it). When
// the scope rule refuses, every request gets that refusal.
func SaveBatch(ctx context.Context, sp SaveSpec, rs []SaveRequest) ([]SaveResult, error) {
	ag, refused, err := sp.open()
	if err != nil {
		return nil, err
	}
	if refused != nil {
		out := make([]SaveResult, len(rs))
		for i := range out {
			out[i] = *refused
		}
		return out, nil
	}
	if err := oneConversation(sp.View, rs); err != nil {
		return nil, err
	}
	rs = append([]SaveRequest(nil), rs...)
	for i := range rs {
		rs[i].Actor = sp.View.Actor
	}
	return ag.SaveBatch(ctx, rs)
}

// open applies the door's first three steps and returns the agent engine
// to save with, or the refusal of the scope rule.
func (sp SaveSpec) open() (*Agent, *SaveResult, error) {
	cfg, err := sp.authored()
	if err != nil {
		return nil, nil, err
	}
	fileAgent := ""
	if cfg != nil {
		fileAgent = cfg.RoleTemplate.Name
	}
	scope, err := Confine(sp.View, sp.Scope, fileAgent)
	if err != nil {
		return nil, nil, err
	}
	if sp.View.Confined() && cfg == nil && sp.AgentFile == "" && sp.Workspace != nil {
		// The confined scope names the actor's agent: its file, if any.
		if cfg, err = findAgent(sp.Workspace, scope[store.AgentKey]); err != nil {
			return nil, nil, err
		}
	}
	if cfg != nil {
		// The authored file names the agent the record belongs to.
		if scope == nil {
			scope = map[string]string{}
		} else if scope[store.AgentKey] != cfg.RoleTemplate.Name {
			scope = cloneScope(scope)
		}
		scope[store.AgentKey] = cfg.RoleTemplate.Name
	}
	if err := CheckVisible(sp.Workspace, scope, cfg); err != nil {
		if ie, ok := err.(*InvisibleError); ok {
			return nil, &SaveResult{Status: SaveRefused, Guidance: ie.Reason}, nil
		}
		return nil, nil, err
	}
	name := scope[store.AgentKey]
	return NewAgent(AgentSpec{Store: sp.Store, Workspace: sp.Workspace, Agent: cfg, Name: name, Scope: withoutAgent(scope),
		Now: sp.Now, Evaluator: sp.Evaluator, Logger: sp.Logger}), nil, nil
}

// authored is the agent config a save runs with: Agent, else AgentFile
// (refused when it resolves outside the workspace root), else the
// workspace's file named by the scope's agent key.
func (sp SaveSpec) authored() (*schema.AgentConfig, error) {
	switch {
	case sp.Agent != nil:
		return sp.Agent, nil
	case sp.AgentFile != "":
		// The file must be one of the workspace saved into: a file that
		// resolves outside its root (a link, .., another directory) names
		// an agent no composition of this workspace shows, and is not read.
		if sp.Workspace != nil && sp.Workspace.Root != "" {
			if err := workspace.Confine(sp.Workspace.Root, sp.AgentFile); err != nil {
				return nil, err
			}
		}
		data, err := workspace.ReadFile(sp.AgentFile)
		if err != nil {
			return nil, fmt.Errorf("agent file: %w", err)
		}
		return LoadAgent(sp.AgentFile, data)
	case sp.View.Confined():
		return nil, nil // found after confinement, by the actor's own name
	}
	return findAgent(sp.Workspace, sp.Scope[store.AgentKey])
}

// findAgent reads the workspace's agent file of name; none (or several,
// or an unreadable workspace) is nil: the save then runs without authored
// checks.
func findAgent(ws *workspace.Workspace, name string) (*schema.AgentConfig, error) {
	if ws == nil || ws.Root == "" || name == "" {
		return nil, nil
	}
	path, err := ws.FindAgent(name)
	if err != nil || path == "" {
		return nil, nil
	}
	data, err := workspace.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agent file: %w", err)
	}
	return LoadAgent(path, data)
}

func withoutAgent(scope map[string]string) map[string]string {
	out := cloneScope(scope)
	delete(out, store.AgentKey)
	return out
}

func cloneScope(scope map[string]string) map[string]string {
	out := make(map[string]string, len(scope)+1)
	for k, v := range scope {
		out[k] = v
	}
	return out
}

// oneConversation is the batch rule of provenance: an agent's batch comes
// from one conversation and run, the runtime's, so a batch never
// manufactures recurrence (two lines of one call naming two
// conversations). A human's batch may name one per line, as import does.
func oneConversation(v View, rs []SaveRequest) error {
	if !v.Confined() || len(rs) == 0 {
		return nil
	}
	first, err := schema.NormalizeConversationID(rs[0].Provenance.ConversationID)
	if err != nil {
		return &BatchError{Index: 0, Err: fmt.Errorf("%w: conversation: %v", store.ErrInvalid, err)}
	}
	for i := 1; i < len(rs); i++ {
		c, err := schema.NormalizeConversationID(rs[i].Provenance.ConversationID)
		if err != nil || c != first || rs[i].Provenance.RunID != rs[0].Provenance.RunID {
			return &BatchError{Index: i, Err: fmt.Errorf("%w: an agent's batch is one conversation and run, the runtime's; this request names another", store.ErrInvalid)}
		}
	}
	return nil
}
