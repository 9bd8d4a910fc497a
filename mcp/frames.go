package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/agent-ls/agent-ls/schema"
)

// MaxMessage is the largest MCP message (one line of JSON-RPC) the server
// reads for workspace limits l: room for a record at the content and
// payload limits with every character escaped, and 1 MiB at least.
func MaxMessage(l schema.Limits) int {
	l = l.WithDefaults()
	return max(1<<20, 6*(l.Content+l.Payload)+64<<10)
}

// GuardFrames wraps the server's stdio so that a message longer than max
// bytes never reaches the SDK's decoder (which ends the session on one):
// the line is skipped without being held in memory, answered with a
// JSON-RPC error (-32600, with the request's id when its first bytes name
// it), and the server reads on. The returned writer must carry every
// outgoing message, so answers never interleave with the server's.
func GuardFrames(in io.Reader, out io.Writer, max int) (io.ReadCloser, io.WriteCloser) {
	w := &lockedWriter{w: out}
	return &frameReader{br: bufio.NewReaderSize(in, 64<<10), max: max, w: w}, w
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// frameReader hands out whole lines no longer than max.
type frameReader struct {
	br      *bufio.Reader
	max     int
	w       io.Writer
	pending []byte
	err     error
}

func (f *frameReader) Close() error { return nil }

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.line()
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
		case n <= f.max:
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
			f.refuse(head, n)
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
		return buf, err
	}
}

// refuse answers an oversized message of n bytes whose first bytes are
// head.
func (f *frameReader) refuse(head []byte, n int) {
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: topLevelID(head)}
	resp.Error.Code = -32600
	resp.Error.Message = fmt.Sprintf("message of %d bytes is larger than the %d bytes this server reads (limits.content and limits.payload in %s bound a memory); nothing was done", n, f.max, schema.WorkspaceConfigName)
	data, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_, _ = f.w.Write(append(data, '\n'))
}

// topLevelID finds the "id" member of the JSON object that head begins,
// "null" when head ends before it.
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
			if len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
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
