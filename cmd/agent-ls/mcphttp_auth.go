package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/agent-ls/agent-ls/engine"
	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// tokenAuthenticator checks a bearer secret against the store's tokens on
// every request (engine.Authenticate over a read-only open of the store, in
// its turn in this process's queue), so a token revoked through any server
// or the CLI is refused at its next request here. The token's agent file is
// resolved inside the served workspace (engine.ServiceAgentFile); one that
// is not there serves nothing (the handler answers 403).
func tokenAuthenticator(e *env, ws *workspace.Workspace, open engine.OpenFunc, q *engine.StoreQueue, logger *slog.Logger) func(context.Context, string) (mcpserver.Binding, error) {
	return func(ctx context.Context, secret string) (mcpserver.Binding, error) {
		var tok store.Token
		err := q.WithStore(ctx, open, false, func(tx store.Tx) error {
			var err error
			tok, err = engine.Authenticate(ctx, tx, secret, e.now())
			return err
		})
		if errors.Is(err, engine.ErrTokenInvalid) {
			// The engine's reason names no secret (revoked, expired, unknown)
			// and already says "invalid token": it is the message, once.
			return mcpserver.Binding{}, invalidToken{err}
		}
		if err != nil {
			return mcpserver.Binding{}, err
		}
		b := mcpserver.Binding{Agent: tok.Agent, Scope: tok.Scope, TokenID: tok.ID}
		file, err := engine.ServiceAgentFile(ws, tok)
		if err != nil {
			logger.Warn("token names no agent file of the workspace", "token", tok.ID, "agent", tok.Agent, "err", err)
			return b, nil // no AgentFile: the handler refuses it (403)
		}
		b.AgentFile = file
		return b, nil
	}
}

// invalidToken is the engine's refusal of a secret, worded as the engine
// words it, that is also mcpserver.ErrInvalidToken (the HTTP handler's 401).
type invalidToken struct{ err error }

func (e invalidToken) Error() string   { return e.err.Error() }
func (e invalidToken) Unwrap() []error { return []error{e.err, mcpserver.ErrInvalidToken} }
