package engine

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// The scope rule, written once for every surface (issue 30).
//
// A workspace's scope (.agent-ls.yaml `scope:`) is the part of the store
// its agent files compose from: every agent file of the workspace reads
// the records whose scope holds every workspace pair (store.InView). A
// surface's --scope (every CLI command that takes one, the MCP server's
// --scope) ADDS pairs to it — Scope — and never changes a workspace value:
// a --scope key the workspace scope already sets with another value is
// refused (*ScopeError), because a record saved there would be seen by no
// agent file of the workspace and a read there would read outside it. A
// save whose record no agent file of the workspace would see is refused
// with the reason (CheckVisible), never promoted and invisible.

// ScopeError is a --scope pair that contradicts the workspace scope.
type ScopeError struct {
	Key, Value string
	// Workspace is the workspace scope's value of Key.
	Workspace string
	// Source names where the pair came from (--scope,
	// initializationOptions.scope); "" is "scope".
	Source string
}

func (e *ScopeError) Error() string {
	src := e.Source
	if src == "" {
		src = "scope"
	}
	return fmt.Sprintf("%s %s=%s: the workspace scope has %s=%s (%s); %s adds keys to the workspace scope and cannot change its values",
		src, e.Key, e.Value, e.Key, e.Workspace, schema.WorkspaceConfigName, src)
}

// Scope is the scope of a command: the workspace scope ws plus the pairs
// of a --scope flag. A flag pair whose key ws sets to another value is a
// *ScopeError (the first, by key); a flag key that is the agent key in
// another case (Agent) is an error. The result is a new map (nil when both
// are empty).
func Scope(ws, flag map[string]string) (map[string]string, error) {
	for _, k := range sortedKeys(flag) {
		if k != store.AgentKey && strings.EqualFold(k, store.AgentKey) {
			// Keys are case-sensitive: "Agent" would be a key of its own,
			// and a record without the agent key is shared by every agent.
			return nil, &schema.ValueError{Name: "scope key", Value: k,
				Why: fmt.Sprintf("did you mean %q? (keys are case-sensitive; %q names the agent, and a record without it is shared by every agent)", store.AgentKey, store.AgentKey)}
		}
		if v, ok := ws[k]; ok && v != flag[k] {
			return nil, &ScopeError{Key: k, Value: flag[k], Workspace: v}
		}
	}
	if len(ws) == 0 && len(flag) == 0 {
		return nil, nil
	}
	out := maps.Clone(ws)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, flag)
	return out, nil
}

// InvisibleError is CheckVisible's refusal: no agent file of the
// workspace would see a record of that scope.
type InvisibleError struct{ Reason string }

func (e *InvisibleError) Error() string { return e.Reason }

// IsInvisible reports whether err is CheckVisible's refusal.
func IsInvisible(err error) bool {
	var ie *InvisibleError
	return errors.As(err, &ie)
}

// CheckVisible is the rule of what a save may write: a record of scope
// that some agent file of the workspace ws sees. The scope must hold every
// pair of the workspace scope (the agent key aside), and an agent key must
// name the agent of cfg (the authored file the save runs with, nil when
// none) or of some agent file of the workspace. A workspace with no agent
// file yet has nothing to check an agent key against: the key passes (the
// CLI warns). Otherwise the refusal is an *InvisibleError with the reason.
func CheckVisible(ws *workspace.Workspace, scope map[string]string, cfg *schema.AgentConfig) error {
	if ws == nil {
		return nil
	}
	for _, k := range sortedKeys(ws.Config.Scope) {
		if k == store.AgentKey {
			continue
		}
		if v := ws.Config.Scope[k]; scope[k] != v {
			return &InvisibleError{Reason: fmt.Sprintf("the record's scope {%s} lacks the workspace scope's %s=%s (%s): no agent file of the workspace would see it; nothing saved",
				FormatScope(scope), k, v, schema.WorkspaceConfigName)}
		}
	}
	name := scope[store.AgentKey]
	if name == "" || (cfg != nil && cfg.RoleTemplate.Name == name) || ws.Root == "" {
		return nil
	}
	names := AgentNames(ws)
	if len(names) == 0 {
		return nil
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	hint := ""
	if best, ok := schema.NearestName(name, names); ok {
		hint = " (did you mean " + best + "?)"
	}
	return &InvisibleError{Reason: fmt.Sprintf("no agent file in the workspace names agent %q%s; its records would reach no composition; nothing saved", name, hint)}
}

// AgentNames lists the roleTemplate.name of every agent file of ws
// (unreadable or unparsable files are skipped), sorted and distinct.
func AgentNames(ws *workspace.Workspace) []string {
	files := AgentFileNames(ws)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AgentFileNames maps the roleTemplate.name of every agent file of ws to
// its path relative to the workspace root (unreadable or unparsable files
// are skipped; of two files naming one agent, the first).
func AgentFileNames(ws *workspace.Workspace) map[string]string {
	out := map[string]string{}
	if ws == nil || ws.Root == "" {
		return out
	}
	files, err := ws.AgentFiles()
	if err != nil {
		return out
	}
	for _, f := range files {
		name := ws.NameOf(f)
		if name == "" {
			continue
		}
		if _, dup := out[name]; dup {
			continue
		}
		if rel, err := filepath.Rel(ws.Root, f); err == nil {
			f = rel
		}
		out[name] = f
	}
	return out
}

// FormatScope is the k=v,... form of a scope, keys sorted.
func FormatScope(scope map[string]string) string {
	keys := sortedKeys(scope)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + scope[k]
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
