package main

import (
	"errors"
	"fmt"

	"github.com/agent-ls/agent-ls/engine"
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
	if errors.As(err, &se) {
		se.Source = "--scope"
	} else if err != nil {
		err = fmt.Errorf("--scope: %w", err)
	}
	return scope, err
}
