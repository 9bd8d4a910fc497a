package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// commandArgs is the one argument object of every agent-ls command. URI is
// the agent file the command is about (code actions always send it).
type commandArgs struct {
	URI        protocol.DocumentURI `json:"uri,omitempty"`
	RecordID   string               `json:"recordId,omitempty"`
	ProposalID string               `json:"proposalId,omitempty"`
	KeepID     string               `json:"keepId,omitempty"`
	DropID     string               `json:"dropId,omitempty"`
	Reason     string               `json:"reason,omitempty"`
	// Target is agent-ls.retarget's new target: the compact form
	// ("judgment.deploy.heuristics") or the object form.
	Target json.RawMessage `json:"target,omitempty"`
}

// target decodes the target argument.
func (a commandArgs) target() (schema.MemoryTarget, error) {
	var s string
	if err := json.Unmarshal(a.Target, &s); err == nil {
		return schema.ParseTarget(s)
	}
	var t schema.MemoryTarget
	if err := json.Unmarshal(a.Target, &t); err != nil {
		return t, err
	}
	return t, t.Validate()
}

// CommandResult is what every command answers.
type CommandResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Diff    string `json:"diff,omitempty"`
	// Status is the gate's outcome (promoted, pending, approved, ...).
	Status string `json:"status,omitempty"`
}

// ExecuteCommand runs an agent-ls command as the configured actor through
// the evolve gates; a refusal is an error carrying the gate's reason.
func (s *server) ExecuteCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (any, error) {
	var a commandArgs
	if len(p.Arguments) > 0 {
		raw, err := json.Marshal(p.Arguments[0])
		if err == nil {
			err = json.Unmarshal(raw, &a)
		}
		if err != nil {
			return nil, invalidParams(p.Command, err)
		}
	}
	need := func(name, v string) error {
		if strings.TrimSpace(v) == "" {
			return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: argument %q is required", p.Command, name))
		}
		if strings.HasSuffix(name, "Id") {
			return checkID(p.Command, name, v)
		}
		return nil
	}
	var check error
	switch p.Command {
	case CommandPromote:
		check = need("recordId", a.RecordID)
	case CommandDemote, CommandInvalidate:
		check = need("recordId", a.RecordID)
		if check == nil {
			check = need("reason", a.Reason)
		}
	case CommandSupersede:
		check = need("keepId", a.KeepID)
		if check == nil {
			check = need("dropId", a.DropID)
		}
	case CommandApprove:
		check = need("proposalId", a.ProposalID)
	case CommandReject:
		check = need("proposalId", a.ProposalID)
		if check == nil {
			check = need("reason", a.Reason)
		}
	case CommandAdopt:
		check = need("recordId", a.RecordID)
		if check == nil {
			check = need("uri", string(a.URI))
		}
	case CommandRetarget:
		check = need("recordId", a.RecordID)
		if check == nil && (len(a.Target) == 0 || string(a.Target) == "null") {
			check = need("target", "")
		}
		if check == nil {
			if _, err := a.target(); err != nil {
				check = jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: argument \"target\": %v", p.Command, err))
			}
		}
	case CommandShowComposedPrompt:
		check = need("uri", string(a.URI))
		if check == nil {
			raw, _ := json.Marshal(composedPromptParams{URI: a.URI})
			return s.composedPromptRequest(ctx, raw)
		}
	default:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("unknown command %q (known: %s)", p.Command, strings.Join(Commands, ", ")))
	}
	if check != nil {
		return nil, check
	}
	// Store work and the client round trips of adopt must not hold up the
	// messages after this one.
	releaseQueue(ctx)
	f, err := s.commandFile(a.URI)
	if err != nil {
		return nil, err
	}
	// Every command from here on changes state.
	if err := s.writable(ctx, f.ws, p.Command); err != nil {
		return nil, err
	}
	if p.Command == CommandAdopt {
		return s.adopt(ctx, f, a.RecordID)
	}
	if p.Command == CommandRetarget {
		to, _ := a.target()
		return s.retarget(ctx, f, a.RecordID, to)
	}
	var out engine.Outcome
	err = s.withStore(ctx, f, true, func(st store.Tx) error {
		e := s.engine(f, st)
		actor := f.ws.Actor
		var err error
		switch p.Command {
		case CommandPromote:
			out, err = e.Promote(ctx, a.RecordID, actor)
		case CommandDemote:
			out, err = e.Demote(ctx, a.RecordID, a.Reason, actor)
		case CommandInvalidate:
			out, err = e.Invalidate(ctx, a.RecordID, a.Reason, actor)
		case CommandSupersede:
			out, err = e.Supersede(ctx, a.KeepID, a.DropID, actor)
		case CommandApprove:
			var pr store.Proposal
			// Another agent's proposal answers exactly like a missing one.
			pr, err = engine.ViewOf(actor, f.ws.Config.Scope).GetProposal(ctx, st, a.ProposalID)
			if err == nil {
				diff, _ := e.Preview(ctx, pr)
				out, err = e.Approve(ctx, a.ProposalID, actor, a.Reason)
				if out.Diff == "" {
					out.Diff = diff
				}
			}
		case CommandReject:
			if _, err = engine.ViewOf(actor, f.ws.Config.Scope).GetProposal(ctx, st, a.ProposalID); err == nil {
				out, err = e.Reject(ctx, a.ProposalID, actor, a.Reason)
			}
		}
		return err
	})
	if err != nil {
		return nil, rpcError(err)
	}
	s.rerunAll()
	msg := out.Reason
	if msg == "" {
		msg = string(out.Status)
	}
	return &CommandResult{OK: true, Message: msg, Diff: out.Diff, Status: string(out.Status)}, nil
}

// commandFile is the agent file a command acts on: uri when given, else the
// only open agent file.
func (s *server) commandFile(uri protocol.DocumentURI) (*agentFile, error) {
	if uri == "" {
		open := s.openAgentURIs()
		if len(open) != 1 {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("argument \"uri\" is required (%d agent files are open)", len(open)))
		}
		uri = open[0]
	}
	return s.loadAgentFile(uri)
}

// retarget moves a record to another target through the engine (a new
// record superseding it, its supports carried; engine.Agent.Retarget) as
// the configured actor. Anything but a save is refused with the engine's
// guidance; a missing record is InvalidParams.
func (s *server) retarget(ctx context.Context, f *agentFile, id string, to schema.MemoryTarget) (*CommandResult, error) {
	if err := f.requireAgent(); err != nil {
		return nil, err
	}
	var res engine.SaveResult
	err := s.withStore(ctx, f, true, func(st store.Tx) error {
		var err error
		res, err = s.engine(f, st).Retarget(ctx, id, to, f.ws.Actor)
		return err
	})
	if err != nil {
		return nil, rpcError(err)
	}
	switch res.Status {
	case engine.SaveSaved:
	case engine.SaveNotFound:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, CommandRetarget+": "+res.Guidance)
	default:
		return nil, jsonrpc2.NewError(codeRefused, CommandRetarget+": "+res.Guidance)
	}
	s.rerunAll()
	return &CommandResult{OK: true, Message: res.Guidance, Status: string(res.State)}, nil
}
