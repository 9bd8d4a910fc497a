package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// customRequests are the agent-ls/* requests, each decoding its own params.
func (s *server) customRequests() map[string]func(ctx context.Context, raw json.RawMessage) (any, error) {
	return map[string]func(ctx context.Context, raw json.RawMessage) (any, error){}
}

// inlayHint answers textDocument/inlayHint.
func (s *server) inlayHint(_ context.Context, p *inlayHintParams) ([]InlayHint, error) {
	if d, _ := s.latest(p.TextDocument.URI); d == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "textDocument/inlayHint: document is not open: "+string(p.TextDocument.URI))
	}
	return []InlayHint{}, nil
}
