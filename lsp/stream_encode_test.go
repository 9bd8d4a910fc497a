package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestEncodeMessage: the assembled success response is the library's own
// encoding byte for byte, for number and string ids and a nil result;
// errors and other messages keep the library's encoding.
func TestEncodeMessage(t *testing.T) {
	t.Parallel()
	ok := func(id jsonrpc2.ID, result any) *jsonrpc2.Response {
		r, err := jsonrpc2.NewResponse(id, result, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	failed, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(3), nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "bad"))
	call, err := jsonrpc2.NewCall(jsonrpc2.NewStringID("c"), "m", map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]jsonrpc2.Message{
		"number id":   ok(jsonrpc2.NewNumberID(7), []any{map[string]any{"label": "x \u2028 \"q\" <b>&amp;"}, 1}),
		"string id":   ok(jsonrpc2.NewStringID("abc"), json.RawMessage(`{"a":[1,2]}`)),
		"nil result":  ok(jsonrpc2.NewNumberID(0), nil),
		"error reply": failed,
		"call":        call,
	} {
		got, err := encodeMessage(msg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := msg.(json.Marshaler).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded %s, want %s", name, got, want)
		}
	}
}

// nopCloser is a bytes.Buffer as the stream's connection.
type nopCloser struct{ bytes.Buffer }

func (*nopCloser) Close() error { return nil }

// TestEncodedReplies: an encodedResult is written as the library would write
// the same JSON as its result (string and number ids), without going
// through the library's replier; an error, another result type or a
// cancelled context go to the library's replier or fail as it would.
func TestEncodedReplies(t *testing.T) {
	t.Parallel()
	// As a handler makes it: encoding/json, which escapes HTML characters
	// as the library does.
	data, err := json.Marshal([]map[string]any{{"name": "a <b> & \u2028", "kind": 5, "children": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	result := string(data)
	for _, id := range []jsonrpc2.ID{jsonrpc2.NewNumberID(12), jsonrpc2.NewStringID("req-1")} {
		conn := &nopCloser{}
		st := newStream(conn, slog.New(slog.DiscardHandler))
		call, err := jsonrpc2.NewCall(id, "textDocument/documentSymbol", nil)
		if err != nil {
			t.Fatal(err)
		}
		var library []any
		libReply := func(_ context.Context, result any, err error) error {
			library = append(library, result, err)
			return nil
		}
		answer := func(result any, err error) jsonrpc2.Handler {
			return func(ctx context.Context, reply jsonrpc2.Replier, _ jsonrpc2.Request) error {
				return reply(ctx, result, err)
			}
		}
		if err := encodedReplies(st, answer(encodedResult(result), nil))(context.Background(), libReply, call); err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc2.NewResponse(id, json.RawMessage(result), nil)
		if err != nil {
			t.Fatal(err)
		}
		wantBody, err := want.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		header, body, _ := strings.Cut(conn.String(), "\r\n\r\n")
		if body != string(wantBody) || header != fmt.Sprintf("Content-Length: %d", len(wantBody)) {
			t.Errorf("id %v: wrote %q, want header for %d bytes and %s", id, conn.String(), len(wantBody), wantBody)
		}
		if len(library) != 0 {
			t.Errorf("id %v: the library's replier was called with %v", id, library)
		}

		fail := jsonrpc2.NewError(jsonrpc2.InternalError, "boom")
		_ = encodedReplies(st, answer(encodedResult(result), fail))(context.Background(), libReply, call)
		_ = encodedReplies(st, answer([]int{1}, nil))(context.Background(), libReply, call)
		if len(library) != 4 || library[0] != nil || library[1] != fail || fmt.Sprint(library[2]) != "[1]" || library[3] != nil {
			t.Errorf("id %v: library replier got %v, want [nil boom [1] nil]", id, library)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		conn.Reset()
		if err := encodedReplies(st, answer(encodedResult(result), nil))(ctx, libReply, call); !errors.Is(err, context.Canceled) || conn.Len() != 0 {
			t.Errorf("id %v: a cancelled write returned %v and wrote %q", id, err, conn.String())
		}
	}
}
