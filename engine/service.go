package engine

import (
	"fmt"
	"path/filepath"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// ServiceAgentFile is the agent file a service token names: rel is a slash
// path relative to the root of the workspace ws serves (store.Token's
// AgentFile). The path must be local (no leading slash, no ..) and name
// an agent file (schema.IsAgentFile), and the file must resolve inside the root and belong to that workspace (not to a
// nested one with its own .agent-ls.yaml); otherwise it is an error and
// the token serves nothing. The result is absolute.
func ServiceAgentFile(ws *workspace.Workspace, rel string) (string, error) {
	if ws == nil || ws.Root == "" {
		return "", fmt.Errorf("agent file %q: no workspace", rel)
	}
	p := filepath.FromSlash(rel)
	if rel == "" || !filepath.IsLocal(p) {
		return "", fmt.Errorf("agent file %q: not a path inside the workspace", rel)
	}
	file := filepath.Join(ws.Root, p)
	if !schema.IsAgentFile(file) {
		return "", fmt.Errorf("agent file %q: not an agent file (NAME.agent.yaml, .agent.yml or .agent.json)", rel)
	}
	if err := workspace.Confine(ws.Root, file); err != nil {
		return "", err
	}
	// The nearest workspace config above the file must be the served
	// workspace's own (or none, for a workspace without one).
	cfg, err := workspace.ConfigPathWithin(filepath.Dir(file), "")
	if err != nil {
		return "", err
	}
	root, _ := filepath.Abs(ws.Root)
	if cfg != "" && filepath.Dir(cfg) != root {
		return "", fmt.Errorf("agent file %q belongs to the workspace at %s, not to the one served (%s)", rel, filepath.Dir(cfg), root)
	}
	return file, nil
}
