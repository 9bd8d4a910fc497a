package evolve

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestLearningsDroppedAndExpired (issue 21 item 10): a promotion the
// authored config overrides is listed as dropped, not as learned; a
// promoted record that expired leaves with an expire learning.
func TestLearningsDroppedAndExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	start := f.clock.Now()
	// The authored config holds background.projectContext.language.
	dropped := f.save("The code base is written in Rust", "background.projectContext.language", "conv-1", agentKind)
	kept := f.save("Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1", agentKind)
	expiresAt := schema.FormatTime(f.clock.Now().Add(time.Hour))
	res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Release 1.4 is in code freeze", Target: tgt(t, "background.currentState.release"),
		ExpiresAt: expiresAt, Provenance: schema.Provenance{ConversationID: "conv-2"}, Actor: agentKind})
	if err != nil || res.State != StatePromoted {
		t.Fatalf("save expiring fact: %+v %v", res, err)
	}
	f.clock.Advance(2 * time.Hour)

	ls, err := f.eng.Learnings(f.ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, strings.Join(strings.Fields(l.Op+" "+l.Status+" "+l.RecordID), " "))
	}
	want := []string{
		"promote dropped " + dropped.Record.ID,
		"promote " + kept.Record.ID,
		"promote " + res.Record.ID,
		"expire " + res.Record.ID,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("learnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(ls[0].Reason, "authored wins") || ls[3].At != expiresAt {
		t.Errorf("dropped %+v, expired %+v", ls[0], ls[3])
	}
}

// TestGardenLedgersExpiry: garden ledgers a promoted record's expiry once
// (an expire entry naming the record), so the event stream shows it.
func TestGardenLedgersExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Release 1.4 is in code freeze", Target: tgt(t, "background.currentState.release"),
		ExpiresAt: schema.FormatTime(f.clock.Now().Add(time.Hour)), Provenance: schema.Provenance{ConversationID: "conv-2"}, Actor: agentKind})
	if err != nil || res.State != StatePromoted {
		t.Fatalf("save: %+v %v", res, err)
	}
	f.clock.Advance(2 * time.Hour)
	for i, want := range []int{1, 0} {
		h, err := f.eng.Garden(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Count(FindingExpired); got != want {
			t.Errorf("garden run %d: %d expired findings, want %d", i+1, got, want)
		}
	}
	es, _ := f.st.Ledger(f.ctx, store.LedgerFilter{Ops: []store.Op{store.OpExpire}})
	if len(es) != 1 || es[0].RecordID != res.Record.ID || es[0].Actor != GardenActor() {
		t.Fatalf("expire entries %+v", es)
	}
}
