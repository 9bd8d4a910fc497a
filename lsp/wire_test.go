package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

const cleanAgent = "roleTemplate:\n  name: wire\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n"

// blockingOpener returns an opener that blocks until its context ends, and
// a channel told each time it starts blocking.
func blockingOpener() (func(ctx context.Context, path string) (store.Store, error), chan struct{}) {
	started := make(chan struct{}, 8)
	return func(ctx context.Context, path string) (store.Store, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}, started
}

func rawInit(r *rawConn, root string) {
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"` + string(pathToURI(root)) + `","capabilities":{}}}`)
	if m := r.recvResponse(); m["id"] != float64(1) || m["error"] != nil {
		r.t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
}

// rawOpen opens a file and waits for its quick diagnostics.
func rawOpen(r *rawConn, path, text string) {
	params, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": pathToURI(path), "languageId": "yaml", "version": 1, "text": text}})
	r.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":` + string(params) + `}`)
	for {
		m := r.recv()
		if m["method"] == protocol.MethodTextDocumentPublishDiagnostics {
			return
		}
	}
}

// TestWireCancelNumericID: a $/cancelRequest with a numeric id (what every
// real client sends) cancels the request, which answers RequestCancelled;
// a string id works too (library defect 2).
func TestWireCancelNumericID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, id, cancelID string }{
		{"number", `7`, `7`},
		{"string", `"req-7"`, `"req-7"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			if err := os.MkdirAll(filepath.Dir(env.storePath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(env.storePath, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			open, started := blockingOpener()
			r := startRaw(t, Options{NoWatch: true, OpenStore: open})
			rawInit(r, env.root)
			path := filepath.Join(env.root, "a.agent.yaml")
			_ = started // the diagnostics run blocks in the opener too, until the end
			rawOpen(r, path, cleanAgent)
			r.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"agent-ls/proposals","params":{"uri":"` + string(pathToURI(path)) + `"}}`)
			r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + tt.cancelID + `}}`)
			m := r.recvResponse()
			idJSON, _ := json.Marshal(m["id"])
			if string(idJSON) != tt.id {
				t.Fatalf("response id %s, want %s: %v", idJSON, tt.id, m)
			}
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != float64(-32800) {
				t.Fatalf("cancelled request answered %v, want error code -32800 (RequestCancelled)", m)
			}
			// The server still serves.
			r.send(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
			if m := r.recvResponse(); m["id"] != float64(99) || m["error"] != nil {
				t.Fatalf("shutdown after cancel: %v", m)
			}
		})
	}
}

// TestWireMalformed: a frame that is not JSON gets a ParseError (id null),
// a request of the wrong shape an InvalidRequest with its id, unknown
// methods MethodNotFound, bad params InvalidParams; the server keeps
// serving after each.
func TestWireMalformed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := startRaw(t, Options{NoWatch: true})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`)
	if m := r.recvResponse(); errCode(m) != -32002 {
		t.Fatalf("request before initialize: %v, want ServerNotInitialized", m)
	}
	rawInit(r, env.root)
	agentURI := string(pathToURI(env.write(t, "a.agent.yaml", cleanAgent)))
	tests := []struct {
		name     string
		body     string
		wantID   any
		wantCode float64
	}{
		{"not json", `{"jsonrpc":"2.0","id":2,"method":`, nil, -32700},
		{"garbage", `hello`, nil, -32700},
		{"empty body (Content-Length: 0)", ``, nil, -32700},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"shutdown"}`, float64(3), -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"textDocument/teleport","params":{}}`, float64(4), -32601},
		{"unknown agent-ls method", `{"jsonrpc":"2.0","id":5,"method":"agent-ls/teleport","params":{}}`, float64(5), -32601},
		// Params are optional in JSON-RPC: without them an unknown method
		// answered InvalidParams, "JSON-RPC parse error: unexpected end of JSON input".
		{"unknown method without params", `{"jsonrpc":"2.0","id":14,"method":"textDocument/teleport"}`, float64(14), -32601},
		{"unserved method without params", `{"jsonrpc":"2.0","id":15,"method":"textDocument/definition"}`, float64(15), -32601},
		{"bad params standard", `{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"position":"here"}}`, float64(6), -32602},
		{"bad params custom", `{"jsonrpc":"2.0","id":7,"method":"agent-ls/composedPrompt","params":[1,2]}`, float64(7), -32602},
		{"bad params inlay", `{"jsonrpc":"2.0","id":8,"method":"textDocument/inlayHint","params":{"range":"all"}}`, float64(8), -32602},
		{"missing params", `{"jsonrpc":"2.0","id":9,"method":"agent-ls/learnings"}`, float64(9), -32602},
		{"unknown command", `{"jsonrpc":"2.0","id":10,"method":"workspace/executeCommand","params":{"command":"agent-ls.teleport","arguments":[{}]}}`, float64(10), -32602},
		{"command missing argument", `{"jsonrpc":"2.0","id":11,"method":"workspace/executeCommand","params":{"command":"agent-ls.approve","arguments":[{}]}}`, float64(11), -32602},
		// A malformed time answered InternalError naming the CLI's flag, "--at: time ..." (TestComposedPromptBadAt has the wording).
		{"bad at", `{"jsonrpc":"2.0","id":12,"method":"agent-ls/composedPrompt","params":{"uri":"` + agentURI + `","at":"yesterday"}}`, float64(12), -32602},
		// 300000 days overflowed time.Duration: a since in the future, [] answered.
		{"since past the time range", `{"jsonrpc":"2.0","id":13,"method":"agent-ls/learnings","params":{"uri":"` + agentURI + `","since":"300000d"}}`, float64(13), -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.send(tt.body)
			m := r.recvResponse()
			if m["id"] != tt.wantID || errCode(m) != tt.wantCode {
				t.Fatalf("got %v, want id %v code %v", m, tt.wantID, tt.wantCode)
			}
			msg, _ := m["error"].(map[string]any)["message"].(string)
			if strings.TrimSpace(msg) == "" {
				t.Errorf("error without a message: %v", m)
			}
			if strings.Contains(msg, "--") {
				t.Errorf("error names a command-line flag, not the request's param: %v", m)
			}
		})
	}
	// Unknown notifications are ignored silently; the connection still works.
	r.send(`{"jsonrpc":"2.0","method":"workspace/somethingNew","params":{}}`)
	r.send(`{"jsonrpc":"2.0","id":50,"method":"shutdown"}`)
	if m := r.recvResponse(); m["id"] != float64(50) || m["error"] != nil {
		t.Fatalf("shutdown: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":51,"method":"textDocument/hover","params":{}}`)
	if m := r.recvResponse(); errCode(m) != -32600 {
		t.Fatalf("request after shutdown: %v, want InvalidRequest", m)
	}
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	c, _ := e["code"].(float64)
	return c
}

// TestWirePanicRecovered: a panic inside a handler is answered with
// InternalError and logged to the client; later requests still work.
func TestWirePanicRecovered(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	if err := os.MkdirAll(filepath.Dir(env.storePath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.storePath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	panicky := func(ctx context.Context, path string) (store.Store, error) { panic("store opener exploded") }
	locked := func(ctx context.Context, path string) (store.Store, error) { return nil, store.ErrLocked }
	c := startServer(t, Options{NoWatch: true, OpenStore: panicky, OpenStoreReadOnly: locked})
	c.initialize(env.root, nil, false)
	path := env.write(t, "a.agent.yaml", cleanAgent)
	uri := c.open(path, cleanAgent, 1)
	c.awaitDiagnostics(uri, 1)
	err := c.callErr(methodProposals, map[string]any{"uri": uri}, nil)
	if err == nil || !strings.Contains(err.Error(), "store opener exploded") {
		t.Fatalf("proposals with a panicking handler: %v, want an internal error naming the panic", err)
	}
	c.waitFor("logMessage about the panic", func(ns, _ []note) bool {
		for _, n := range ns {
			if n.method == protocol.MethodWindowLogMessage && strings.Contains(string(n.params), "panic") {
				return true
			}
		}
		return false
	})
	var hover json.RawMessage
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 1, "character": 3}}, &hover)
	if !strings.Contains(string(hover), "roleTemplate/name") {
		t.Errorf("hover after a panic: %s", hover)
	}
}

// TestWireApplyEditResult: workspace/applyEdit answered {"applied": true}
// decodes (library defect 1), and {"applied": false} is reported as such.
func TestWireApplyEditResult(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		answer any
		want   ApplyEditResult
	}{
		{"applied", map[string]any{"applied": true}, ApplyEditResult{Applied: true}},
		{"refused", map[string]any{"applied": false, "failureReason": "read-only"}, ApplyEditResult{Applied: false, FailureReason: "read-only"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			srv := make(chan *server, 1)
			c := startServer(t, Options{NoWatch: true, testHook: func(s *server) { srv <- s }})
			c.mu.Lock()
			c.applyResult = tt.answer
			c.mu.Unlock()
			c.initialize(env.root, nil, false)
			s := <-srv
			res, err := s.applyEdit(context.Background(), "test", protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{
				pathToURI(filepath.Join(env.root, "a.agent.yaml")): {{NewText: "x"}}}})
			if err != nil {
				t.Fatalf("applyEdit: %v", err)
			}
			if res.Applied != tt.want.Applied || res.FailureReason != tt.want.FailureReason {
				t.Fatalf("applyEdit result %+v, want %+v", res, tt.want)
			}
		})
	}
}

// TestWireDiagnosticsNeverNull: clean files publish "diagnostics":[] on
// the wire, and closing a file clears it with [].
func TestWireDiagnosticsNeverNull(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := startRaw(t, Options{NoWatch: true})
	rawInit(r, env.root)
	path := filepath.Join(env.root, "a.agent.yaml")
	params, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": pathToURI(path), "languageId": "yaml", "version": 0, "text": cleanAgent}})
	r.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":` + string(params) + `}`)
	check := func(what string) {
		for {
			m := r.recv()
			if m["method"] != protocol.MethodTextDocumentPublishDiagnostics {
				continue
			}
			p := m["params"].(map[string]any)
			ds, ok := p["diagnostics"].([]any)
			if !ok || len(ds) != 0 {
				t.Fatalf("%s: diagnostics %#v, want []", what, p["diagnostics"])
			}
			if v, ok := p["version"]; !ok || v != float64(0) {
				t.Fatalf("%s: version %v, want 0 kept on the wire", what, v)
			}
			return
		}
	}
	check("open")
	r.send(`{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"` + string(pathToURI(path)) + `"}}}`)
	check("close")
}

// TestWireLuaEmptyTables: Neovim encodes an empty Lua table as [], so a
// capability object arrives as an array. initialize accepts it (an empty
// textDocument.inlayHint still means the client shows hints), and a
// capability of the wrong type elsewhere is ignored, not a failed
// initialize; params that are not capabilities stay strict.
func TestWireLuaEmptyTables(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, params string
		ok           bool
	}{
		{"inlayHint as []", `"capabilities":{"workspace":{"inlayHint":{"refreshSupport":true}},"textDocument":{"inlayHint":[]}}`, true},
		{"other capabilities as []", `"capabilities":{"workspace":[],"textDocument":{"hover":[],"inlayHint":{}}}`, true},
		{"no inlayHint", `"capabilities":{"textDocument":{}}`, true},
		{"processId mistyped", `"processId":"x","capabilities":{}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			r := startRaw(t, Options{NoWatch: true})
			r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"` + string(pathToURI(env.root)) + `",` + tt.params + `}}`)
			m := r.recvResponse()
			if got := m["error"] == nil; got != tt.ok {
				t.Fatalf("initialize answered %v, want ok=%v", m, tt.ok)
			}
			if !tt.ok {
				if errCode(m) != -32602 {
					t.Fatalf("initialize error %v, want InvalidParams", m)
				}
				return
			}
			caps := m["result"].(map[string]any)["capabilities"].(map[string]any)
			if _, ok := caps["inlayHintProvider"]; !ok {
				t.Fatalf("no inlayHintProvider in %v", caps)
			}
			r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
			path := filepath.Join(env.root, "a.agent.yaml")
			rawOpen(r, path, cleanAgent)
			r.send(`{"jsonrpc":"2.0","id":2,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"` + string(pathToURI(path)) + `"},"range":{"start":{"line":0,"character":0},"end":{"line":999,"character":0}}}}`)
			if m := r.recvResponse(); m["error"] != nil {
				t.Fatalf("inlayHint after a Lua-shaped initialize: %v", m)
			}
		})
	}
}

// TestWireShutdownNotification: shutdown is a request; a notification of
// that name (found by FuzzWire) is ignored, and requests after it are
// served, not refused as "shutting down".
func TestWireShutdownNotification(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := startRaw(t, Options{NoWatch: true})
	rawInit(r, env.root)
	r.send(`{"jsonrpc":"2.0","method":"shutdown"}`)
	r.send(`{"jsonrpc":"2.0","id":7,"method":"shutdown"}`)
	if m := r.recvResponse(); m["id"] != float64(7) || m["error"] != nil {
		t.Fatalf("shutdown request after a shutdown notification: %v, want a result", m)
	}
}

// TestWireInitializeNotification: initialize is a request; a notification
// of that name (it has no id, so nothing can answer it) initializes
// nothing: requests after it still answer ServerNotInitialized, and the
// client's initialize request then succeeds. It initialized the server,
// with the capabilities and folders of a message no one answered, and the
// real initialize was refused as "already initialized".
func TestWireInitializeNotification(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := startRaw(t, Options{NoWatch: true})
	r.send(`{"jsonrpc":"2.0","method":"initialize","params":{"processId":1,"rootUri":"file:///elsewhere","capabilities":{}}}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
	if m := r.recvResponse(); m["id"] != float64(2) || errCode(m) != -32002 {
		t.Fatalf("request after an initialize notification: %v, want ServerNotInitialized", m)
	}
	rawInit(r, env.root)
}

// TestWireCancelAdoptAfterEdit: adopt sends its edit, the client cancels
// the command and then applies the edit. The edit is in the file, so the
// record is retired all the same: the command went on to its end. It
// stopped at the cancellation, leaving the line both authored and learned
// (twice in the agent's prompt).
func TestWireCancelAdoptAfterEdit(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	env := newTestEnv(t)
	path := env.write(t, "deploy.agent.yaml", text)
	fact := agentSave(t, env, text, "Thursdays", "background.projectContext.deploy_window", "conv-1")
	r := startRaw(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"` + string(pathToURI(env.root)) +
		`","capabilities":{"workspace":{"applyEdit":true}},"initializationOptions":{"actor":"human:ana"}}}`)
	if m := r.recvResponse(); m["error"] != nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	rawOpen(r, path, text)
	args, _ := json.Marshal(map[string]any{"command": CommandAdopt, "arguments": []any{map[string]any{"recordId": fact.Record.ID, "uri": pathToURI(path)}}})
	r.send(`{"jsonrpc":"2.0","id":5,"method":"workspace/executeCommand","params":` + string(args) + `}`)
	var applyID json.RawMessage
	for applyID == nil {
		m := r.recv()
		if m["method"] == methodApplyEdit {
			applyID, _ = json.Marshal(m["id"])
		}
	}
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}`)
	r.send(`{"jsonrpc":"2.0","id":` + string(applyID) + `,"result":{"applied":true}}`)
	for {
		m := r.recv()
		if m["id"] == float64(5) {
			break
		}
	}
	var rec schema.MemoryRecord
	withBolt(t, env, func(st store.Store) { rec, _ = st.Get(context.Background(), fact.Record.ID) })
	if rec.InvalidAt == "" || !strings.Contains(rec.InvalidReason, "adopted") {
		t.Fatalf("the client applied the edit but the record was not retired: %+v", rec)
	}
}
