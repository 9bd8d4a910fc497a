package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestMCPHTTPRevokePostgres: two `mcp --http` processes on one PostgreSQL
// store keep one connection pool each (backend.Pool). A client whose
// session alternates between them saves through both; `agent-ls token
// revoke` in a third process then ends the token on both servers at the
// next request — a pooled connection caches no token — while a second
// token of the same agent keeps working through the same pools. Runs
// inside scripts/pg.sh (skips without a server, fails under CI=true).
func TestMCPHTTPRevokePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	db := pgtest.Fresh(t)
	dir := serviceWorkspace(t)
	k := newTokens(t, binary, dir)
	storeArgs := []string{"--store", db}
	if out, err := exec.Command(binary, "memory", "init", "--store", db).CombinedOutput(); err != nil {
		t.Fatalf("memory init: %v\n%s", err, out)
	}
	var servers []*url.URL
	for range 2 {
		s := startHTTPServer(t, binary, dir, k.env(), storeArgs...)
		u, err := url.Parse(s.url)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, u)
	}
	revoked := k.create(t, "support.agent.yaml", storeArgs...)
	kept := k.create(t, "support.agent.yaml", storeArgs...)
	connect := func(secret string) (*mcp.ClientSession, error) {
		cl := mcp.NewClient(&mcp.Implementation{Name: "revoke-e2e", Version: "1"}, nil)
		return cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: servers[0].String(),
			HTTPClient: &http.Client{Transport: &alternating{servers: servers, secret: secret}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	}
	save := func(cs *mcp.ClientSession, n int) error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_save",
			Arguments: map[string]any{"content": fmt.Sprintf("Remember revoke e2e fact number %d qz%dx", n, n)}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("tool error: %v", res.Content)
		}
		return nil
	}
	csRevoked, err := connect(revoked)
	if err != nil {
		t.Fatal(err)
	}
	defer csRevoked.Close()
	csKept, err := connect(kept)
	if err != nil {
		t.Fatal(err)
	}
	defer csKept.Close()
	// Four saves alternate over both servers: each pool has served the token.
	for i := range 4 {
		if err := save(csRevoked, i); err != nil {
			t.Fatalf("save %d before the revoke: %v", i, err)
		}
	}
	k.revoke(t, revoked, storeArgs...)
	// Each of the next two requests reaches a different server: both refuse.
	for i := range 2 {
		err := save(csRevoked, 10+i)
		if err == nil {
			t.Fatalf("save %d after the revoke succeeded", 10+i)
		}
		if !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("save %d after the revoke: %v; want 401 Unauthorized", 10+i, err)
		}
	}
	for i := range 2 {
		if err := save(csKept, 20+i); err != nil {
			t.Errorf("save %d with the other token after the revoke: %v", 20+i, err)
		}
	}
}
