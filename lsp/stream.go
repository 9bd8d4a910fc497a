package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxMessageSize bounds one message body: a bigger frame is skipped unread
// and refused (refuseFrame), and the server keeps serving.
const maxMessageSize = 64 << 20

// stream is a jsonrpc2.Stream over LSP base-protocol framing
// (Content-Length headers) that survives malformed bodies: jsonrpc2.Conn
// closes the connection on any Read error, so a frame whose body is not a
// JSON-RPC message is answered here with a ParseError or InvalidRequest
// response and the next frame is read instead.
type stream struct {
	rwc io.ReadWriteCloser
	in  *bufio.Reader
	log *slog.Logger

	writeMu sync.Mutex
}

func newStream(rwc io.ReadWriteCloser, log *slog.Logger) *stream {
	return &stream{rwc: rwc, in: bufio.NewReaderSize(rwc, 64<<10), log: log}
}

// Read returns the next well-formed message, answering malformed ones.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, total, err
		}
		body, n, err := s.readFrame()
		total += n
		var big *frameTooLarge
		if errors.As(err, &big) {
			n, err := s.refuseFrame(big.length)
			total += n
			if err != nil {
				return nil, total, err
			}
			continue
		}
		if err != nil {
			return nil, total, err
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err == nil {
			return msg, total, nil
		}
		s.log.Warn("malformed message", "err", err, "bytes", len(body))
		if werr := s.replyMalformed(body, err); werr != nil {
			return nil, total, werr
		}
	}
}

// readFrame reads one Content-Length framed body.
func (s *stream) readFrame() ([]byte, int64, error) {
	var total, length int64
	sawLength, sawHeader := false, false
	for {
		line, err := s.in.ReadString('\n')
		total += int64(len(line))
		if err != nil {
			if errors.Is(err, io.EOF) && total == 0 {
				return nil, total, io.EOF
			}
			return nil, total, fmt.Errorf("read header: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if !sawLength {
				if !sawHeader {
					continue // stray blank line between frames
				}
				return nil, total, fmt.Errorf("frame without %s header", jsonrpc2.HdrContentLength)
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, total, fmt.Errorf("invalid header line %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), jsonrpc2.HdrContentLength) {
			length, err = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || length < 0 {
				return nil, total, fmt.Errorf("invalid %s %q", jsonrpc2.HdrContentLength, value)
			}
			sawLength = true
		}
	}
	if length > maxMessageSize {
		return nil, total, &frameTooLarge{length}
	}
	body := make([]byte, length)
	n, err := io.ReadFull(s.in, body)
	total += int64(n)
	if err != nil {
		return nil, total, fmt.Errorf("read body of %d bytes: %w", length, err)
	}
	return body, total, nil
}

// frameTooLarge is readFrame's error for a frame whose body is over
// maxMessageSize; its header has been read, its body has not.
type frameTooLarge struct{ length int64 }

func (e *frameTooLarge) Error() string {
	return fmt.Sprintf("message of %d bytes is over the %d MiB limit", e.length, maxMessageSize>>20)
}

// probeSize is how much of a refused frame's body is kept to find its id
// and method.
const probeSize = 64 << 10

// refuseFrame skips the body of an oversized frame without holding it (its
// first probeSize bytes are read to find the request's id and method) and
// tells the client: a request gets an InvalidRequest error with its id; a
// notification (a didOpen of a huge file), or a body whose id cannot be
// read, a window/showMessage error naming the method and the size, since
// it has no reply. The stream stays in step, so the server keeps serving.
func (s *stream) refuseFrame(length int64) (int64, error) {
	head := make([]byte, min(length, probeSize))
	n, err := io.ReadFull(s.in, head)
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("read body of %d bytes: %w", length, err)
	}
	for rest := length - total; rest > 0; {
		d, err := s.in.Discard(int(min(rest, 1<<30)))
		total += int64(d)
		rest -= int64(d)
		if err != nil {
			return total, fmt.Errorf("read body of %d bytes: %w", length, err)
		}
	}
	id, method := probeMessage(head)
	msg := (&frameTooLarge{length}).Error()
	s.log.Warn("oversized message refused", "bytes", length, "method", method)
	var data []byte
	if method != "" && id != nil && validID(id) {
		data, err = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   any             `json:"error"`
		}{"2.0", id, map[string]any{"code": jsonrpc2.InvalidRequest, "message": "request refused: " + msg}})
	} else {
		what := "a message"
		if method != "" {
			what = "a " + method + " message"
		}
		data, err = json.Marshal(map[string]any{
			"jsonrpc": "2.0", "method": "window/showMessage",
			"params": map[string]any{"type": 1, "message": fmt.Sprintf("agent-ls refused %s of %d bytes: over the %d MiB message limit", what, length, maxMessageSize>>20)},
		})
	}
	if err != nil {
		return total, fmt.Errorf("encode refusal: %w", err)
	}
	return total, s.writeBody(data)
}

// probeMessage reads the top-level "id" and "method" of a JSON-RPC message
// from the start of its body (which may be cut anywhere): what it found
// before the text ends or stops being JSON.
func probeMessage(head []byte) (id json.RawMessage, method string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return id, method
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return id, method
		}
		switch key {
		case "id":
			id = raw
		case "method":
			if err := json.Unmarshal(raw, &method); err != nil {
				method = ""
			}
		}
	}
	return id, method
}

// replyMalformed answers a body that is not a valid JSON-RPC message: a
// ParseError (id null) for invalid JSON, an InvalidRequest (with the id when
// one can be read) for valid JSON of the wrong shape. Malformed notifications
// and responses are only logged, as JSON-RPC requires.
func (s *stream) replyMalformed(body []byte, cause error) error {
	type wireErr struct {
		Code    jsonrpc2.Code `json:"code"`
		Message string        `json:"message"`
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireErr         `json:"error"`
	}{JSONRPC: "2.0", ID: json.RawMessage("null")}
	if !json.Valid(body) {
		resp.Error = wireErr{jsonrpc2.ParseError, "parse error: message body is not valid JSON"}
	} else {
		var probe struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if err := json.Unmarshal(body, &probe); err == nil {
			if probe.Method == nil || len(probe.ID) == 0 || string(probe.ID) == "null" {
				return nil // a notification or a response: no reply possible
			}
			if validID(probe.ID) {
				resp.ID = probe.ID
			}
		}
		resp.Error = wireErr{jsonrpc2.InvalidRequest, "invalid request: " + cause.Error()}
	}
	data, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode error response: %w", err)
	}
	return s.writeBody(data)
}

// validID reports whether raw is a JSON-RPC id: a string or a number.
func validID(raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// Write sends one message.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := encodeMessage(msg)
	if err != nil {
		return 0, fmt.Errorf("encode message: %w", err)
	}
	if err := s.writeBody(data); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// encodeMessage is msg's JSON. A successful response is assembled around
// its result, which jsonrpc2.NewResponse already encoded (and checked):
// the library's own MarshalJSON, and encoding/json around it, would each
// rescan the whole result (for a large reply, most of the server's time).
// Other messages encode themselves; calling their MarshalJSON directly
// spares encoding/json's validating rescan.
func encodeMessage(msg jsonrpc2.Message) ([]byte, error) {
	if r, ok := msg.(*jsonrpc2.Response); ok && r.Err() == nil {
		id := r.ID()
		idJSON, err := id.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode response id: %w", err)
		}
		return responseJSON(idJSON, r.Result()), nil
	}
	if m, ok := msg.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(msg)
}

// responseJSON is a successful response around its encoded result, in the
// library's field order, byte for byte.
func responseJSON(idJSON, result []byte) []byte {
	if len(result) == 0 {
		result = []byte("null")
	}
	out := make([]byte, 0, len(result)+len(idJSON)+32)
	out = append(out, `{"jsonrpc":"2.0","result":`...)
	out = append(out, result...)
	out = append(out, `,"id":`...)
	out = append(out, idJSON...)
	return append(out, '}')
}

// writeResult writes the successful response to the call id whose result
// is already encoded (encodedReplies).
func (s *stream) writeResult(id jsonrpc2.ID, result []byte) error {
	idJSON, err := id.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode response id: %w", err)
	}
	return s.writeBody(responseJSON(idJSON, result))
}

func (s *stream) writeBody(data []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := fmt.Fprintf(s.rwc, "%s: %d\r\n\r\n", jsonrpc2.HdrContentLength, len(data)); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	if _, err := s.rwc.Write(data); err != nil {
		return fmt.Errorf("write body: %w", err)
	}
	return nil
}

// Close closes the underlying connection.
func (s *stream) Close() error { return s.rwc.Close() }
