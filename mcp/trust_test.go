package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestAgentNeverPassesAGateOrReadsAnotherAgent drives every tool as the
// bound agent against a store that also holds another agent's promoted,
// learned and demoted records: no tool output names the other agent's
// records (memory_learnings included), and the agent's own saves and
// invalidations never pass a gate: an earned lesson from one conversation
// stays a candidate, a guarded one is only pending, retiring a promoted
// guarded record only opens a proposal and it keeps rendering; no proposal
// gets approved and nothing is deleted.
func TestAgentNeverPassesAGateOrReadsAnotherAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	human := store.Actor{Kind: store.ActorHuman, Name: "dana"}
	var foreign schema.MemoryRecord
	f.withStore(func(st store.Store) {
		tgt, err := schema.ParseTarget("background.projectContext.billing_cycle")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := st.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"project": "atlas", store.AgentKey: "billing-bot"},
			Kind: schema.KindFact, Content: "Billing runs on the zebra cycle", Target: &tgt}}, human)
		if err != nil {
			t.Fatal(err)
		}
		foreign = recs[0]
		if _, err := st.Promote(ctx, foreign.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
			t.Fatal(err)
		}
		if err := st.Demote(ctx, foreign.ID, "zebra retired", human); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Promote(ctx, foreign.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
			t.Fatal(err)
		}
	})

	var earned, guarded SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Offer an exchange before a refund when the size is wrong", "target": "judgment.refunds.heuristics"}, &earned)
	if earned.Status != string(engine.SaveSaved) || earned.State != string(engine.StateCandidate) {
		t.Errorf("earned save from one conversation = %+v, want a candidate", earned)
	}
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Escalate refunds above 500 EUR to a lead", "target": "judgment.refunds.escalationTriggers"}, &guarded)
	if guarded.State != string(engine.StatePending) || guarded.ProposalID == "" {
		t.Fatalf("guarded save = %+v, want pending", guarded)
	}
	f.withStore(func(st store.Store) {
		eng := engine.NewAgent(engine.AgentSpec{Store: st, Scope: map[string]string{"project": "atlas", store.AgentKey: agentName}, Now: f.clock.now})
		if _, err := eng.Approve(ctx, guarded.ProposalID, human, "ok"); err != nil {
			t.Fatal(err)
		}
	})
	var inv InvalidateOutput
	f.call(ToolInvalidate, map[string]any{"id": guarded.ID, "reason": "too strict"}, &inv)
	if inv.Status != "proposed" {
		t.Errorf("agent retiring a guarded learning = %+v, want proposed", inv)
	}
	if !hasFragment(f.composed(), "Escalate refunds above 500 EUR", guarded.ID) {
		t.Error("the guarded learning stopped rendering after the agent's invalidate")
	}

	// Every read tool: nothing of billing-bot.
	calls := []struct {
		tool string
		args map[string]any
	}{
		{ToolLearnings, map[string]any{"since": "3650d"}},
		{ToolList, map[string]any{"includeInvalidated": true, "limit": 200}},
		{ToolSearch, map[string]any{"query": "zebra billing cycle", "limit": 200}},
		{ToolCompose, map[string]any{}},
		{ToolInvalidate, map[string]any{"id": foreign.ID, "reason": "x"}},
		{ToolSave, map[string]any{"kind": "fact", "content": "Billing runs on the zebra cycle", "target": "background.projectContext.billing_cycle"}},
	}
	for _, c := range calls {
		res := f.callRaw(c.tool, c.args)
		data, _ := json.Marshal(res.StructuredContent)
		out := string(data) + text(res)
		if c.tool == ToolInvalidate {
			// It echoes the id it was given; the answer is a missing record's.
			if !strings.Contains(out, `"status":"not_found"`) {
				t.Errorf("invalidate of the other agent's record: %s, want not_found", out)
			}
			out = strings.ReplaceAll(out, foreign.ID, "ID")
		}
		if strings.Contains(out, foreign.ID) || strings.Contains(out, "billing-bot") || strings.Contains(out, "zebra retired") {
			t.Errorf("%s %v shows the other agent's record: %s", c.tool, c.args, out)
		}
	}
	var learned LearningsOutput
	f.call(ToolLearnings, map[string]any{"since": "3650d"}, &learned)
	if len(learned.Learnings) == 0 {
		t.Error("memory_learnings shows none of the agent's own learnings (the approved guarded one)")
	}

	f.withStore(func(st store.Store) {
		ps, err := st.Proposals(ctx, store.ProposalFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.State == store.ProposalApproved && (p.DecidedBy == nil || p.DecidedBy.Kind != store.ActorHuman) {
				t.Errorf("proposal %s approved by %v", p.ID, p.DecidedBy)
			}
		}
		if _, err := st.Promotion(ctx, earned.ID); err == nil {
			t.Error("the earned candidate was promoted from one conversation")
		}
		entries, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Actor.Kind == store.ActorAgent && (e.Op == store.OpApprove || e.Op == store.OpReject || e.Op == store.OpDelete || e.Op == store.OpDemote) {
				t.Errorf("ledger entry %d: the agent did %s", e.Seq, e.Op)
			}
			if e.Actor.Kind == store.ActorAgent && e.RecordID == foreign.ID {
				t.Errorf("ledger entry %d: the agent touched the other agent's record", e.Seq)
			}
		}
		if rec, err := st.Get(ctx, foreign.ID); err != nil || rec.InvalidAt != "" {
			t.Errorf("the other agent's record changed: %+v %v", rec, err)
		}
	})
}

// TestModelCannotNameItsProvenance: issue 19 item 1. The server started
// with --conversation conv-start; a second save of the same lesson naming
// another conversation in its tool arguments is refused (unknown argument),
// so the lesson stays a candidate of one conversation. The runtime's _meta
// is the only per-request source, and it is validated.
func TestModelCannotNameItsProvenance(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lesson := map[string]any{"kind": "fact", "content": "Offer an exchange before a refund when the size is wrong", "target": "judgment.refunds.heuristics"}
	var first SaveOutput
	f.call(ToolSave, lesson, &first)
	if first.State != string(engine.StateCandidate) || first.Record.ConversationID != "conv-start" {
		t.Fatalf("first save = %+v", first)
	}
	for _, extra := range []map[string]any{{"conversationId": "made-up"}, {"runId": "r9"}, {"provenance": map[string]any{"conversationId": "made-up"}}} {
		args := map[string]any{}
		for k, v := range lesson {
			args[k] = v
		}
		for k, v := range extra {
			args[k] = v
		}
		if res := f.callRaw(ToolSave, args); !res.IsError {
			t.Errorf("save with %v accepted: %s", extra, text(res))
		}
	}
	for _, meta := range []map[string]any{{MetaConversationID: 7}, {MetaConversationID: "c\n2"}, {MetaRunID: []any{"x"}}} {
		if res := f.callMeta(ToolSave, lesson, meta); !res.IsError {
			t.Errorf("save with _meta %v accepted: %s", meta, text(res))
		}
	}
	var again SaveOutput
	f.call(ToolSave, lesson, &again)
	if again.State != string(engine.StateCandidate) || again.Record.Conversations != 1 {
		t.Fatalf("after the attempts: %+v, want a candidate of one conversation", again)
	}
}
