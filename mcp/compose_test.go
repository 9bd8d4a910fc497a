package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestComposeRecall (issue 21 item 5): compose (tool and resource) returns
// the composition and the recall block: the candidate slice, and with
// query the matching memories; composing now records its overlay summary
// as an instantiate, and a compose at a past time records nothing.
func TestComposeRecall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var cand, fact string
	f.withStore(func(st store.Store) {
		tgt, _ := schema.ParseTarget("judgment.refunds.heuristics")
		recs, err := st.Write(context.Background(), []store.WriteRequest{
			{Scope: map[string]string{"project": "atlas", store.AgentKey: agentName}, Kind: schema.KindEpisode,
				Content: "Offer store credit before a refund", Target: &tgt},
			{Scope: map[string]string{"project": "atlas", store.AgentKey: agentName}, Kind: schema.KindFact,
				Content: "The warehouse in Halle closes at 18:00"},
		}, store.Actor{Kind: store.ActorHuman, Name: "dana"})
		if err != nil {
			t.Fatal(err)
		}
		cand, fact = recs[0].ID, recs[1].ID
	})
	reasons := func(out ComposeOutput) map[string]string {
		m := map[string]string{}
		for _, e := range out.Recall.Entries {
			m[e.ID] = e.Reason
		}
		return m
	}
	var out ComposeOutput
	f.call(ToolCompose, map[string]any{}, &out)
	if r := reasons(out); r[cand] != "candidate" || r[fact] != "" || !strings.Contains(out.Recall.Text, "Offer store credit") {
		t.Fatalf("compose recall %+v", out.Recall)
	}
	f.call(ToolCompose, map[string]any{"query": "warehouse closing time"}, &out)
	if r := reasons(out); r[cand] != "candidate" || r[fact] != "hit" {
		t.Fatalf("compose recall with query %+v", out.Recall)
	}
	rr, err := f.client.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI(agentName)})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "## Recalled Memory") ||
		!strings.Contains(rr.Contents[0].Text, "Offer store credit") {
		t.Fatalf("resource %+v %v", rr, err)
	}
	var at string
	f.withStore(func(st store.Store) {
		sums, err := st.OverlaySummaries(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) != 3 || sums[0].Agent != agentName || len(sums[0].CandidateIDs) != 1 || sums[0].CandidateIDs[0] != cand {
			t.Fatalf("summaries after three composes %+v", sums)
		}
		at = sums[0].At
	})
	f.call(ToolCompose, map[string]any{"at": at}, &out)
	if r := reasons(out); r[cand] != "candidate" {
		t.Fatalf("compose at %s: recall %+v", at, out.Recall)
	}
	f.withStore(func(st store.Store) {
		if sums, _ := st.OverlaySummaries(context.Background(), 0); len(sums) != 3 {
			t.Fatalf("a compose at a past time recorded a summary: %d", len(sums))
		}
	})
}
