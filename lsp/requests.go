package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

type requestFunc func(ctx context.Context, raw json.RawMessage) (any, error)

// customRequests are the agent-ls/* requests of docs/LSP-PROTOCOL.md.
func (s *server) customRequests() map[string]requestFunc {
	return map[string]requestFunc{
		methodComposedPrompt: s.composedPromptRequest,
		methodProposals:      s.proposalsRequest,
		methodLearnings:      s.learningsRequest,
	}
}

// composedPromptParams is agent-ls/composedPrompt's request.
type composedPromptParams struct {
	URI   protocol.DocumentURI `json:"uri"`
	Scope map[string]string    `json:"scope,omitempty"`
	At    string               `json:"at,omitempty"`
}

// ComposedPrompt is agent-ls/composedPrompt's result.
type ComposedPrompt struct {
	Text     string           `json:"text"`
	Markdown string           `json:"markdown"`
	Sections []engine.Section `json:"sections"`
	At       string           `json:"at,omitempty"`
}

func (s *server) composedPromptRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var p composedPromptParams
	if err := decodeParams(methodComposedPrompt, raw, &p); err != nil {
		return nil, err
	}
	releaseQueue(ctx)
	f, err := s.loadAgentFile(p.URI)
	if err != nil {
		return nil, err
	}
	if err := f.requireAgent(); err != nil {
		return nil, err
	}
	if err := agentScope(f.ws, p.Scope); err != nil {
		return nil, rpcError(err)
	}
	// The one scope rule (engine.Scope): the request's scope adds to the
	// workspace scope and never changes its values.
	scope, err := engine.Scope(f.ws.Config.Scope, p.Scope)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, methodComposedPrompt+": "+err.Error())
	}
	res, err := s.compose(ctx, f, scope, p.At)
	// What a point in time is, is the engine's rule (compose's parse): its
	// error is worded with this request's own parameter, as MCP's compose
	// and the lens's agent page word it with theirs.
	if ae, ok := errors.AsType[*engine.AtError](err); ok {
		return nil, invalidParams(methodComposedPrompt, schema.Named("at", ae.Err))
	}
	if err != nil {
		return nil, rpcError(err)
	}
	out := &ComposedPrompt{Text: res.Prompt.Text(), Markdown: res.Prompt.Markdown(), Sections: res.Prompt.Sections, At: res.At}
	if out.Sections == nil {
		out.Sections = []engine.Section{}
	}
	return out, nil
}

// agentScope refuses an agent actor a scope other than its workspace's: an
// agent sees its own and shared records of its project only (the agent key
// is never taken from a scope; other keys would reach another project's or
// user's records).
func agentScope(ws *workspaceInfo, scope map[string]string) error {
	if ws.Actor.Kind != store.ActorAgent || len(scope) == 0 {
		return nil
	}
	for k, v := range scope {
		if k != store.AgentKey && ws.Config.Scope[k] != v {
			return fmt.Errorf("%w: %s composes with its workspace scope only (scope key %q)", store.ErrForbidden, ws.Actor, k)
		}
	}
	for k := range ws.Config.Scope {
		if _, ok := scope[k]; !ok {
			return fmt.Errorf("%w: %s composes with its workspace scope only (scope key %q missing)", store.ErrForbidden, ws.Actor, k)
		}
	}
	return nil
}

// compose instantiates f's agent with the editor's text in scope (the
// workspace scope when empty). A missing store composes the authored agent.
func (s *server) compose(ctx context.Context, f *agentFile, scope map[string]string, at string) (*engine.ComposeResult, error) {
	if len(scope) == 0 {
		scope = f.ws.Config.Scope
	}
	req := engine.ComposeRequest{
		AgentFile: f.path, Scope: scope, At: at, Policy: engine.PolicyFrom(f.ws.Config), Now: s.opts.Now,
		ReadFile: func(string) ([]byte, error) { return f.text, nil }, Agent: f.agent,
	}
	var res *engine.ComposeResult
	err := s.withStore(ctx, f, false, func(st store.Tx) error {
		req.Store = st
		var err error
		res, err = engine.Compose(ctx, req)
		return err
	})
	if errors.Is(err, errNoStore) {
		req.Store = nil
		res, err = engine.Compose(ctx, req)
	}
	return res, err
}

type uriParams struct {
	URI protocol.DocumentURI `json:"uri"`
}

// ProposalView is one pending review of agent-ls/proposals.
type ProposalView struct {
	ID          string             `json:"id"`
	Kind        store.ProposalKind `json:"kind"`
	RecordID    string             `json:"recordId"`
	Tier        schema.Tier        `json:"tier"`
	Content     string             `json:"content"`
	RequestedBy string             `json:"requestedBy"`
	CreatedAt   string             `json:"createdAt"`
	ExpiresAt   string             `json:"expiresAt"`
	Diff        string             `json:"diff"`
}

func (s *server) proposalsRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var p uriParams
	if err := decodeParams(methodProposals, raw, &p); err != nil {
		return nil, err
	}
	releaseQueue(ctx)
	f, err := s.loadAgentFile(p.URI)
	if err != nil {
		return nil, err
	}
	if err := f.requireAgent(); err != nil {
		return nil, err
	}
	out := []ProposalView{}
	if !storeExists(f.ws.StorePath) {
		return map[string]any{"proposals": out}, nil
	}
	// Listing expires overdue proposals (a ledgered write), except in a
	// read-only workspace, where it only leaves them out.
	write := len(s.readOnlyReasons(ctx, f.ws)) == 0
	err = s.withStore(ctx, f, write, func(st store.Tx) error {
		e := s.engine(f, st)
		list := e.Proposals
		if !write {
			list = e.PendingProposals
		}
		ps, err := list(ctx)
		if err != nil {
			return err
		}
		for _, pr := range ps {
			v := ProposalView{ID: pr.ID, Kind: pr.Kind, RecordID: pr.RecordID, Tier: pr.Tier,
				RequestedBy: pr.RequestedBy.String(), CreatedAt: pr.CreatedAt, ExpiresAt: pr.ExpiresAt}
			if rec, err := st.Get(ctx, pr.RecordID); err == nil {
				v.Content = rec.Content
			}
			if d, err := e.Preview(ctx, pr); err == nil {
				v.Diff = d
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, rpcError(err)
	}
	return map[string]any{"proposals": out}, nil
}

type learningsParams struct {
	URI   protocol.DocumentURI `json:"uri"`
	Since string               `json:"since"`
}

func (s *server) learningsRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var p learningsParams
	if err := decodeParams(methodLearnings, raw, &p); err != nil {
		return nil, err
	}
	since, err := schema.ParseSince(p.Since, s.opts.Now())
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, methodLearnings+": "+err.Error())
	}
	releaseQueue(ctx)
	f, err := s.loadAgentFile(p.URI)
	if err != nil {
		return nil, err
	}
	out := []engine.Learning{}
	err = s.withStore(ctx, f, false, func(st store.Tx) error {
		ls, err := s.engine(f, st).Learnings(ctx, since)
		if err == nil && ls != nil {
			out = ls
		}
		return err
	})
	if err != nil && !errors.Is(err, errNoStore) {
		return nil, rpcError(err)
	}
	return map[string]any{"learnings": out}, nil
}
