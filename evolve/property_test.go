package evolve

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
)

var (
	propLessons = []string{
		"Flag unchecked errors on deferred Close calls",
		"Always flag unchecked errors from deferred Close() calls",
		"Don't flag unchecked errors on deferred Close calls",
		"Ask for a benchmark when the hot path changes",
		"Prefer table-driven tests for parsers",
	}
	propTargets = []string{
		"judgment.code-review.heuristics",
		"judgment.code-review.escalationTriggers",
		"example.code-review",
		"background.currentState.release",
	}
	propConvs = []string{"c1", "c2", "c3"}
)

// TestAgentsNeverPassAGate drives random sequences of agent and system
// operations (saves, promotes, demotes, invalidates, approvals, time) and
// checks the invariants no sequence may break without a human:
//   - every earned promotion has at least N distinct conversations;
//   - nothing guarded is ever promoted, and no proposal is ever approved;
//   - support counts never decrease (contradictions never decrement);
//   - a target never holds two live near-duplicate records.
func TestAgentsNeverPassAGate(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		c := newClock()
		st := memstore.New(store.Options{Now: c.Now})
		var agentCfg schema.AgentConfig
		if err := json.Unmarshal([]byte(testAgentJSON), &agentCfg); err != nil {
			rt.Fatal(err)
		}
		eng := New(Config{Store: st, Agent: &agentCfg, Scope: map[string]string{"user": "u1"}, Now: c.Now,
			Workspace: schema.WorkspaceConfig{Promotion: schema.PromotionConfig{ProposalExpiry: "10h"}}})
		actors := []store.Actor{agentKind, system}
		var ids []string
		support := map[string]int{}
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			actor := rapid.SampledFrom(actors).Draw(rt, "actor")
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1:
				mt, _ := schema.ParseTarget(rapid.SampledFrom(propTargets).Draw(rt, "target"))
				req := SaveRequest{Content: rapid.SampledFrom(propLessons).Draw(rt, "lesson"), Target: &mt,
					Provenance: schema.Provenance{ConversationID: rapid.SampledFrom(propConvs).Draw(rt, "conv")}, Actor: actor}
				if mt.NeedsPayload() {
					req.Payload = []byte(`{"scenario":"s","good":"g"}`)
				}
				res, err := eng.Save(ctx, req)
				if err != nil {
					rt.Fatalf("save: %v", err)
				}
				if res.Record != nil && !res.Corroborated {
					ids = append(ids, res.Record.ID)
				}
			case 2:
				if len(ids) > 0 {
					if _, err := eng.Promote(ctx, rapid.SampledFrom(ids).Draw(rt, "id"), actor); err != nil && !isRefused(err) {
						rt.Fatalf("promote: %v", err)
					}
				}
			case 3:
				if len(ids) > 0 {
					id := rapid.SampledFrom(ids).Draw(rt, "id")
					var err error
					if rapid.Bool().Draw(rt, "invalidate") {
						_, err = eng.Invalidate(ctx, id, "why", actor)
					} else {
						_, err = eng.Demote(ctx, id, "why", actor)
					}
					if err != nil && !isRefused(err) {
						rt.Fatalf("unlearn: %v", err)
					}
				}
			case 4:
				ps, err := eng.Proposals(ctx)
				if err != nil {
					rt.Fatal(err)
				}
				for _, p := range ps {
					if _, err := eng.Approve(ctx, p.ID, actor, "yes"); !isRefused(err) {
						rt.Fatalf("%v approved %s: %v", actor, p.ID, err)
					}
				}
			case 5:
				c.Advance(time.Duration(rapid.IntRange(1, 12).Draw(rt, "hours")) * time.Hour)
			}
			checkInvariants(rt, ctx, st, eng, support)
		}
	})
}

func checkInvariants(rt *rapid.T, ctx context.Context, st store.Store, eng *Engine, support map[string]int) {
	prom, err := st.Promoted(ctx, map[string]string{"user": "u1"}, "code-reviewer")
	if err != nil {
		rt.Fatal(err)
	}
	for _, r := range prom {
		switch schema.TierOf(*r.Target) {
		case schema.TierEarned:
			if n := r.DistinctConversations(); n < eng.Recurrence() {
				rt.Fatalf("earned record %s promoted with %d conversations", r.ID, n)
			}
		case schema.TierGuarded:
			rt.Fatalf("guarded record %s promoted without a human", r.ID)
		}
	}
	all, err := st.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
	if err != nil {
		rt.Fatal(err)
	}
	live := map[string][]schema.MemoryRecord{}
	for _, r := range all.Records {
		n := r.DistinctConversations()
		if n < support[r.ID] {
			rt.Fatalf("support of %s went down from %d to %d", r.ID, support[r.ID], n)
		}
		support[r.ID] = n
		if r.InvalidAt == "" && r.Target != nil {
			live[r.Target.String()] = append(live[r.Target.String()], r)
		}
	}
	for k, rs := range live {
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				if (&Engine{}).sameLesson(rs[i].Target.SlotKey() != "", rs[i].Content, rs[j].Content) {
					rt.Fatalf("%s holds near-duplicates %s and %s", k, rs[i].ID, rs[j].ID)
				}
				if rs[i].Target.SlotKey() != "" {
					rt.Fatalf("%s holds two live records %s and %s", k, rs[i].ID, rs[j].ID)
				}
			}
		}
	}
	led, err := st.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpApprove}})
	if err != nil {
		rt.Fatal(err)
	}
	if len(led) > 0 {
		rt.Fatalf("a proposal was approved without a human: %+v", led[0])
	}
}
