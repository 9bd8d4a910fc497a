package lsp

import (
	"bytes"
	"encoding/json"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestEncodeMessage: the assembled success response is the library's own
// encoding byte for byte, for number and string ids and a nil result;
// errors and other messages keep the library's encoding.
func TestEncodeMessage(t *testing.T) {
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
