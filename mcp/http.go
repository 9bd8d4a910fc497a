package mcpserver

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/engine"
)

// Binding is what a token decides for a request: the agent file (an
// absolute path inside the workspace), the agent it must name
// (roleTemplate.name), the token's scope (added to the workspace scope by
// engine.Scope) and the token's id (logged; never the secret).
type Binding struct {
	AgentFile string
	Agent     string
	Scope     map[string]string
	TokenID   string
}

// ErrInvalidToken is what HTTPConfig.Authenticate returns (wrapped, with
// the reason, which must never hold the secret: it is logged) for a secret
// that names no usable token (unknown, malformed, revoked, expired): the
// request gets 401 with error="invalid_token". Any other error is the
// server's (the store is unreachable): 503, and nothing is served.
var ErrInvalidToken = errors.New("invalid token")

// HTTPConfig is what the streamable HTTP handler needs.
type HTTPConfig struct {
	// Authenticate checks a bearer secret, on every request (a revoked
	// token is refused at its next request). Required.
	Authenticate func(ctx context.Context, secret string) (Binding, error)
	// Base is the Config of every agent's Server; AgentFile and Scope are
	// set per binding (Scope is Base.Scope, the workspace scope, plus the
	// token's by engine.Scope).
	Base Config
	// Addr is the address the server listens on (host:port, after a :0
	// port was picked). Requests must name it (or, when it is loopback,
	// localhost, 127.0.0.1 or [::1] with its port) in their Host header,
	// or one of AllowedHosts (host:port, or a host for any port).
	Addr         string
	AllowedHosts []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call; a request with any other Origin header is refused.
	AllowedOrigins []string
	// MaxBody bounds a request body in bytes (413 beyond); 0 is
	// MaxMessage(Base.Workspace.Limits), the stdio message limit.
	MaxBody int64
	// MaxServers bounds the cache of per-(agent file, scope) servers (0: 64).
	MaxServers int
	// Logger gets one line per request (nil: none); the SDK's and the
	// engine's lines go to Base.Logger.
	Logger *slog.Logger
}

// HTTPPath is where the MCP endpoint is served; HealthPath answers 200
// without a token and without data.
const (
	HTTPPath   = "/mcp"
	HealthPath = "/healthz"
)

// NewHTTPHandler returns the MCP streamable HTTP transport (the SDK's
// handler in stateless mode: every request stands alone, so servers
// behind a load balancer need no sticky sessions) at HTTPPath, behind the
// checks every request passes in order: its Host (421 unless it names the
// listen address or an allowed host), its Origin (403 unless absent or
// allowed), its bearer token (401 with WWW-Authenticate: Bearer), its size
// (413). No refusal carries data.
func NewHTTPHandler(c HTTPConfig) (http.Handler, error) {
	if c.Authenticate == nil {
		return nil, errors.New("mcp http: no authenticator")
	}
	if c.Base.Open == nil {
		return nil, errors.New("mcp http: no store opener")
	}
	if c.MaxBody <= 0 {
		c.MaxBody = int64(MaxMessage(c.Base.Workspace.Limits))
	}
	if c.MaxServers <= 0 {
		c.MaxServers = 64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Base.Queue == nil {
		c.Base.Queue = engine.NewStoreQueue()
	}
	h := &httpHandler{c: c, hosts: allowedHosts(c.Addr, c.AllowedHosts), origins: map[string]bool{},
		cache: map[string]*list.Element{}, lru: list.New()}
	for _, o := range c.AllowedOrigins {
		h.origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	h.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(serverKey{}).(*Server); ok {
			return s.MCP()
		}
		return nil
	}, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The Host check here is stricter (it also covers a server that is
		// not on loopback) and knows the allowed hosts of a reverse proxy.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        c.MaxBody,
		Logger:                     c.Base.Logger,
	})
	return h, nil
}

type serverKey struct{}

type httpHandler struct {
	c       HTTPConfig
	sdk     http.Handler
	hosts   map[string]bool // lower-case host:port, or host for any port
	origins map[string]bool

	mu    sync.Mutex
	cache map[string]*list.Element // key → element of lru holding *cached
	lru   *list.List
}

type cached struct {
	key string
	srv *Server
}

// allowedHosts is the set of Host header values a request may carry.
func allowedHosts(addr string, extra []string) map[string]bool {
	hosts := map[string]bool{}
	if addr != "" {
		hosts[strings.ToLower(addr)] = true
		if host, port, err := net.SplitHostPort(addr); err == nil && isLoopback(host) {
			for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
				hosts[h+":"+port] = true
			}
		}
	}
	for _, h := range extra {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			hosts[h] = true
		}
	}
	return hosts
}

// isLoopback reports whether host (a name or an IP, brackets allowed)
// is a loopback host.
func isLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address (host:port) binds to
// loopback only; an empty host (every interface) is not loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return isLoopback(host)
}

func (h *httpHandler) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if h.hosts[host] {
		return true
	}
	if name, _, err := net.SplitHostPort(host); err == nil {
		return h.hosts[name] || h.hosts["["+name+"]"]
	}
	return false
}

// statusWriter records the status of a response; Unwrap lets the SDK's
// http.ResponseController flush the underlying writer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestLog is what one request's log line carries.
type requestLog struct {
	id, tokenID, agent, method, tool, outcome, reason string
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	rl := requestLog{id: requestID()}
	sw.Header().Set("X-Request-Id", rl.id)
	defer func() {
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		if rl.outcome == "" {
			rl.outcome = "ok"
			if status >= 400 {
				rl.outcome = "error"
			}
		}
		attrs := []slog.Attr{slog.String("request", rl.id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.String("outcome", rl.outcome), slog.Duration("latency", time.Since(start))}
		if rl.tokenID != "" {
			attrs = append(attrs, slog.String("token", rl.tokenID))
		}
		if rl.agent != "" {
			attrs = append(attrs, slog.String("agent", rl.agent))
		}
		if rl.method != "" {
			attrs = append(attrs, slog.String("rpc", rl.method))
		}
		if rl.tool != "" {
			attrs = append(attrs, slog.String("tool", rl.tool))
		}
		if rl.reason != "" {
			attrs = append(attrs, slog.String("reason", rl.reason))
		}
		h.c.Logger.LogAttrs(context.Background(), slog.LevelInfo, "http request", attrs...)
	}()
	refuse := func(code int, outcome string) {
		rl.outcome = outcome
		http.Error(sw, http.StatusText(code), code)
	}

	switch r.URL.Path {
	case HealthPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			sw.Header().Set("Allow", "GET, HEAD")
			refuse(http.StatusMethodNotAllowed, "method")
			return
		}
		sw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		sw.Header().Set("Cache-Control", "no-store")
		sw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			io.WriteString(sw, "ok\n")
		}
		return
	case HTTPPath:
	default:
		refuse(http.StatusNotFound, "not_found")
		return
	}
	if !h.hostAllowed(r.Host) {
		// A Host this server does not answer for: DNS rebinding, or a
		// proxy that forwards the wrong name.
		refuse(http.StatusMisdirectedRequest, "host_refused")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.origins[strings.ToLower(strings.TrimRight(o, "/"))] {
		refuse(http.StatusForbidden, "origin_refused")
		return
	}
	if r.ContentLength > h.c.MaxBody {
		// Refused before anything is read, token or not.
		refuse(http.StatusRequestEntityTooLarge, "too_large")
		return
	}
	secret, given := bearer(r.Header.Get("Authorization"))
	if !given {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="agent-ls"`)
		refuse(http.StatusUnauthorized, "no_token")
		return
	}
	b, err := h.c.Authenticate(r.Context(), secret)
	if err != nil {
		if errors.Is(err, ErrInvalidToken) {
			rl.reason = err.Error() // why (revoked, expired, ...); never the secret
			sw.Header().Set("WWW-Authenticate", `Bearer realm="agent-ls", error="invalid_token"`)
			refuse(http.StatusUnauthorized, "invalid_token")
			return
		}
		h.c.Logger.Error("authenticate", "request", rl.id, "err", err)
		refuse(http.StatusServiceUnavailable, "auth_unavailable")
		return
	}
	rl.tokenID, rl.agent = b.TokenID, b.Agent
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(sw, r.Body, h.c.MaxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				refuse(http.StatusRequestEntityTooLarge, "too_large")
				return
			}
			refuse(http.StatusBadRequest, "bad_body")
			return
		}
		rl.method, rl.tool = rpcName(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	srv, err := h.server(b)
	if err != nil {
		h.c.Logger.Warn("token binding refused", "request", rl.id, "token", b.TokenID, "agent", b.Agent, "err", err)
		refuse(http.StatusForbidden, "binding_refused")
		return
	}
	h.sdk.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
}

// bearer returns the credential of an Authorization: Bearer header.
func bearer(header string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", header != ""
	}
	cred = strings.TrimSpace(cred)
	return cred, true
}

// rpcName is the JSON-RPC method of a single message body and, for
// tools/call, the tool's name (for the log; "" when the body is a batch
// or not JSON).
func rpcName(body []byte) (method, tool string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	if m.Method == "tools/call" {
		tool = m.Params.Name
	}
	if len(m.Method) > 64 || len(tool) > 64 {
		return "", ""
	}
	return m.Method, tool
}

func requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// server returns the Server of a binding: one per (agent file, scope),
// built by New and kept in a bounded cache (the least recently used goes).
// The agent file must name the token's agent.
func (h *httpHandler) server(b Binding) (*Server, error) {
	if b.AgentFile == "" || b.Agent == "" {
		return nil, errors.New("the token names no agent file")
	}
	scope, err := engine.Scope(h.c.Base.Scope, b.Scope)
	if err != nil {
		return nil, err
	}
	key := b.AgentFile + "\x00" + engine.FormatScope(scope)
	h.mu.Lock()
	if el, ok := h.cache[key]; ok {
		h.lru.MoveToFront(el)
		s := el.Value.(*cached).srv
		h.mu.Unlock()
		if s.Agent() != b.Agent {
			return nil, fmt.Errorf("the agent file names agent %q, the token %q", s.Agent(), b.Agent)
		}
		// The file is read again on every request, as New read it: a file
		// renamed to another agent, removed or broken since serves nothing,
		// whichever tool the request calls (some read no agent file).
		if _, err := s.loadAgent(); err != nil {
			return nil, err
		}
		return s, nil
	}
	h.mu.Unlock()
	cfg := h.c.Base
	cfg.AgentFile, cfg.Scope = b.AgentFile, maps.Clone(scope)
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if s.Agent() != b.Agent {
		return nil, fmt.Errorf("the agent file names agent %q, the token %q", s.Agent(), b.Agent)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.cache[key]; ok { // built meanwhile by another request
		h.lru.MoveToFront(el)
		return el.Value.(*cached).srv, nil
	}
	h.cache[key] = h.lru.PushFront(&cached{key: key, srv: s})
	for h.lru.Len() > h.c.MaxServers {
		old := h.lru.Back()
		h.lru.Remove(old)
		delete(h.cache, old.Value.(*cached).key)
	}
	return s, nil
}
