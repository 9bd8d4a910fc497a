package lsp

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestPostgresStoreRefreshesOpenFiles: a workspace whose .agent-ls.yaml
// names a postgres:// store is served from it (the URL is not taken for a
// path under the root), and a promotion committed through another
// connection, as another process's would be, refreshes the open file's
// hints through the server's LISTEN follower, within a second of the commit.
func TestPostgresStoreRefreshesOpenFiles(t *testing.T) {
	loc := pgtest.Fresh(t)
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "store: "+strconv.Quote(loc)+"\n")
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	open := func(ro bool) func(ctx context.Context, p string) (store.Store, error) {
		return func(ctx context.Context, p string) (store.Store, error) {
			if !engine.IsURL(p) {
				t.Errorf("the server opened %q, want the workspace's URL", p)
			}
			return backend.Open(ctx, p, store.Options{LockTimeout: 5 * time.Second, ReadOnly: ro})
		}
	}
	// The tables exist before the server starts (it may read first).
	st, err := backend.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	c := startServer(t, Options{OpenStore: open(false), OpenStoreReadOnly: open(true), Follow: backend.Source, Getenv: func(string) string { return "" }})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	const content = "Deploys go out Tuesdays after 14:00 ET"
	if h := hintWith(c.hints(uri), content); h != nil {
		t.Fatalf("hint before the write: %+v", h)
	}

	_, cfg, _, err := schema.LoadAgent("deploy.agent.yaml", data)
	if err != nil || cfg == nil {
		t.Fatalf("load agent: %v", err)
	}
	mt, err := schema.ParseTarget("background.projectContext.deploy_window")
	if err != nil {
		t.Fatal(err)
	}
	before := c.refreshCount()
	res, err := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg}).Save(context.Background(), engine.SaveRequest{
		Kind: schema.KindFact, Content: content, Target: &mt,
		Provenance: schema.Provenance{ConversationID: "conv-1"},
		Actor:      store.Actor{Kind: store.ActorAgent, Name: cfg.RoleTemplate.Name},
	})
	if err != nil || res.State != engine.StatePromoted {
		t.Fatalf("save: %+v, %v", res, err)
	}
	committed := time.Now()
	c.awaitRefresh(before)
	if d := time.Since(committed); d > time.Second {
		t.Errorf("hints refreshed %s after the commit, want within a second", d)
	}
	if h := hintWith(c.hints(uri), content); h == nil {
		t.Errorf("no hint for the promoted fact after the refresh")
	}
}

// tcpProxy forwards a local port to the test server, and can go down (the
// port closed, its connections cut) and up again on the same port: a
// database server that goes away and comes back.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func (p *tcpProxy) up() {
	p.t.Helper()
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestPostgresUnreachableAndBack: with the database server unreachable the
// language server reports the store "unreachable" (its URL's password
// hidden), keeps answering, and reports it "connected" again by itself
// once the server is back.
func TestPostgresUnreachableAndBack(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	st, err := backend.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: u.Host}
	p.up()
	p.down()
	t.Cleanup(p.down)
	u.Host = p.addr
	u.User = url.UserPassword(u.User.Username(), "pw-SECRET-42")
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "store: "+strconv.Quote(u.String())+"\n")
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := env.write(t, "deploy.agent.yaml", string(data))
	open := func(ro bool) func(ctx context.Context, p string) (store.Store, error) {
		return func(ctx context.Context, p string) (store.Store, error) {
			return backend.Open(ctx, p, store.Options{LockTimeout: time.Second, ReadOnly: ro})
		}
	}
	c := startServer(t, Options{OpenStore: open(false), OpenStoreReadOnly: open(true), Follow: backend.Source, Getenv: func(string) string { return "" }})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, true)
	uri := c.open(path, string(data), 1)
	status := func(state string) func(ns, _ []note) bool {
		return func(ns, _ []note) bool {
			for _, n := range ns {
				if n.method == methodStatus && strings.Contains(string(n.params), `"store":"`+state+`"`) {
					return true
				}
			}
			return false
		}
	}
	c.waitFor("status unreachable", status("unreachable"))
	c.hints(uri) // answers while the store is unreachable
	c.mu.Lock()
	for _, n := range c.notes {
		if strings.Contains(string(n.params), "pw-SECRET-42") {
			t.Errorf("a %s notification shows the password: %s", n.method, n.params)
		}
	}
	c.mu.Unlock()
	p.up()
	c.waitFor("status connected once the server is back", status("connected"))
}

// TestTamperedRecordNotHinted: a promoted record whose stored bytes were
// edited behind the store (SQL on agent_ls_records, as a role with data
// privileges could) is not shown by the editor's inlay hints, as render
// refuses it: the hints are vouched against the ledger.
func TestTamperedRecordNotHinted(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "store: "+strconv.Quote(loc)+"\n")
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := env.write(t, "deploy.agent.yaml", string(data))
	st := savePromotedPG(t, loc, data)
	defer st.Close()
	const content = promotedPGContent
	open := func(ro bool) func(ctx context.Context, p string) (store.Store, error) {
		return func(ctx context.Context, p string) (store.Store, error) {
			return backend.Open(ctx, p, store.Options{LockTimeout: 5 * time.Second, ReadOnly: ro})
		}
	}
	c := startServer(t, Options{OpenStore: open(false), OpenStoreReadOnly: open(true), NoWatch: true, Getenv: func(string) string { return "" }})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, true)
	uri := c.open(path, string(data), 1)
	c.awaitDiagnostics(uri, 1)
	if h := hintWith(c.hints(uri), content); h == nil {
		t.Fatal("no hint for the promoted fact before the edit")
	}
	pgtest.Exec(t, loc, `UPDATE agent_ls_records SET body = replace(body, 'Tuesdays', 'Fridays')`)
	hs := c.hints(uri)
	if h := hintWith(hs, "Fridays"); h != nil {
		t.Errorf("the edited record is hinted: %+v", h)
	}
}

// TestPostgresStorePathOption: a postgres:// URL given as the client's
// storePath (initializationOptions) overrides the workspace's store and is
// opened as a URL, not as a path under the root: a record promoted there
// shows in the open file's hints.
func TestPostgresStorePathOption(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "store: .agent-memory/memory.db\n")
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	st := savePromotedPG(t, loc, data)
	defer st.Close()
	const content = promotedPGContent
	var opened []string
	var mu sync.Mutex
	open := func(ro bool) func(ctx context.Context, p string) (store.Store, error) {
		return func(ctx context.Context, p string) (store.Store, error) {
			mu.Lock()
			opened = append(opened, p)
			mu.Unlock()
			return backend.Open(ctx, p, store.Options{LockTimeout: 5 * time.Second, ReadOnly: ro})
		}
	}
	c := startServer(t, Options{OpenStore: open(false), OpenStoreReadOnly: open(true), NoWatch: true, Getenv: func(string) string { return "" }})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana", "storePath": loc}, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	if h := hintWith(c.hints(uri), content); h == nil {
		t.Errorf("no hint for the record promoted in the storePath store")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) == 0 || slices.ContainsFunc(opened, func(p string) bool { return p != loc }) {
		t.Errorf("the server opened %q, want only %q", opened, loc)
	}
}

// promotedPGContent is the record savePromotedPG promotes.
const promotedPGContent = "Deploys go out Tuesdays after 14:00 ET"

// savePromotedPG opens the store at loc and saves promotedPGContent through
// the agent data describes (deploy.agent.yaml), promoted at the auto tier
// as an agent's save would be; the caller closes the store.
func savePromotedPG(t *testing.T, loc string, data []byte) store.Store {
	t.Helper()
	st, err := backend.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, cfg, _, err := schema.LoadAgent("deploy.agent.yaml", data)
	if err != nil || cfg == nil {
		st.Close()
		t.Fatalf("load agent: %v", err)
	}
	mt, err := schema.ParseTarget("background.projectContext.deploy_window")
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	res, err := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg}).Save(context.Background(), engine.SaveRequest{
		Kind: schema.KindFact, Content: promotedPGContent, Target: &mt,
		Provenance: schema.Provenance{ConversationID: "conv-1"},
		Actor:      store.Actor{Kind: store.ActorAgent, Name: cfg.RoleTemplate.Name},
	})
	if err != nil || res.State != engine.StatePromoted {
		st.Close()
		t.Fatalf("save: %+v, %v", res, err)
	}
	return st
}
