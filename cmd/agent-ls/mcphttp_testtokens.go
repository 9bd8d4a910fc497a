//go:build agentls_testtokens

package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

// Test builds only (go build -tags agentls_testtokens): until the token
// store is on this branch, the HTTP tests that need valid tokens read them
// from the JSON file $AGENT_LS_TEST_TOKENS ({"secret": {"id", "agent",
// "agentFile", "scope", "revoked"}}), re-read on every request so a test can
// revoke one. A release build has no such file and no such variable.
func init() {
	path := os.Getenv("AGENT_LS_TEST_TOKENS")
	if path == "" {
		return
	}
	authenticateToken = func(ctx context.Context, r store.Reader, secret string, now time.Time) (tokenInfo, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return tokenInfo{}, err
		}
		var toks map[string]struct {
			ID        string            `json:"id"`
			Agent     string            `json:"agent"`
			AgentFile string            `json:"agentFile"`
			Scope     map[string]string `json:"scope"`
			Revoked   bool              `json:"revoked"`
		}
		if err := json.Unmarshal(data, &toks); err != nil {
			return tokenInfo{}, err
		}
		t, ok := toks[secret]
		if !ok || t.Revoked {
			return tokenInfo{}, errTokenInvalid
		}
		return tokenInfo{ID: t.ID, Agent: t.Agent, AgentFile: t.AgentFile, Scope: t.Scope}, nil
	}
}
