package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestLimitFollowsEngineRule: memory_search's and memory_list's limit
// takes the engine's rule, the command line's --limit rule: omitted is the
// tool's default page, N > 0 at most N, 0 and -1 no limit (every match, up
// to the answer's bound of 200), another negative number an error naming
// limit; the input schema says so. Before, limit 0 was the default page
// (10 for search) while the CLI's --limit 0 lists everything, and -1 was
// an error.
func TestLimitFollowsEngineRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStore(func(st store.Store) {
		reqs := make([]store.WriteRequest, 0, 210)
		for i := range 210 {
			reqs = append(reqs, store.WriteRequest{Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact,
				Content: fmt.Sprintf("Invoice rule %d", i)})
		}
		if _, err := st.Write(context.Background(), reqs, store.Actor{Kind: store.ActorHuman, Name: "dana"}); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want int
	}{
		{ToolSearch, map[string]any{"query": "invoice"}, 10},
		{ToolSearch, map[string]any{"query": "invoice", "limit": 5}, 5},
		{ToolSearch, map[string]any{"query": "invoice", "limit": 0}, maxLimit},
		{ToolSearch, map[string]any{"query": "invoice", "limit": -1}, maxLimit},
		{ToolSearch, map[string]any{"query": "invoice", "limit": 1000}, maxLimit},
		{ToolList, map[string]any{}, 50},
		{ToolList, map[string]any{"limit": 0}, maxLimit},
		{ToolList, map[string]any{"limit": -1}, maxLimit},
	} {
		var out RecordsOutput
		f.call(tc.tool, tc.args, &out)
		if len(out.Records) != tc.want {
			t.Errorf("%s %v: %d records, want %d", tc.tool, tc.args, len(out.Records), tc.want)
		}
	}
	for _, args := range []map[string]any{{"query": "invoice", "limit": -2}, {"limit": -2}} {
		tool := ToolList
		if args["query"] != nil {
			tool = ToolSearch
		}
		res := f.callRaw(tool, args)
		if got := text(res); !res.IsError || !strings.Contains(got, "limit -2: want a count, 0 or -1 for no limit") {
			t.Errorf("%s limit -2: isError=%v %q, want an error naming limit", tool, res.IsError, got)
		}
	}
	tools, err := f.client.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != ToolSearch && tl.Name != ToolList {
			continue
		}
		data := fmt.Sprint(tl.InputSchema)
		if !strings.Contains(data, "0 or -1 for no limit") {
			t.Errorf("%s: the limit's schema does not say what 0 and -1 mean: %s", tl.Name, data)
		}
	}
}

// TestListIncludeInvalidatedShowsExpired: memory_list with
// includeInvalidated lists every retired record of the agent's view, the
// expired ones too (as the CLI's list --all), and a record carries its
// expiresAt. The search never matched an expired record, and the answer
// had no expiresAt: an agent could not tell a record would expire.
func TestListIncludeInvalidatedShowsExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	f.withStore(func(st store.Store) {
		soon := schema.FormatTime(f.clock.t.Add(time.Minute))
		recs, err := st.Write(context.Background(), []store.WriteRequest{
			{Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact, Content: "The freeze lasts a week", ExpiresAt: soon},
			{Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact, Content: "Invoices are issued in EUR"},
		}, store.Actor{Kind: store.ActorHuman, Name: "dana"})
		if err != nil {
			t.Fatal(err)
		}
		ids = []string{recs[0].ID, recs[1].ID}
	})
	var out RecordsOutput
	f.call(ToolList, map[string]any{}, &out)
	if len(out.Records) != 2 || out.Records[0].ExpiresAt == "" && out.Records[1].ExpiresAt == "" {
		t.Fatalf("list before the expiry = %+v, want both, one with its expiresAt", out.Records)
	}
	f.clock.mu.Lock()
	f.clock.t = f.clock.t.Add(time.Hour)
	f.clock.mu.Unlock()
	f.call(ToolList, map[string]any{}, &out)
	if len(out.Records) != 1 || out.Records[0].ID != ids[1] {
		t.Errorf("list after the expiry = %+v, want only %s", out.Records, ids[1])
	}
	f.call(ToolList, map[string]any{"includeInvalidated": true}, &out)
	found := false
	for _, r := range out.Records {
		found = found || (r.ID == ids[0] && r.ExpiresAt != "")
	}
	if len(out.Records) != 2 || !found {
		t.Errorf("list includeInvalidated after the expiry = %+v, want the expired record %s with its expiresAt", out.Records, ids[0])
	}
}
