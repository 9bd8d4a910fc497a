package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/textkernel"
)

// CodeAction offers, for the memory lines anchored in the requested range:
// promote (candidates), demote, invalidate and adopt (promoted lines),
// approve / reject (pending proposals), and supersede for conflicts. Each is
// titled with its effect and carries the composition diff in its arguments.
func (s *server) CodeAction(ctx context.Context, p *protocol.CodeActionParams) ([]protocol.CodeAction, error) {
	pin := s.pin(p.TextDocument.URI)
	releaseQueue(ctx)
	f, err := s.loadPinned(p.TextDocument.URI, pin)
	if unparsed(err) {
		return []protocol.CodeAction{}, nil // no fix for a parse error
	}
	if err != nil {
		return nil, err
	}
	out := s.storeActions(ctx, f, p)
	return s.offerable(ctx, f, out), nil
}

// offerable marks the actions that would be refused when run as disabled
// with the reason, or leaves them out when the client cannot show a
// disabled action: in a read-only workspace every action that would change
// the store (every command but showing the prompt), and for the actor the
// commands the trust model never lets it run (refusedCommand).
func (s *server) offerable(ctx context.Context, f *agentFile, actions []protocol.CodeAction) []protocol.CodeAction {
	changes := func(a protocol.CodeAction) bool {
		return a.Command != nil && a.Command.Command != CommandShowComposedPrompt
	}
	if !slices.ContainsFunc(actions, changes) {
		return actions
	}
	readOnly := ""
	if reasons := s.readOnlyReasons(ctx, f.ws); len(reasons) > 0 {
		readOnly = "agent-ls is read-only here until this is fixed: " + strings.Join(reasons, "; ")
	}
	s.mu.Lock()
	disabled, applies := s.disabledActions, s.applyEdits
	s.mu.Unlock()
	out := actions[:0]
	for _, a := range actions {
		why := ""
		if changes(a) {
			why = readOnly
			if why == "" {
				why = refusedCommand(f.ws.Actor, a.Command.Command)
			}
			if why == "" && a.Command.Command == CommandAdopt && !applies {
				why = errNoApplyEdit.Error()
			}
		}
		if why != "" {
			if !disabled {
				continue
			}
			a.Disabled = &protocol.CodeActionDisable{Reason: why}
		}
		out = append(out, a)
	}
	return out
}

// refusedCommand is why actor may never run command, whatever the record
// ("" when it may try): deciding a proposal is a human's (the trust rule,
// engine.MayDecide), and so is adopting (mayAdopt).
func refusedCommand(actor store.Actor, command string) string {
	switch command {
	case CommandApprove, CommandReject:
		if !engine.MayDecide(actor) {
			return fmt.Sprintf("%s cannot approve or reject: only a human decides a proposal", actor)
		}
	case CommandAdopt:
		if err := mayAdopt(actor); err != nil {
			return err.Error()
		}
	}
	return ""
}

// storeActions is the quick fixes of the range and the actions on the
// memory it shows.
func (s *server) storeActions(ctx context.Context, f *agentFile, p *protocol.CodeActionParams) []protocol.CodeAction {
	out := quickFixes(f, p)
	if f.agent == nil {
		return out
	}
	if hasCode(p.Context.Diagnostics, "unknown-domain") {
		_ = s.withStore(ctx, f, false, func(st store.Tx) error {
			out = append(out, retargetFixes(f, p, func(id string) (schema.MemoryRecord, bool) {
				rec, err := st.Get(ctx, id)
				return rec, err == nil
			})...)
			return nil
		})
	}
	v, err := s.memoryView(ctx, f)
	if err != nil {
		return out
	}
	inRange := func(container string) bool {
		pos := anchor(f.doc, container)
		return pos.Line >= p.Range.Start.Line && pos.Line <= p.Range.End.Line
	}
	byRecord := map[string]memoryLine{}
	for _, ml := range v.lines {
		byRecord[ml.rec.ID] = ml
	}
	action := func(titleText, command string, args map[string]any) protocol.CodeAction {
		args["uri"] = f.uri
		return protocol.CodeAction{
			Title: titleText, Kind: protocol.QuickFix,
			Command: &protocol.Command{Title: titleText, Command: command, Arguments: []any{args}},
		}
	}
	for _, ml := range v.lines {
		if !inRange(ml.container) {
			continue
		}
		short := textkernel.Clip(ml.rec.Content, 50)
		switch ml.kind() {
		case "candidate":
			out = append(out, action(fmt.Sprintf("Promote candidate %q into %s", short, ml.container), CommandPromote, map[string]any{"recordId": ml.rec.ID}))
		case "promoted", "spilled":
			out = append(out,
				action(fmt.Sprintf("Demote %q (leaves the agent, stays in recall)", short), CommandDemote, map[string]any{"recordId": ml.rec.ID, "reason": "demoted from the editor"}),
				action(fmt.Sprintf("Invalidate %q (the agent forgets it)", short), CommandInvalidate, map[string]any{"recordId": ml.rec.ID, "reason": "invalidated from the editor"}),
				action(fmt.Sprintf("Adopt %q as authored text", short), CommandAdopt, map[string]any{"recordId": ml.rec.ID}))
		}
	}
	if v.res != nil {
		for _, c := range v.res.Report.Conflicts {
			keep, okK := byRecord[c.Winner]
			drop, okD := byRecord[c.Shadowed]
			if !okK || !okD || !inRange(keep.container) {
				continue
			}
			out = append(out,
				action(fmt.Sprintf("Resolve conflict: keep %q", textkernel.Clip(keep.rec.Content, 40)), CommandSupersede, map[string]any{"keepId": keep.rec.ID, "dropId": drop.rec.ID}),
				action(fmt.Sprintf("Resolve conflict: keep %q", textkernel.Clip(drop.rec.Content, 40)), CommandSupersede, map[string]any{"keepId": drop.rec.ID, "dropId": keep.rec.ID}))
		}
	}
	// Pending proposals of this agent whose record belongs to the range.
	_ = s.withStore(ctx, f, false, func(st store.Tx) error {
		ps, err := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, Scope: f.ws.Config.Scope, Agent: f.agent.RoleTemplate.Name})
		if err != nil {
			return err
		}
		e := s.engine(f, st)
		for _, pr := range ps {
			rec, err := st.Get(ctx, pr.RecordID)
			if err != nil {
				continue
			}
			ptr := ""
			if ml, ok := byRecord[rec.ID]; ok {
				ptr = ml.container
			} else {
				ptr = containerOf(f.agent, "", rec.Target)
			}
			if !inRange(ptr) {
				continue
			}
			diff, _ := e.Preview(ctx, pr)
			short := textkernel.Clip(rec.Content, 50)
			out = append(out,
				action(fmt.Sprintf("Approve %s of %q", pr.Kind, short), CommandApprove, map[string]any{"proposalId": pr.ID, "diff": diff}),
				action(fmt.Sprintf("Reject %s of %q", pr.Kind, short), CommandReject, map[string]any{"proposalId": pr.ID, "reason": "rejected from the editor", "diff": diff}))
		}
		return nil
	})
	return out
}

// adopt turns a learned line into authored YAML (workspace/applyEdit) and,
// once the client applied it, retires the record.
func (s *server) adopt(ctx context.Context, f *agentFile, id string) (*CommandResult, error) {
	if err := f.requireAgent(); err != nil {
		return nil, err
	}
	if err := mayAdopt(f.ws.Actor); err != nil {
		return nil, jsonrpc2.NewError(codeRefused, err.Error())
	}
	s.mu.Lock()
	applies := s.applyEdits
	s.mu.Unlock()
	if !applies {
		return nil, jsonrpc2.NewError(codeRefused, errNoApplyEdit.Error())
	}
	var rec schema.MemoryRecord
	err := s.withStore(ctx, f, false, func(st store.Tx) error {
		var err error
		rec, err = st.Get(ctx, id)
		if err == nil {
			// Another agent's record is not this file's to adopt, and its
			// text must not reach the editor.
			if a := rec.Scope[store.AgentKey]; a != "" && a != f.agent.RoleTemplate.Name {
				return fmt.Errorf("record %s: %w", id, store.ErrNotFound)
			}
		}
		return err
	})
	if err != nil {
		return nil, rpcError(err)
	}
	edit, err := adoptEdit(f, rec)
	if err != nil {
		return nil, jsonrpc2.NewError(codeRefused, err.Error())
	}
	// A store that cannot take the retiring write (a damaged file opens
	// for reads but not for writing) refuses before the editor is asked.
	if err := s.withStore(ctx, f, true, func(store.Tx) error { return nil }); err != nil {
		return nil, rpcError(err)
	}
	// Once the edit is sent, whether it lands is the editor's to say: a
	// cancellation of the command does not stop the wait for its answer
	// (only the connection's end does), nor the retiring of the record
	// after the editor applied the line.
	before := bytes.Count(f.text, []byte(edit.NewText))
	res, err := s.applyEdit(s.ctx, "Adopt memory "+id, *f.edit(edit))
	if err != nil {
		return nil, err
	}
	if !res.Applied {
		return nil, jsonrpc2.NewError(codeRefused, "the editor did not apply the edit: "+orDash(res.FailureReason))
	}
	// A versioned edit of an open document may be skipped by an editor
	// that answers applied all the same (Neovim, for an edit of a version
	// older than its buffer's): the record is retired only once the
	// document shows the line.
	if f.versioned && f.version != nil && !s.awaitEdit(f.uri, *f.version, edit.NewText, before) {
		return nil, jsonrpc2.NewError(codeRefused, fmt.Sprintf("the editor answered that it applied the edit, but %s never showed the adopted line: the record is kept (adopt again)", f.path))
	}
	ctx = context.WithoutCancel(ctx)
	err = s.withStore(ctx, f, true, func(st store.Tx) error {
		_, err := s.engine(f, st).Invalidate(ctx, id, "adopted into "+f.path+" as authored text", f.ws.Actor)
		return err
	})
	if err != nil {
		return nil, rpcError(fmt.Errorf("the text was added but the record was not retired: %w", err))
	}
	s.rerunAll()
	return &CommandResult{OK: true, Message: fmt.Sprintf("adopted %s into %s and retired the record", id, f.path)}, nil
}

// errNoApplyEdit is why a client that does not apply the server's edits
// (no workspace.applyEdit capability) cannot adopt: the record would be
// kept, its line written nowhere.
var errNoApplyEdit = errors.New("adopt edits the file through workspace/applyEdit, which this editor does not support: copy the line into the file by hand, then invalidate the record")

// mayAdopt refuses an agent actor adopting a memory: adopting edits the
// authored file, which no gate guards, so a learned line would reach the
// agent's behaviour without its tier's gate.
func mayAdopt(actor store.Actor) error {
	if actor.Kind == store.ActorAgent {
		return fmt.Errorf("%s cannot adopt a memory: adopting edits the authored file, which only a human does", actor)
	}
	return nil
}

// adoptEdit inserts rec's line after the last item of its authored list (a
// judgment slot, or a background section as `key: value`): a block line in
// block YAML, a flow item (", item") in JSON and in a YAML flow collection.
func adoptEdit(f *agentFile, rec schema.MemoryRecord) (protocol.TextEdit, error) {
	if rec.Target == nil {
		return protocol.TextEdit{}, fmt.Errorf("record %s has no target: nothing to adopt into", rec.ID)
	}
	t := *rec.Target
	var container string
	switch t.Primitive {
	case schema.PrimitiveJudgment, schema.PrimitiveBackground:
		container = engine.Container(f.agent, t)
	default:
		return protocol.TextEdit{}, fmt.Errorf("adopt supports judgment and background memories; add this %s memory by hand", t.Primitive)
	}
	kids := f.doc.Children(container)
	if len(kids) == 0 || !f.doc.IsArray(container) && !f.doc.IsObject(container) {
		return protocol.TextEdit{}, fmt.Errorf("%s has no authored block list to add to: add it by hand", container)
	}
	first, _ := f.doc.KeyRange(kids[0])
	last, _ := f.doc.ValueRange(kids[len(kids)-1])
	listVal, _ := f.doc.ValueRange(container)
	isJSON := strings.EqualFold(filepath.Ext(f.path), ".json")
	if isJSON || listVal.Start.Offset < len(f.text) && (f.text[listVal.Start.Offset] == '[' || f.text[listVal.Start.Offset] == '{') {
		// A flow collection: one more item after the last one.
		scalar := schema.YAMLScalar
		if isJSON {
			scalar = jsonString
		}
		item := scalar(rec.Content)
		if t.Primitive == schema.PrimitiveBackground {
			item = scalar(t.Key) + ": " + item
		}
		pos := toPosition(last.End)
		return protocol.TextEdit{Range: protocol.Range{Start: pos, End: pos}, NewText: ", " + item}, nil
	}
	line := "- " + schema.YAMLScalar(rec.Content)
	if t.Primitive == schema.PrimitiveBackground {
		line = schema.YAMLScalar(t.Key) + ": " + schema.YAMLScalar(rec.Content)
	}
	indent := indentAt(f.text, first.Start)
	pos := protocol.Position{Line: uint32(last.End.Line), Character: uint32(lineLengthUTF16(f.doc.Source(), last.End.Line))}
	return protocol.TextEdit{Range: protocol.Range{Start: pos, End: pos}, NewText: lineBreak(f.text) + indent + line}, nil
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// hasCode reports whether one of ds has the code.
func hasCode(ds []protocol.Diagnostic, code string) bool {
	for _, d := range ds {
		if fmt.Sprint(d.Code) == code {
			return true
		}
	}
	return false
}
