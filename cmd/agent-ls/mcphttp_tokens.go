package main

import (
	"context"
	"errors"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

// tokenInfo is what the HTTP server needs of a service token.
type tokenInfo struct {
	ID, Agent, AgentFile string
	Scope                map[string]string
}

// errTokenInvalid: no usable token (unknown, malformed, revoked, expired).
var errTokenInvalid = errors.New("invalid token")

// authenticateToken checks secret against the tokens of the store r reads.
// The token store (issue 33's `agent-ls token`) is not on this branch yet:
// until it is merged, no secret is valid and every request gets 401.
// Tests replace it.
var authenticateToken = func(ctx context.Context, r store.Reader, secret string, now time.Time) (tokenInfo, error) {
	return tokenInfo{}, errTokenInvalid
}
