package mcpserver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
)

// TestLearningsChainVerdict: memory_learnings through the process's queue
// of the store (engine.QueueFor, as the mcp command wires it) answers from
// a verified chain, and a ledger entry edited afterwards — an entry no
// learning shows, the file then dated back so that only its changed stamp
// tells — is refused at the next call with the chain's error.
func TestLearningsChainVerdict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(f *fixture, c *Config) { c.Queue = engine.QueueFor(f.db) })
	settle := func() {
		t.Helper()
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(f.db, old, old); err != nil {
			t.Fatal(err)
		}
	}
	f.withStore(func(st store.Store) {
		ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
		scope := map[string]string{"project": "atlas", store.AgentKey: agentName}
		if _, err := st.Write(context.Background(), []store.WriteRequest{{Scope: scope, Kind: schema.KindFact, Content: "Parcels ship with DHL"}}, ana); err != nil {
			t.Fatal(err)
		}
	})
	var out SaveOutput
	f.call(ToolSave, map[string]any{"content": "Refunds take five business days", "target": "background.projectContext.refunds"}, &out)
	settle()
	for range 2 {
		var ls LearningsOutput
		f.call(ToolLearnings, map[string]any{"since": "1h"}, &ls)
		if len(ls.Learnings) == 0 {
			t.Fatalf("learnings = %+v", ls)
		}
	}
	bolttest.EditLedgerEntry(t, f.db, 1, func(v []byte) []byte { return []byte(strings.Replace(string(v), "DHL", "UPS", 1)) })
	settle()
	res := f.callRaw(ToolLearnings, map[string]any{"since": "1h"})
	if !res.IsError || !strings.Contains(text(res), "does not verify at entry 1") {
		t.Fatalf("learnings after a ledger entry was edited: %s (error %v); want the chain's error at entry 1", text(res), res.IsError)
	}
}
