package engine

import (
	"fmt"
	"path/filepath"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// ServiceAgentFile is the agent file a service token serves in the
// workspace ws (`agent-ls mcp --http`): TokenAgentFile's path (a clean
// slash path relative to the root, confined to it), which must also name
// an agent file (schema.IsAgentFile) and belong to ws itself — the nearest
// workspace config above it is ws's own (or none, for a workspace without
// one), not a nested workspace's. Otherwise it is an error and the token
// serves nothing. The result is absolute.
func ServiceAgentFile(ws *workspace.Workspace, t store.Token) (string, error) {
	file, err := TokenAgentFile(ws, t)
	if err != nil {
		return "", err
	}
	if !schema.IsAgentFile(file) {
		return "", fmt.Errorf("agent file %q: not an agent file (NAME.agent.yaml, .agent.yml or .agent.json)", t.AgentFile)
	}
	cfg, err := workspace.ConfigPathWithin(filepath.Dir(file), "")
	if err != nil {
		return "", err
	}
	root, _ := filepath.Abs(ws.Root)
	if cfg != "" && filepath.Dir(cfg) != root {
		return "", fmt.Errorf("agent file %q belongs to the workspace at %s, not to the one served (%s)", t.AgentFile, filepath.Dir(cfg), root)
	}
	return file, nil
}
