package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// failsafe bounds every wait so a broken server fails the test instead of
// hanging it; it is not a timing assertion.
const failsafe = 20 * time.Second

// note is one server->client message the test client saw.
type note struct {
	method string
	params json.RawMessage
}

// testClient is an LSP client over net.Pipe that records notifications and
// answers server requests (workspace/applyEdit, inlay hint refresh).
type testClient struct {
	t    testing.TB
	conn jsonrpc2.Conn
	done chan error // Serve's result

	mu    sync.Mutex
	cond  *sync.Cond
	notes []note
	calls []note // server->client requests
	// applyResult is what the client answers to workspace/applyEdit; a
	// func(params json.RawMessage) any answers each request.
	applyResult any
	// caps, when set, adds to the capabilities initialize sends.
	caps func(map[string]any)
}

// testEnv is a workspace on disk: a root with agent files and a store path.
type testEnv struct {
	root      string
	storePath string
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	root := t.TempDir()
	return &testEnv{root: root, storePath: filepath.Join(root, ".agent-memory", "memory.db")}
}

// write puts a file under the root and returns its path.
func (e *testEnv) write(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(e.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// boltOpener opens the real bbolt store, as agent-ls serve does.
func boltOpener(now func() time.Time) func(ctx context.Context, path string) (store.Store, error) {
	return func(ctx context.Context, path string) (store.Store, error) {
		return bolt.Open(path, store.Options{Now: now, LockTimeout: 200 * time.Millisecond})
	}
}

// boltReadOnlyOpener is boltOpener for reads, as agent-ls serve wires
// OpenStoreReadOnly: a read-only open never creates the file.
func boltReadOnlyOpener(now func() time.Time) func(ctx context.Context, path string) (store.Store, error) {
	return func(ctx context.Context, path string) (store.Store, error) {
		return bolt.Open(path, store.Options{Now: now, LockTimeout: 200 * time.Millisecond, ReadOnly: true})
	}
}

// startServer runs Serve over a pipe and returns a connected, uninitialized
// client.
func startServer(t testing.TB, opts Options) *testClient {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sconn, cconn := net.Pipe()
	c := &testClient{t: t, done: make(chan error, 1), applyResult: map[string]any{"applied": true}}
	c.cond = sync.NewCond(&c.mu)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.done <- Serve(ctx, sconn, opts) }()
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(cconn))
	c.conn.Go(ctx, c.handle)
	t.Cleanup(func() {
		cancel()
		_ = c.conn.Close()
		select {
		case <-c.done:
		case <-time.After(failsafe):
			t.Error("server did not stop")
		}
	})
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (c *testClient) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	n := note{method: req.Method(), params: append(json.RawMessage(nil), req.Params()...)}
	c.mu.Lock()
	_, isCall := req.(*jsonrpc2.Call)
	if isCall {
		c.calls = append(c.calls, n)
	} else {
		c.notes = append(c.notes, n)
	}
	res := c.applyResult
	c.cond.Broadcast()
	c.mu.Unlock()
	switch req.Method() {
	case methodApplyEdit:
		if answer, ok := res.(func(json.RawMessage) any); ok {
			res = answer(n.params)
		}
		return reply(ctx, res, nil)
	case methodInlayHintRefresh:
		return reply(ctx, nil, nil)
	}
	return reply(ctx, nil, jsonrpc2.ErrMethodNotFound)
}

// initialize sends initialize and initialized.
func (c *testClient) initialize(root string, initOpts any, refresh bool) map[string]any {
	c.t.Helper()
	caps := map[string]any{"textDocument": map[string]any{"inlayHint": map[string]any{}}, "workspace": map[string]any{"applyEdit": true}}
	if refresh {
		caps["workspace"] = map[string]any{"applyEdit": true, "inlayHint": map[string]any{"refreshSupport": true}}
	}
	if c.caps != nil {
		c.caps(caps)
	}
	params := map[string]any{
		"processId": 1, "rootUri": string(pathToURI(root)), "capabilities": caps,
		"workspaceFolders": []any{map[string]any{"uri": string(pathToURI(root)), "name": "ws"}},
	}
	if initOpts != nil {
		params["initializationOptions"] = initOpts
	}
	var res map[string]any
	c.call(protocol.MethodInitialize, params, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
	return res
}

func (c *testClient) call(method string, params, result any) {
	c.t.Helper()
	if err := c.callErr(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *testClient) callErr(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

func (c *testClient) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("notify %s: %v", method, err)
	}
}

func (c *testClient) open(path, text string, version int) protocol.DocumentURI {
	uri := pathToURI(path)
	c.notify(protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "yaml", "version": version, "text": text}})
	return uri
}

func (c *testClient) change(uri protocol.DocumentURI, text string, version int) {
	c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"text": text}}})
}

// changeRange sends one ranged change (incremental sync): text replaces
// the range from line l1, character c1 to line l2, character c2.
func (c *testClient) changeRange(uri protocol.DocumentURI, l1, c1, l2, c2 int, text string, version int) {
	c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"text": text, "range": map[string]any{
			"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}}}})
}

// forget drops the recorded notifications, so that a benchmark's waits
// scan only those of its current iteration instead of decoding every
// earlier publish again (which made an iteration's wait grow with b.N and
// took the cores the server was measured on).
func (c *testClient) forget() {
	c.mu.Lock()
	c.notes = nil
	c.mu.Unlock()
}

// waitFor blocks until cond holds over the recorded messages.
func (c *testClient) waitFor(what string, cond func(notes, calls []note) bool) {
	c.t.Helper()
	deadline := time.Now().Add(failsafe)
	timer := time.AfterFunc(failsafe, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !cond(c.notes, c.calls) {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; saw %s", what, summarize(c.notes))
		}
		c.cond.Wait()
	}
}

func summarize(ns []note) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "\n  %s %s", n.method, n.params)
	}
	return b.String()
}

// diagnostics returns the publishDiagnostics notifications of uri so far.
func (c *testClient) diagnostics(uri protocol.DocumentURI) []rawDiagnostics {
	c.mu.Lock()
	defer c.mu.Unlock()
	return diagsOf(c.notes, uri)
}

// rawDiagnostics keeps the raw diagnostics array to tell [] from null.
type rawDiagnostics struct {
	URI         protocol.DocumentURI  `json:"uri"`
	Version     int32                 `json:"version"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
	Raw         json.RawMessage       `json:"-"`
}

func diagsOf(ns []note, uri protocol.DocumentURI) []rawDiagnostics {
	var out []rawDiagnostics
	for _, n := range ns {
		if n.method != protocol.MethodTextDocumentPublishDiagnostics {
			continue
		}
		var d rawDiagnostics
		if err := json.Unmarshal(n.params, &d); err != nil || d.URI != uri {
			continue
		}
		var raw struct {
			Diagnostics json.RawMessage `json:"diagnostics"`
		}
		_ = json.Unmarshal(n.params, &raw)
		d.Raw = raw.Diagnostics
		out = append(out, d)
	}
	return out
}

// awaitDiagnostics waits for a publish of uri at version and returns the
// first one (the quick parse and schema pass).
func (c *testClient) awaitDiagnostics(uri protocol.DocumentURI, version int32) rawDiagnostics {
	c.t.Helper()
	var got rawDiagnostics
	c.waitFor(fmt.Sprintf("diagnostics of %s v%d", uri, version), func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			if d.Version == version {
				got = d
				return true
			}
		}
		return false
	})
	return got
}

// notesOf returns the params of every notification of method.
func (c *testClient) notesOf(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notes {
		if n.method == method {
			out = append(out, n.params)
		}
	}
	return out
}

// rawConn speaks framed JSON-RPC bytes directly, for wire-level tests and
// for benchmarks that time a reply's arrival without a client library's
// decoding of it.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	in *bufio.Reader
}

func startRaw(t testing.TB, opts Options) *rawConn {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	sconn, cconn := net.Pipe()
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- Serve(ctx, sconn, opts) }()
	t.Cleanup(func() {
		cancel()
		_ = cconn.Close()
		<-done
	})
	return &rawConn{t: t, c: cconn, in: bufio.NewReaderSize(cconn, 64<<10)}
}

func (r *rawConn) send(body string) {
	r.t.Helper()
	_ = r.c.SetWriteDeadline(time.Now().Add(failsafe))
	if _, err := fmt.Fprintf(r.c, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// recvFrame reads the next message's body, undecoded.
func (r *rawConn) recvFrame() []byte {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(failsafe))
	length := 0
	for {
		line, err := r.in.ReadString('\n')
		if err != nil {
			r.t.Fatalf("recv header: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r.in, body); err != nil {
		r.t.Fatalf("recv body: %v", err)
	}
	return body
}

// recv reads the next message as a generic map.
func (r *rawConn) recv() map[string]any {
	r.t.Helper()
	body := r.recvFrame()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Fatalf("recv: %v in %s", err, body)
	}
	return m
}

// frameHead reads a message's id and method from its top-level members
// that come before its result, params or error (a request's method and id
// come first), so a large message is not decoded to find what it is; id is
// the id's JSON text, "" for a notification.
func frameHead(body []byte) (id, method string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return id, method
		}
		var v json.RawMessage
		switch key {
		case "id", "method", "jsonrpc":
			if err := dec.Decode(&v); err != nil {
				return id, method
			}
			if key == "id" {
				id = string(v)
			} else if key == "method" {
				_ = json.Unmarshal(v, &method)
			}
		default:
			if id != "" || method != "" {
				return id, method
			}
			if err := dec.Decode(&v); err != nil {
				return id, method
			}
		}
	}
	return id, method
}

// callFrame sends request id and returns its response's body undecoded,
// answering the server's own requests with null and skipping its
// notifications meanwhile.
func (r *rawConn) callFrame(id int, method, params string) []byte {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + `}`)
	want := strconv.Itoa(id)
	tail := []byte(`,"id":` + want + `}`)
	for {
		body := r.recvFrame()
		if bytes.HasSuffix(body, tail) {
			// The server writes a response's members in jsonrpc2's
			// order, its id last: found without reading the result.
			return body
		}
		got, m := frameHead(body)
		switch {
		case m != "" && got != "":
			r.send(`{"jsonrpc":"2.0","id":` + got + `,"result":null}`)
		case m == "" && got == want:
			return body
		}
	}
}

// recvResponse skips notifications until a response arrives.
func (r *rawConn) recvResponse() map[string]any {
	r.t.Helper()
	for {
		m := r.recv()
		if _, isResp := m["method"]; !isResp {
			return m
		}
	}
}

// deployText is the text of testdata/agents/deploy.agent.yaml, the agent
// file most tests serve.
func deployText(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
