package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// listFlag is a repeatable string flag (--allowed-host, --allowed-origin).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// httpFlags are `agent-ls mcp --http`'s flags.
type httpFlags struct {
	addr              string
	tlsCert, tlsKey   string
	allowedHosts      listFlag
	allowedOrigins    listFlag
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration
	writeTimeout      time.Duration
	shutdownTimeout   time.Duration
	maxServers        int
}

// check refuses what --http must not do: an address that does not parse,
// a non-loopback one without TLS, a --max-agents that is not positive
// (its timeouts are positive durations: durationVar).
func (h *httpFlags) check() error {
	if _, _, err := net.SplitHostPort(h.addr); err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT (127.0.0.1:0 picks a free port): %v", h.addr, err)
	}
	if (h.tlsCert == "") != (h.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if h.maxServers < 1 {
		return fmt.Errorf("--max-agents %d: want a positive number of agents", h.maxServers)
	}
	if !mcpserver.IsLoopbackAddr(h.addr) && h.tlsCert == "" {
		return fmt.Errorf("--http %s is not a loopback address: serving tokens and memories in clear text beyond this machine is refused; give --tls-cert and --tls-key (or listen on 127.0.0.1 behind a TLS-terminating reverse proxy)", h.addr)
	}
	return nil
}

// runMCPHTTP serves the MCP toolbox of every agent file of the workspace
// around the working directory over streamable HTTP: a request's bearer
// token decides the agent and scope. The first stdout line is the
// endpoint's URL; logs go to stderr. It returns when ctx ends (SIGINT,
// SIGTERM), after in-flight requests finished (within shutdownTimeout).
func runMCPHTTP(ctx context.Context, e *env, hf *httpFlags, sf storeFlags, logger *slog.Logger) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(e.stderr, "agent-ls mcp: %s\n", fmt.Sprintf(format, a...))
		return code
	}
	if err := hf.check(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	ws, err := workspace.Find(e.cwd)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	path := ws.StorePath
	if sf.path != "" {
		path = engine.StoreLocation(e.cwd, sf.path)
	}
	opener, done := e.longLivedOpener()
	defer done()
	open := func(ctx context.Context, readOnly bool) (store.Store, error) {
		return engine.OpenStore(ctx, opener, path, store.Options{Now: e.now, LockTimeout: sf.lockTimeout, ReadOnly: readOnly, Logger: logger})
	}
	queue := engine.QueueFor(path)
	var tlsCfg *tls.Config
	if hf.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(hf.tlsCert, hf.tlsKey)
		if err != nil {
			return fail(exitUsage, "--tls-cert/--tls-key: %v", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", hf.addr)
	if err != nil {
		return fail(exitUsage, "--http %s: %v", hf.addr, err)
	}
	addr := ln.Addr().String()
	handler, err := mcpserver.NewHTTPHandler(mcpserver.HTTPConfig{
		Authenticate: tokenAuthenticator(e, ws, open, queue, logger),
		Base: mcpserver.Config{
			Workspace: ws.Config,
			Scope:     ws.Config.Scope,
			Open:      open,
			Queue:     queue,
			Now:       e.now,
			Evaluator: engine.EvaluatorFor(ws),
			Logger:    quieter(logger, slog.LevelWarn),
			Version:   versionString(),
		},
		Addr:           addr,
		AllowedHosts:   hf.allowedHosts,
		AllowedOrigins: hf.allowedOrigins,
		MaxServers:     hf.maxServers,
		Logger:         logger,
	})
	if err != nil {
		ln.Close()
		return fail(exitUsage, "%v", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: hf.readHeaderTimeout,
		IdleTimeout:       hf.idleTimeout,
		WriteTimeout:      hf.writeTimeout,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         tlsCfg,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsCfg)
	}
	fmt.Fprintf(e.stdout, "%s://%s%s\n", scheme, addr, mcpserver.HTTPPath)
	logger.Info("mcp http serving", "addr", addr, "tls", tlsCfg != nil, "store", engine.Redact(path), "workspace", ws.Root)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fail(exitUsage, "serve: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), hf.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown", "err", err)
		_ = srv.Close()
	}
	<-served
	logger.Info("mcp http stopped")
	return exitOK
}

// quieter is logger with records below min dropped (the SDK logs every
// stateless request's session at info).
func quieter(logger *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(minLevel{logger.Handler(), min})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.min} }
