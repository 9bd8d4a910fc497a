package evolve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

// TestReadsNeverShowAnotherAgent: the engine's reading operations
// (Learnings, Proposals, Garden) over a store shared with another agent
// report only this agent's and shared records: none of the other agent's
// ids, proposals or content appear, while its own do.
func TestReadsNeverShowAnotherAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := New(Config{Store: f.st, Scope: map[string]string{"user": "u1", "agent": "deploy-ops"}, Now: f.clock.Now})
	otherAgent := store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	var marks []string
	for _, s := range []struct{ content, target string }{
		{"Deploys go out on zebra Thursdays", "background.projectContext.deploy_window"},
		{"Ask before deleting any zebra resource", "judgment.deploy.escalationTriggers"},
		{"Watch the zebra queue depth", "judgment.deploy.heuristics"},
	} {
		res, err := other.Save(f.ctx, SaveRequest{Content: s.content, Target: tgt(t, s.target), Actor: otherAgent})
		if err != nil || res.Record == nil {
			t.Fatalf("other agent's save: %+v %v", res, err)
		}
		marks = append(marks, res.Record.ID, s.content)
		if res.ProposalID != "" {
			marks = append(marks, res.ProposalID)
		}
	}
	own := f.save("Flag unchecked errors", "judgment.code-review.escalationTriggers", "conv-1", agentKind)
	if own.ProposalID == "" {
		t.Fatalf("own guarded save: %+v", own)
	}
	f.clock.Advance(time.Minute)

	ls, err := f.eng.Learnings(f.ctx, f.clock.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := f.eng.Proposals(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"Learnings": ls, "Proposals": ps, "Garden": h} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range marks {
			if strings.Contains(string(data), m) {
				t.Errorf("%s shows the other agent's %q: %s", name, m, data)
			}
		}
	}
	if len(ps) != 1 || ps[0].ID != own.ProposalID {
		t.Errorf("Proposals = %+v, want only the agent's own %s", ps, own.ProposalID)
	}
	// The other engine does see its own: the filter is the view, not the data.
	ops, err := other.Proposals(f.ctx)
	if err != nil || len(ops) != 1 {
		t.Errorf("the other agent's proposals: %+v %v", ops, err)
	}
}
