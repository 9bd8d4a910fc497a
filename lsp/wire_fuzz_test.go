package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// fuzzDeadline bounds one FuzzWire iteration: a server that stops
// answering fails it as a hang (not a timing assertion).
const fuzzDeadline = 10 * time.Second

// fuzzPipe is a language server on two io.Pipes, so the client can end its
// input (EOF) while still reading the server's output.
type fuzzPipe struct {
	t    *testing.T
	in   *io.PipeWriter // the server's stdin
	done chan error     // Serve's result
	msgs chan map[string]any
	bad  chan string // output that is not a frame of JSON
	wmu  sync.Mutex
}

type pipeRWC struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeRWC) Close() error {
	for _, c := range p.closers {
		_ = c.Close()
	}
	return nil
}

func startFuzzPipe(t *testing.T, ctx context.Context) *fuzzPipe {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &fuzzPipe{t: t, in: inW, done: make(chan error, 1), msgs: make(chan map[string]any, 256), bad: make(chan string, 1)}
	go func() {
		p.done <- Serve(ctx, pipeRWC{inR, outW, []io.Closer{inR}}, Options{NoWatch: true, Logger: slog.New(slog.DiscardHandler)})
		_ = outW.Close()
	}()
	go p.readLoop(bufio.NewReader(outR))
	return p
}

// readLoop parses the server's output into messages, answering the
// server's own requests (workspace/applyEdit, refreshes) with null.
func (p *fuzzPipe) readLoop(in *bufio.Reader) {
	defer close(p.msgs)
	for {
		length := -1
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				if line != "" || length >= 0 {
					p.bad <- fmt.Sprintf("output ends inside a header: %q", line)
				}
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			v, ok := strings.CutPrefix(line, "Content-Length: ")
			if !ok {
				p.bad <- fmt.Sprintf("output header %q", line)
				return
			}
			length, _ = strconv.Atoi(v)
		}
		body := make([]byte, max(length, 0))
		if _, err := io.ReadFull(in, body); err != nil || length < 0 {
			p.bad <- fmt.Sprintf("output frame of %d bytes: %v", length, err)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			p.bad <- fmt.Sprintf("output is not JSON: %q", body)
			return
		}
		if _, isReq := m["method"]; isReq && m["id"] != nil {
			id, _ := json.Marshal(m["id"])
			_ = p.write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`))
		}
		p.msgs <- m
	}
}

func frame(body []byte) []byte {
	return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

// write sends raw bytes to the server's stdin in one Write.
func (p *fuzzPipe) write(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.in.Write(b)
	return err
}

// recv returns the next message, failing on malformed output, a server
// that ended, or the iteration's deadline.
func (p *fuzzPipe) recv(deadline <-chan time.Time, waiting string) map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			select {
			case b := <-p.bad:
				p.t.Fatalf("while waiting for %s: %s", waiting, b)
			default:
			}
			p.t.Fatalf("server output ended while waiting for %s", waiting)
		}
		return m
	case b := <-p.bad:
		p.t.Fatalf("while waiting for %s: %s", waiting, b)
	case <-deadline:
		p.t.Fatalf("no answer within %v while waiting for %s (hang)", fuzzDeadline, waiting)
	}
	return nil
}

// expectation is what one fuzzed body must get back.
type expectation struct {
	parseError bool   // not JSON: a ParseError with id null
	id         string // a request with a readable id: a response with it (JSON of the decoded id)
	ends       bool   // exit, which ends the session (such bodies are not sent)
	shutdown   bool
}

func expect(body []byte) expectation {
	// What the library reads is what the server acts on: a body holding a
	// message followed by more text is read as that message (the decoder
	// stops after the first value).
	if msg, err := jsonrpc2.DecodeMessage(body); err == nil {
		switch m := msg.(type) {
		case *jsonrpc2.Call:
			mid := m.ID()
			id, _ := mid.MarshalJSON()
			return expectation{id: normID(id), shutdown: m.Method() == "shutdown"}
		case *jsonrpc2.Notification:
			return expectation{ends: m.Method() == "exit"}
		}
		return expectation{}
	}
	if !json.Valid(body) {
		return expectation{parseError: true}
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Method == nil {
		return expectation{}
	}
	e := expectation{ends: *probe.Method == "exit", shutdown: *probe.Method == "shutdown"}
	if len(probe.ID) > 0 && validID(probe.ID) {
		e.id = normID(probe.ID)
	}
	return e
}

// normID is an id as the JSON of its decoded value, so 7, 7.0 and 7e0 (or
// "a" and "\u0061") are one id.
func normID(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

const fuzzProbeID = `"fuzz-probe-final"`

// FuzzWire feeds the language server random and truncated JSON-RPC over
// its stdio stream, in two sessions per input:
//
//  1. bodies, split at 0x1E, each sent as a well-framed message after
//     initialize, then a shutdown request: the server never crashes;
//     every body that is not JSON gets a ParseError with id null; every
//     request with a readable id gets a response with that id; and the
//     final shutdown is answered (with a result, unless a fuzzed shutdown
//     came first). Bodies that are an exit notification, or that reuse
//     the harness's ids, are left out. (A body holding a message followed
//     by more text is read as that message, as the jsonrpc2 library reads
//     it.)
//  2. raw, sent as is after initialize (arbitrary bytes: broken headers,
//     frames cut short), then the end of input: the server returns from
//     Serve, its output stays well-formed frames of JSON.
//
// Each session is bounded by fuzzDeadline, so a hang is a failure.
func FuzzWire(f *testing.F) {
	sep := "\x1e"
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`), []byte(""))
	f.Add([]byte(`hello`+sep+`{"jsonrpc":"2.0","id":2,"method":`+sep+`{"jsonrpc":"1.0","id":3,"method":"shutdown"}`), []byte("Content-Length: 50\r\n\r\n{\"jsonrpc\":\"2.0\""))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"textDocument/teleport","params":{}}`+sep+`{"jsonrpc":"2.0","id":"s","method":"textDocument/hover","params":{"position":"here"}}`+sep+`[]`+sep+`null`+sep+`{"id":1.5,"method":"x"}`), []byte("Content-Length: x\r\n\r\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml","languageId":"yaml","version":1,"text":"roleTemplate:\n  name: x\n"}}}`+sep+
		`{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml"},"position":{"line":0,"character":2}}}`+sep+
		`{"jsonrpc":"2.0","id":6,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml"},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}}}}`+sep+
		`{"jsonrpc":"2.0","id":7,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml"},"position":{"line":1,"character":2}}}`+sep+
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml","version":2},"contentChanges":[{"text":"a: [\n"}]}}`+sep+
		`{"jsonrpc":"2.0","id":8,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///tmp/fuzz/a.agent.yaml"}}}`+sep+
		`{"jsonrpc":"2.0","id":9,"method":"workspace/executeCommand","params":{"command":"agent-ls.approve","arguments":[{}]}}`+sep+
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":8}}`), []byte("Content-Length: 10\r\n\r\n{}"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":10,"method":"agent-ls/composedPrompt","params":[1,2]}`+sep+`{"jsonrpc":"2.0","id":11,"method":"initialize","params":{}}`), []byte("\r\n\r\nContent-Length: 2\r\n\r\n{}Content-Length: 99999999999999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, bodies, raw []byte) {
		dir := t.TempDir()
		init := []byte(`{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"processId":1,"rootUri":"` + string(pathToURI(dir)) + `","capabilities":{}}}`)
		initialized := []byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

		// Session 1: framed bodies, then a shutdown that must be answered.
		func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := startFuzzPipe(t, ctx)
			deadline := time.After(fuzzDeadline)
			defer func() {
				_ = p.in.Close()
				go func() {
					for range p.msgs { // keep the server's writes flowing
					}
				}()
				<-p.done
			}()
			if err := p.write(append(frame(init), frame(initialized)...)); err != nil {
				t.Fatal(err)
			}
			wantIDs := map[string]int{}
			parseErrors, sawShutdown := 0, false
			for _, body := range bytes.Split(bodies, []byte(sep)) {
				e := expect(body)
				if e.ends || bytes.Contains(body, []byte("fuzz-")) {
					continue
				}
				if e.parseError {
					parseErrors++
				}
				if e.id != "" {
					wantIDs[e.id]++
				}
				sawShutdown = sawShutdown || e.shutdown
				if err := p.write(frame(body)); err != nil {
					t.Fatalf("send: %v", err)
				}
			}
			if err := p.write(frame([]byte(`{"jsonrpc":"2.0","id":` + fuzzProbeID + `,"method":"shutdown"}`))); err != nil {
				t.Fatalf("send: %v", err)
			}
			var probe map[string]any
			gotInit := false
			for probe == nil || !gotInit || parseErrors > 0 || len(wantIDs) > 0 {
				m := p.recv(deadline, fmt.Sprintf("responses (init %v, %d parse errors and ids %v still due)", gotInit, parseErrors, wantIDs))
				if _, isMsg := m["method"]; isMsg {
					continue
				}
				id, _ := json.Marshal(m["id"])
				switch {
				case string(id) == `"fuzz-init"`:
					gotInit = true
				case string(id) == fuzzProbeID:
					probe = m
				case m["id"] == nil:
					if errCode(m) == -32700 {
						parseErrors--
					}
				default:
					wantIDs[string(id)]--
					if wantIDs[string(id)] <= 0 {
						delete(wantIDs, string(id))
					}
				}
			}
			if parseErrors < 0 {
				t.Fatalf("%d ParseErrors more than bodies that are not JSON", -parseErrors)
			}
			if !sawShutdown && probe["error"] != nil {
				t.Fatalf("shutdown after the fuzzed messages failed: %v", probe)
			}
		}()

		// Session 2: raw bytes, then the end of input.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := startFuzzPipe(t, ctx)
		deadline := time.After(fuzzDeadline)
		go func() {
			_ = p.write(append(append(frame(init), frame(initialized)...), raw...))
			_ = p.in.Close()
		}()
		for {
			select {
			case _, ok := <-p.msgs:
				if ok {
					continue
				}
				select {
				case b := <-p.bad:
					t.Fatalf("after raw input: %s", b)
				default:
				}
				select {
				case <-p.done:
				case <-deadline:
					t.Fatalf("Serve did not return within %v after the end of input (hang)", fuzzDeadline)
				}
				return
			case b := <-p.bad:
				t.Fatalf("after raw input: %s", b)
			case <-deadline:
				t.Fatalf("Serve did not end within %v after the end of input (hang)", fuzzDeadline)
			}
		}
	})
}
