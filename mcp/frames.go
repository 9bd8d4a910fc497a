package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agent-ls/agent-ls/schema"
)

// MaxMessage is the largest MCP message (one line of JSON-RPC) the server
// reads for workspace limits l: room for a record at the content and
// payload limits with every character escaped, and 1 MiB at least.
func MaxMessage(l schema.Limits) int {
	l = l.WithDefaults()
	return max(1<<20, 6*(l.Content+l.Payload)+64<<10)
}

// MaxDepth is the deepest nesting of objects and arrays in one MCP message
// the server reads: a memory_save's payload has room for some 95 levels
// under the message's own.
const MaxDepth = 100

// DefaultDrain is how long the server waits, once its input ends, for the
// answers of requests it has read and not yet answered (FrameOptions.Drain).
const DefaultDrain = time.Minute

// JSON-RPC 2.0 error codes the framing layer answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// FrameOptions configures GuardFrames.
type FrameOptions struct {
	// Max is the largest message in bytes (MaxMessage).
	Max int
	// MaxDepth is the deepest nesting of a message; 0 is MaxDepth.
	MaxDepth int
	// Drain bounds how long the end of input waits for the answers of
	// requests already read; 0 is DefaultDrain.
	Drain time.Duration
	// Logger reports a drain that ran out of time; nil logs nothing.
	Logger *slog.Logger
}

// GuardFrames wraps the server's stdio so that only well-formed JSON-RPC
// messages reach the SDK, whose reader ends the session on the first line
// it cannot decode, and so that the end of input does not lose answers.
//
// Every line that is not a JSON-RPC 2.0 message is answered here and
// dropped, and the server reads on: a line that is not JSON gets a -32700
// parse error (id null); JSON that is not a request, notification or
// response (no or another "jsonrpc", an id that is neither a string nor a
// number, a method that is not a string, a member given twice, a batch —
// MCP 2025-06-18 removed them —, nesting deeper than MaxDepth, more than
// Max bytes, or a request id already in use by a request not yet answered)
// gets a -32600 invalid request, with the message's id when it names one
// (a batch: an array of one error per request in it). A message longer
// than Max is skipped without being held in memory.
//
// The SDK cancels the requests it has not handled yet when its input ends
// (go-sdk issue #1061), so an input that ends right after its requests
// lost answers run to run. The reader therefore holds the end of input
// back from the SDK until every request it passed on has been answered
// (the returned writer sees each answer go out), or Drain has passed, or
// the reader is closed.
//
// The returned writer must carry every outgoing message, so answers never
// interleave with the server's.
func GuardFrames(in io.Reader, out io.Writer, o FrameOptions) (io.ReadCloser, io.WriteCloser) {
	if o.MaxDepth <= 0 {
		o.MaxDepth = MaxDepth
	}
	if o.Drain <= 0 {
		o.Drain = DefaultDrain
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	open := &inflight{ids: map[string]int{}, changed: make(chan struct{})}
	w := &lockedWriter{w: out, open: open}
	return &frameReader{br: bufio.NewReaderSize(in, 64<<10), o: o, w: w, open: open, closed: make(chan struct{})}, w
}

// inflight is the set of request ids passed to the SDK and not yet
// answered, by idKey.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]int
	changed chan struct{} // closed and replaced at every answer
}

// add records a request id; false when one is already open.
func (p *inflight) add(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[key] > 0 {
		return false
	}
	p.ids[key]++
	return true
}

// answered closes the request key.
func (p *inflight) answered(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[key] == 0 {
		return
	}
	delete(p.ids, key)
	close(p.changed)
	p.changed = make(chan struct{})
}

// wait blocks until no request is open, timeout has passed or stop is
// closed, and returns how many are still open.
func (p *inflight) wait(timeout time.Duration, stop <-chan struct{}) int {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		n, ch := len(p.ids), p.changed
		p.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-ch:
		case <-timer.C:
			return n
		case <-stop:
			return n
		}
	}
}

// lockedWriter serializes writes and closes the request of every answer
// that goes out.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open *inflight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	n, err := l.write(p)
	if err == nil {
		for line := range bytes.Lines(p) {
			if key, ok := answerKey(line); ok {
				l.open.answered(key)
			}
		}
	}
	return n, err
}

// write writes p without looking at it: the framing layer's own answers,
// whose ids are not open requests.
func (l *lockedWriter) write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// answerKey is the idKey of the request that line (one outgoing message)
// answers; false when it answers none (a request or notification of the
// server's own).
func answerKey(line []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != nil {
		return "", false
	}
	return idKey(m.ID)
}

// idKey is the identity of a JSON-RPC id as the SDK sees it (a number is
// its int64 value, jsonrpc.MakeID), so a request's id and its answer's
// match; false for null, a missing id or any other value.
func idKey(id json.RawMessage) (string, bool) {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return "", false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(id, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := strconv.ParseFloat(string(id), 64)
		if err != nil {
			return "", false
		}
		return "n:" + strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// frameReader hands the SDK whole, well-formed messages, one a Read.
type frameReader struct {
	br      *bufio.Reader
	o       FrameOptions
	w       *lockedWriter
	open    *inflight
	pending []byte
	err     error
	drained bool

	closeOnce sync.Once
	closed    chan struct{}
}

func (f *frameReader) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return nil
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			// The end of input (or a read error) reaches the SDK once
			// the requests it was given are answered: its reader cancels
			// what it has not handled yet.
			if !f.drained {
				f.drained = true
				if n := f.open.wait(f.o.Drain, f.closed); n > 0 {
					f.o.Logger.Warn("end of input: requests still unanswered; closing", "requests", n, "waited", f.o.Drain)
				}
			}
			return 0, f.err
		}
		line, err := f.line()
		if len(line) > 0 {
			f.pending = f.admit(line)
		}
		f.err = err
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// idPrefix is how many bytes of an oversized message are kept to find its
// id.
const idPrefix = 4096

// line reads the next line. An oversized one is answered and dropped (nil
// line); a final line without a newline is returned with the read error.
func (f *frameReader) line() ([]byte, error) {
	var buf []byte
	var head []byte
	n := 0
	for {
		chunk, err := f.br.ReadSlice('\n')
		n += len(chunk)
		switch {
		case n <= f.o.Max:
			buf = append(buf, chunk...)
		case head == nil:
			head = append(buf, chunk...)
			if len(head) > idPrefix {
				head = head[:idPrefix]
			}
			buf = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if head != nil {
			f.refuse(topLevelID(head), codeInvalidRequest, fmt.Sprintf("message of %d bytes is larger than the %d bytes this server reads (limits.content and limits.payload in %s bound a memory); nothing was done", n, f.o.Max, schema.WorkspaceConfigName))
			return nil, err
		}
		return buf, err
	}
}

// admit returns line as the SDK gets it (trimmed, one newline) when it is a
// JSON-RPC message; otherwise it answers the line and returns nil. A
// request it admits is open until answered.
func (f *frameReader) admit(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	null := json.RawMessage("null")
	if !json.Valid(line) {
		f.refuse(null, codeParseError, "parse error: the line is not JSON; send one JSON-RPC message a line; nothing was done")
		return nil
	}
	if d, at := depth(line, f.o.MaxDepth); d > f.o.MaxDepth {
		f.refuse(topLevelID(line), codeInvalidRequest, fmt.Sprintf("message nests deeper than %d levels of objects and arrays (at byte %d); nothing was done", f.o.MaxDepth, at))
		return nil
	}
	switch line[0] {
	case '[':
		f.refuseBatch(line)
		return nil
	case '{':
	default:
		f.refuse(null, codeInvalidRequest, "not a JSON-RPC message: want an object; nothing was done")
		return nil
	}
	members, dup := objectMembers(line)
	id := null
	if raw, ok := members["id"]; ok && string(raw) != "null" {
		if _, ok := idKey(raw); !ok {
			f.refuse(null, codeInvalidRequest, `invalid request: "id" must be a string or a number; nothing was done`)
			return nil
		}
		id = raw
	}
	if dup != "" {
		f.refuse(id, codeInvalidRequest, fmt.Sprintf("invalid request: member %q twice; nothing was done", dup))
		return nil
	}
	var version string
	if json.Unmarshal(members["jsonrpc"], &version) != nil || version != "2.0" {
		f.refuse(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"; nothing was done`)
		return nil
	}
	method, isRequest := members["method"]
	if isRequest && (len(method) == 0 || method[0] != '"') {
		f.refuse(id, codeInvalidRequest, `invalid request: "method" must be a string; nothing was done`)
		return nil
	}
	if !isRequest && string(id) == "null" {
		f.refuse(id, codeInvalidRequest, `not a JSON-RPC message: neither a request (no "method") nor a response (no "id"); nothing was done`)
		return nil
	}
	// What the SDK's reader will run: a line it cannot decode would end
	// the session.
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		f.refuse(id, codeInvalidRequest, fmt.Sprintf("not a JSON-RPC message: %v; nothing was done", err))
		return nil
	}
	if isRequest && string(id) != "null" {
		key, _ := idKey(id)
		if !f.open.add(key) {
			f.refuse(id, codeInvalidRequest, fmt.Sprintf("invalid request: id %s is in use by a request not yet answered; nothing was done", id))
			return nil
		}
	}
	return append(line, '\n')
}

// refuseBatch answers a batch: one -32600 error per request in it, with
// its id, as an array (JSON-RPC's batch answer); an error with id null
// when it holds no request (an empty batch is an invalid request, and
// notifications get no answer).
func (f *frameReader) refuseBatch(line []byte) {
	const why = "invalid request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message a line; nothing was done"
	var elems []json.RawMessage
	_ = json.Unmarshal(line, &elems)
	var answers []json.RawMessage
	for _, e := range elems {
		members, _ := objectMembers(bytes.TrimSpace(e))
		if _, isRequest := members["method"]; !isRequest {
			continue
		}
		if _, ok := idKey(members["id"]); ok {
			answers = append(answers, errorAnswer(members["id"], codeInvalidRequest, why))
		}
	}
	if len(elems) == 0 {
		f.refuse(json.RawMessage("null"), codeInvalidRequest, "invalid request: an empty batch; nothing was done")
		return
	}
	if len(answers) == 0 {
		return
	}
	data, err := json.Marshal(answers)
	if err == nil {
		_, _ = f.w.write(append(data, '\n'))
	}
}

// refuse answers a message that is not passed on.
func (f *frameReader) refuse(id json.RawMessage, code int, message string) {
	_, _ = f.w.write(append(errorAnswer(id, code, message), '\n'))
}

// errorAnswer is a JSON-RPC error response.
func errorAnswer(id json.RawMessage, code int, message string) json.RawMessage {
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code = code
	resp.Error.Message = message
	data, err := json.Marshal(resp)
	if err != nil {
		return json.RawMessage(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`)
	}
	return data
}

// depth returns the nesting depth of the valid JSON data, counting until
// it exceeds limit, and the offset where it first did.
func depth(data []byte, limit int) (deepest, at int) {
	d, inString, escaped := 0, false, false
	for i, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			d++
			if d > deepest {
				deepest = d
				if d > limit {
					return d, i
				}
			}
		case '}', ']':
			d--
		}
	}
	return deepest, 0
}

// objectMembers returns the members of the JSON object data (valid JSON,
// bounded depth) by exact name, and the first name given twice ("" when
// none is). Data that is not an object has none.
func objectMembers(data []byte) (map[string]json.RawMessage, string) {
	members := map[string]json.RawMessage{}
	dup := ""
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return members, ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return members, dup
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return members, dup
		}
		if _, seen := members[k]; seen && dup == "" {
			dup = k
		}
		members[k] = v
	}
	return members, dup
}

// topLevelID finds the "id" member of the JSON object that head begins,
// "null" when head ends before it or it is neither a string nor a number.
func topLevelID(head []byte) json.RawMessage {
	null := json.RawMessage("null")
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return null
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return null
		}
		var v json.RawMessage
		if k == "id" {
			if err := dec.Decode(&v); err != nil {
				return null
			}
			if _, ok := idKey(v); ok {
				return v
			}
			return null
		}
		if err := dec.Decode(&v); err != nil {
			return null
		}
	}
	return null
}
