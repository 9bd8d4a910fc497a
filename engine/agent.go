package engine

import (
	"context"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/evolve"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// Agent is one agent's view of a store with every gated verb: Save,
// SaveBatch, Corroborate, Promote, Demote, Invalidate, Supersede,
// Retarget, Approve, Reject, Adopt, Garden, Learnings, Proposals and
// Conflicts (package evolve implements them).
type Agent = evolve.Engine

// newAgent is NewAgent with the workspace config and the scope resolved.
func newAgent(sp AgentSpec, ws schema.WorkspaceConfig, scope map[string]string) *Agent {
	return evolve.New(evolve.Config{Store: sp.Store, Workspace: ws, Agent: sp.Agent, Scope: scope, Now: sp.Now,
		Evaluator: sp.Evaluator, Logger: sp.Logger, ChainCheck: sp.ChainCheck})
}

// EvaluatorFor is the eval gate a workspace configures (eval.command, run
// in the workspace root), or nil when it configures none.
func EvaluatorFor(ws *workspace.Workspace) Evaluator {
	if ws == nil || ws.Config.Eval == nil || len(ws.Config.Eval.Command) == 0 {
		return nil
	}
	ce := evolve.NewCommandEvaluator(*ws.Config.Eval, "")
	ce.Dir = ws.Root
	return ce
}

// Compose instantiates an agent: its authored file with the promoted
// memories of its view compiled in (or, with req.At, as it was then), the
// overlay report with each learned line's container, and the recall
// block on request (Result.Recall).
func Compose(ctx context.Context, req ComposeRequest) (*ComposeResult, error) {
	return compose.Instantiate(ctx, req)
}

// LoadAgent parses, validates and decodes an agent file's data; a
// malformed file is an error naming file:line:col.
func LoadAgent(filename string, data []byte) (*schema.AgentConfig, error) {
	return compose.LoadAgent(filename, data)
}

// PolicyFrom is the overlay policy (budgets, ceiling) of a workspace config.
func PolicyFrom(c schema.WorkspaceConfig) Policy { return overlay.PolicyFrom(c) }

// DefaultPolicy is the policy of an empty workspace config.
func DefaultPolicy() Policy { return overlay.DefaultPolicy() }

// Apply compiles promoted records into an authored config (the pure
// overlay) and reports where each went.
func Apply(authored *schema.AgentConfig, recs []schema.MemoryRecord, p Policy) (*schema.AgentConfig, Report) {
	return overlay.Apply(authored, recs, p)
}

// Render renders a composed config as the system prompt, its learned
// lines attributed.
func Render(cfg *schema.AgentConfig, a Attribution) Prompt { return overlay.Render(cfg, a) }

// IsMarker reports whether f is a marker fragment (no text of its own).
func IsMarker(f Fragment) bool { return overlay.IsMarker(f) }

// FormatValue formats a structured payload value as the prompt shows it.
func FormatValue(v any) string { return overlay.FormatValue(v) }

// Inline is untrusted text (a record's content) as one line that starts no
// Markdown block: the rule by which content renders inside its slot
// (overlay.Inline).
func Inline(s string) string { return overlay.Inline(s) }

// UnifiedDiff is the unified diff of two texts (a composition before and
// after a change).
func UnifiedDiff(a, b, aName, bName string) string { return evolve.UnifiedDiff(a, b, aName, bName) }

// Container is where a target's learned lines belong in an authored config:
// the pointer of the list or block they join (overlay.Container, which the
// composition's report also carries for each placed record).
func Container(cfg *schema.AgentConfig, t schema.MemoryTarget) string {
	return overlay.Container(cfg, t)
}

// TargetPointer is the authored place a target names (overlay.TargetPointer).
func TargetPointer(cfg *schema.AgentConfig, t schema.MemoryTarget) string {
	return overlay.TargetPointer(cfg, t)
}
