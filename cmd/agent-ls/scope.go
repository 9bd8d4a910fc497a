package main

import (
	"errors"
	"fmt"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// scopeUsage is the --scope flag's help, one text for every command.
const scopeUsage = "`k=v,...` added to the workspace scope (it may add keys, never change the workspace's values)"

// withScopeFlag is the scope of a command: the workspace scope ws plus
// the pairs of its --scope flag (engine.Scope, the one scope rule). A
// malformed flag or a pair contradicting the workspace scope is an error
// naming --scope (a usage error).
func withScopeFlag(ws map[string]string, flag string) (map[string]string, error) {
	extra, err := parseScope(flag)
	if err != nil {
		return nil, fmt.Errorf("--scope: %w", err)
	}
	scope, err := engine.Scope(ws, extra)
	var se *engine.ScopeError
	var ve *schema.ValueError
	if errors.As(err, &se) {
		se.Source = "--scope"
	} else if errors.As(err, &ve) && ve.Name == "scope key" {
		err = fmt.Errorf("--scope: %w", schema.Named("key", ve)) // "--scope: key ...", scope once
	} else if err != nil {
		err = fmt.Errorf("--scope: %w", err)
	}
	return scope, err
}

// checkProvenanceFlags checks a command's --conversation and --run by the
// rules the engine applies to them (schema.NormalizeConversationID, the
// workspace's id limit), so a bad one is a usage error naming the flag,
// not the store's field of a refused request.
func checkProvenanceFlags(ws *workspace.Workspace, conv, run string) error {
	if _, err := schema.NormalizeConversationID(conv); err != nil {
		return schema.Named("--conversation", err)
	}
	var l schema.Limits
	if ws != nil {
		l = ws.Config.Limits
	}
	if err := l.CheckID("run id", run); err != nil {
		return schema.Named("--run", err)
	}
	return nil
}
