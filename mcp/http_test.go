package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// fakeTokens is an authenticator over a map, with revocation.
type fakeTokens struct {
	mu      sync.Mutex
	tokens  map[string]Binding
	revoked map[string]bool
	down    bool
}

func (f *fakeTokens) auth(_ context.Context, secret string) (Binding, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return Binding{}, errors.New("store unreachable")
	}
	b, ok := f.tokens[secret]
	if !ok || f.revoked[secret] {
		return Binding{}, ErrInvalidToken
	}
	return b, nil
}

func (f *fakeTokens) revoke(secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[secret] = true
}

type httpFixture struct {
	url    string
	host   string
	tokens *fakeTokens
	logs   *syncBuffer
}

const (
	secretSupport = "als_support_secret"
	secretDeploy  = "als_deploy_secret"
	secretWrong   = "als_wrong_agent"
)

func newHTTPFixture(t *testing.T) *httpFixture {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"support.agent.yaml", "deploy.agent.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "agents", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = filepath.Join(dir, name)
		if err := os.WriteFile(files[name], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "memory.db")
	clock := &stepClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	tokens := &fakeTokens{revoked: map[string]bool{}, tokens: map[string]Binding{
		secretSupport: {AgentFile: files["support.agent.yaml"], Agent: "support-bot", TokenID: "tok-support"},
		secretDeploy:  {AgentFile: files["deploy.agent.yaml"], Agent: "deploy-ops", TokenID: "tok-deploy"},
		secretWrong:   {AgentFile: files["deploy.agent.yaml"], Agent: "support-bot", TokenID: "tok-wrong"},
	}}
	logs := &syncBuffer{}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	var err error
	h, err = NewHTTPHandler(HTTPConfig{
		Authenticate: tokens.auth,
		Base: Config{
			Scope: map[string]string{"project": "atlas"},
			Open: func(_ context.Context, readOnly bool) (store.Store, error) {
				return bolt.Open(db, store.Options{Now: clock.now, ReadOnly: readOnly})
			},
			Now: clock.now,
		},
		Addr:           addr,
		AllowedOrigins: []string{"https://runtime.example"},
		MaxBody:        64 << 10,
		Logger:         slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &httpFixture{url: srv.URL + HTTPPath, host: addr, tokens: tokens, logs: logs}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// post sends body to the endpoint with the given headers (Host when set).
func (f *httpFixture) post(t *testing.T, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.String()
}

func TestHTTPRefusals(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t)
	bearer := "Bearer " + secretSupport

	resp, err := http.Get(strings.TrimSuffix(f.url, HTTPPath) + HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}

	for _, tt := range []struct {
		name       string
		hdr        map[string]string
		body       string
		status     int
		authHeader string
	}{
		{"no token", nil, initBody, 401, `Bearer realm="agent-ls"`},
		{"bad token", map[string]string{"Authorization": "Bearer nope"}, initBody, 401, `Bearer realm="agent-ls", error="invalid_token"`},
		{"basic auth", map[string]string{"Authorization": "Basic dXNlcjpwdw=="}, initBody, 401, `Bearer realm="agent-ls", error="invalid_token"`},
		{"wrong host", map[string]string{"Authorization": bearer, "Host": "evil.example:80"}, initBody, 421, ""},
		{"wrong port", map[string]string{"Authorization": bearer, "Host": "localhost:1"}, initBody, 421, ""},
		{"cross-site origin", map[string]string{"Authorization": bearer, "Origin": "https://evil.example"}, initBody, 403, ""},
		{"too large", map[string]string{"Authorization": bearer}, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 65<<10) + `"}}`, 413, ""},
		{"token of another agent's file", map[string]string{"Authorization": "Bearer " + secretWrong}, initBody, 403, ""},
	} {
		resp, body := f.post(t, tt.body, tt.hdr)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, resp.StatusCode, tt.status, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); got != tt.authHeader {
			t.Errorf("%s: WWW-Authenticate %q, want %q", tt.name, got, tt.authHeader)
		}
		if strings.Contains(body, "jsonrpc") || strings.Contains(body, "support-bot") {
			t.Errorf("%s: the refusal carries data: %s", tt.name, body)
		}
	}
	// Loopback equivalents of the listen address and an allowed origin pass.
	port := f.host[strings.LastIndex(f.host, ":"):]
	for _, hdr := range []map[string]string{
		{"Authorization": bearer, "Host": "localhost" + port},
		{"Authorization": bearer, "Host": "[::1]" + port},
		{"Authorization": bearer, "Origin": "https://runtime.example"},
	} {
		if resp, body := f.post(t, initBody, hdr); resp.StatusCode != 200 || !strings.Contains(body, `"result"`) {
			t.Errorf("%v: %d %s", hdr, resp.StatusCode, body)
		}
	}
	// A chunked body (no Content-Length) over the limit: 413 once read.
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 65<<10) + `"}}`
	req, _ := http.NewRequest(http.MethodPost, f.url, io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", bearer)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 413 || resp.ContentLength > 0 && resp.ContentLength > 100 {
		t.Errorf("chunked body over the limit: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	f.tokens.mu.Lock()
	f.tokens.down = true
	f.tokens.mu.Unlock()
	if resp, body := f.post(t, initBody, map[string]string{"Authorization": bearer}); resp.StatusCode != 503 || strings.Contains(body, "jsonrpc") {
		t.Errorf("authenticator down: %d %s", resp.StatusCode, body)
	}
	logs := f.logs.String()
	if strings.Contains(logs, secretSupport) || strings.Contains(logs, secretWrong) {
		t.Errorf("a secret reached the log:\n%s", logs)
	}
	if !strings.Contains(logs, "token=tok-support") || !strings.Contains(logs, "outcome=host_refused") {
		t.Errorf("the log lacks the token id or the outcome:\n%s", logs)
	}
}

// bearerTransport adds the Authorization header to every request.
type bearerTransport struct{ secret string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

func (f *httpFixture) connect(t *testing.T, secret string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url,
		HTTPClient: &http.Client{Transport: bearerTransport{secret}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, meta mcp.Meta) (map[string]any, error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, errors.New(res.Content[0].(*mcp.TextContent).Text)
	}
	var out map[string]any
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// TestHTTPSession: the SDK client over streamable HTTP with a token: the
// token decides the agent, _meta the provenance (one lesson from two
// conversations earns its promotion), another agent's token sees none of
// it, and a revoked token is refused at its next request.
func TestHTTPSession(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t)
	cs := f.connect(t, secretSupport)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 6 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	lesson := "Offer store credit first when a refund request arrives after 30 days"
	var last map[string]any
	for _, conv := range []string{"Conv-A ", "conv-b"} {
		last, err = callJSON(t, cs, ToolSave, map[string]any{"content": lesson, "target": "judgment.refunds.heuristics"},
			mcp.Meta{MetaConversationID: conv, MetaRunID: "run-" + conv})
		if err != nil {
			t.Fatal(err)
		}
	}
	if last["tier"] != "earned" || last["state"] != "promoted" || last["corroborated"] != true {
		t.Fatalf("second conversation: %v", last)
	}
	rec := last["record"].(map[string]any)
	if rec["conversationId"] != "conv-a" || rec["conversations"] != float64(2) {
		t.Fatalf("provenance from _meta: %v", rec)
	}
	if scope := rec["scope"].(map[string]any); scope["agent"] != "support-bot" || scope["project"] != "atlas" {
		t.Fatalf("scope: %v", scope)
	}
	comp, err := callJSON(t, cs, ToolCompose, nil, nil)
	if err != nil || !strings.Contains(comp["text"].(string), lesson) {
		t.Fatalf("compose lacks the lesson: %v %v", comp, err)
	}

	other := f.connect(t, secretDeploy)
	list, err := callJSON(t, other, ToolList, map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := list["records"].([]any); len(recs) != 0 {
		t.Fatalf("deploy-ops sees support-bot's records: %v", recs)
	}
	if out, err := callJSON(t, other, ToolInvalidate, map[string]any{"id": rec["id"], "reason": "x"}, nil); err != nil || out["status"] != StatusNotFound {
		t.Fatalf("deploy-ops reached support-bot's record: %v %v", out, err)
	}

	f.tokens.revoke(secretSupport)
	if _, err := cs.ListTools(context.Background(), nil); err == nil {
		t.Fatal("a revoked token was served")
	}
}
