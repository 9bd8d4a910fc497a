package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// TestCandidateHistoryOnDemand: inlay hints decode the ledger entries of
// the promoted records only (they vouch for them); a candidate's history
// is read when a tooltip or a hover shows it, once, and is the record's
// own (its corroboration included). When the store cannot be read then,
// the tooltip says so, and the hover is not kept: the next one, with the
// store back, shows the history.
func TestCandidateHistoryOnDemand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newTestEnv(t)
	text := "roleTemplate:\n  name: bot\n  persona:\n    identity: a test agent\n  judgments:\n    - domain: ops\n      heuristics:\n        - Keep deploys small\nmission:\n  objective: test the view\n"
	path := env.write(t, "bot.agent.yaml", text)
	heuristic := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
	fact := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "region"}
	actor := store.Actor{Kind: store.ActorAgent, Name: "bot"}
	const lesson = "Drain the queue before a schema migration"
	withBolt(t, env, func(st store.Store) {
		recs, err := st.Write(ctx, []store.WriteRequest{
			{Scope: map[string]string{store.AgentKey: "bot"}, Kind: schema.KindFact, Target: fact, Content: "The service runs in eu-west-1",
				Provenance: schema.Provenance{ConversationID: "c-fact"}},
			{Scope: map[string]string{store.AgentKey: "bot"}, Kind: schema.KindFact, Target: heuristic, Content: lesson,
				Provenance: schema.Provenance{ConversationID: "c-lesson"}},
			{Scope: map[string]string{store.AgentKey: "bot"}, Kind: schema.KindFact, Target: heuristic, Content: "Page the owner when the error budget is half spent",
				Provenance: schema.Provenance{ConversationID: "c-page"}},
		}, actor)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(*fact), Actor: actor}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Corroborate(ctx, recs[1].ID, schema.Support{ConversationID: "c-again", At: schema.FormatTime(time.Now())}, actor); err != nil {
			t.Fatal(err)
		}
	})
	old := time.Now().Add(-time.Hour) // cacheable: not written within the racy window
	if err := os.Chtimes(env.storePath, old, old); err != nil {
		t.Fatal(err)
	}

	var passed atomic.Int64
	var broken atomic.Bool
	c := startServer(t, Options{NoWatch: true,
		OpenStore: boltOpener(time.Now),
		OpenStoreReadOnly: func(_ context.Context, p string) (store.Store, error) {
			if broken.Load() {
				return nil, errors.New("the disk is gone")
			}
			st, err := bolt.Open(p, store.Options{LockTimeout: time.Second, ReadOnly: true})
			if err != nil {
				return nil, err
			}
			return countingStore{Store: st, passed: &passed}, nil
		}})
	c.initializeResolving(env.root, nil, false)
	uri := c.open(filepath.Clean(path), text, 1)
	c.awaitDiagnostics(uri, 1)
	hs := c.hints(uri)
	cand, prom := hintWith(hs, "Drain the queue"), hintWith(hs, "eu-west-1")
	if cand == nil || prom == nil || hintWith(hs, "Page the owner") == nil {
		t.Fatalf("hints %+v: want the promoted fact and two candidates", hs)
	}
	// The fact's write and promote entries: none of the candidates'.
	if got := passed.Load(); got != 2 {
		t.Errorf("inlay hints decoded %d ledger entries, want the 2 of the promoted record", got)
	}

	broken.Store(true)
	if r := c.resolve(cand); r.Tooltip == nil || !strings.Contains(r.Tooltip.Value, "history could not be read") || !strings.Contains(r.Tooltip.Value, "the disk is gone") {
		t.Errorf("candidate tooltip with the store unreadable: %+v", r.Tooltip)
	}
	hover := func() string {
		var h protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 6, "character": 8}}, &h)
		return h.Contents.Value
	}
	if v := hover(); !strings.Contains(v, lesson) || !strings.Contains(v, "history could not be read") {
		t.Errorf("hover on heuristics with the store unreadable:\n%s", v)
	}
	broken.Store(false)

	before := passed.Load()
	r := c.resolve(cand)
	if r.Tooltip == nil || !strings.Contains(r.Tooltip.Value, "**History**") || !strings.Contains(r.Tooltip.Value, " write by `agent:bot`") ||
		!strings.Contains(r.Tooltip.Value, " corroborate by `agent:bot`") || strings.Contains(r.Tooltip.Value, "could not be read") {
		t.Errorf("candidate tooltip: %+v", r.Tooltip)
	}
	if got := passed.Load() - before; got != 2 {
		t.Errorf("the candidate's tooltip decoded %d ledger entries, want its 2 (write, corroborate)", got)
	}
	// The hover shows both candidates' histories; the other one is read
	// now, the resolved one is kept; a second hover is the kept one.
	before = passed.Load()
	v := hover()
	if strings.Count(v, "**History**") != 2 || strings.Contains(v, "could not be read") {
		t.Errorf("hover on heuristics:\n%s", v)
	}
	if got := passed.Load() - before; got != 1 {
		t.Errorf("the hover decoded %d ledger entries, want the other candidate's 1", got)
	}
	if again := hover(); again != v || passed.Load()-before != 1 {
		t.Errorf("a second hover read the store again or differs:\n%s", again)
	}
}
