package compose_test

import (
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestRejectedLeavesRecall: issue 19 item 6. A record whose promotion a
// human rejected is neither in the recall block's candidate slice nor a
// recall hit, until new evidence (a corroboration after the rejection)
// reopens it.
func TestRejectedLeavesRecall(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		p := overlay.DefaultPolicy()
		rec := e.write("judgment.deploy.escalationTriggers", "Ask before deleting any resource in prod", "")
		prop, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: schema.TierGuarded, RequestedBy: agentActor, TTL: 72 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Reject(e.ctx, prop.ID, human, "not a rule we want"); err != nil {
			t.Fatal(err)
		}
		block, err := e.instantiate("", p).Recall(e.ctx, "deleting resource prod")
		if err != nil {
			t.Fatal(err)
		}
		if len(block.Entries) != 0 {
			t.Fatalf("recall after the rejection = %+v, want nothing", block.Entries)
		}
		if _, err := e.s.Corroborate(e.ctx, rec.ID, schema.Support{ConversationID: "conv-new", At: e.mark()}, agentActor); err != nil {
			t.Fatal(err)
		}
		block, err = e.instantiate("", p).Recall(e.ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(block.Entries) != 1 || block.Entries[0].ID != rec.ID {
			t.Fatalf("recall after new evidence = %+v, want the reopened candidate", block.Entries)
		}
	})
}

// TestRejectedLeavesRecallAt: the rejection rule holds in a replay: at a
// time after the rejection the record is no candidate and no hit; before
// it, and after new evidence reopened it, it is.
func TestRejectedLeavesRecallAt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		p := overlay.DefaultPolicy()
		rec := e.write("judgment.deploy.escalationTriggers", "Ask before deleting any resource in prod", "")
		before := e.mark()
		prop, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: schema.TierGuarded, RequestedBy: agentActor, TTL: 72 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Reject(e.ctx, prop.ID, human, "not a rule we want"); err != nil {
			t.Fatal(err)
		}
		rejected := e.mark()
		if _, err := e.s.Corroborate(e.ctx, rec.ID, schema.Support{ConversationID: "conv-new", At: e.mark()}, agentActor); err != nil {
			t.Fatal(err)
		}
		reopened := e.mark()
		for _, tc := range []struct {
			name, at string
			want     bool
		}{{"before the rejection", before, true}, {"after it", rejected, false}, {"after new evidence", reopened, true}} {
			for _, query := range []string{"", "deleting resource prod"} {
				block, err := e.instantiate(tc.at, p).Recall(e.ctx, query)
				if err != nil {
					t.Fatal(err)
				}
				got := false
				for _, en := range block.Entries {
					got = got || en.ID == rec.ID
				}
				if got != tc.want {
					t.Errorf("%s (query %q): recall has the record = %v, want %v", tc.name, query, got, tc.want)
				}
			}
		}
	})
}
