package main

import (
	"fmt"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// workspaceAgentNames lists the roleTemplate.name of every agent file in
// ws (engine.AgentNames, the list the scope rule checks a save against).
func workspaceAgentNames(ws *workspace.Workspace) []string { return engine.AgentNames(ws) }

// warnOrphanAgents warns, once per agent, when records were saved for an
// agent no agent file in the workspace names (a misspelt agent=...): they
// reach no composition. It names the nearest agent when one is near.
func warnOrphanAgents(e *env, cmd string, ws *workspace.Workspace, recs []schema.MemoryRecord) {
	if ws == nil {
		return
	}
	agents := map[string]bool{}
	for _, r := range recs {
		if a := r.Scope[store.AgentKey]; a != "" {
			agents[a] = true
		}
	}
	if len(agents) == 0 {
		return
	}
	names := workspaceAgentNames(ws)
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	for _, a := range sortedKeys(agents) {
		if known[a] {
			continue
		}
		hint := ""
		if best, ok := schema.NearestName(a, names); ok {
			hint = " (did you mean " + best + "?)"
		}
		fmt.Fprintf(e.stderr, "agent-ls %s: warning: no agent file in the workspace (%s) names agent %q%s; its records reach no composition\n", cmd, ws.Root, a, hint)
	}
}
