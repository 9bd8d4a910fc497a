package evolve

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestSaveRaceSharedStore: engines on separate handles of one PostgreSQL
// store (separate connection pools, as separate processes have) save the
// same lesson at once through Save, the path memory_save takes. Save is one
// transaction, so each round ends as one record with a support per
// conversation, never two records.
func TestSaveRaceSharedStore(t *testing.T) {
	t.Parallel()
	url := pgtest.Fresh(t)
	ctx := context.Background()
	const handles, rounds = 4, 5
	engines := make([]*Engine, handles)
	for i := range engines {
		st, err := postgres.Open(ctx, url, store.Options{Entropy: rand.New(rand.NewSource(int64(i + 1)))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		engines[i] = New(Config{Store: st, Agent: testAgent(t), Scope: map[string]string{"project": "race"}})
	}
	target := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "code-review", Slot: schema.SlotHeuristics}
	for round := range rounds {
		topics := []string{"database migrations", "public API changes", "error wrapping", "goroutine leaks", "flaky tests"}
		content := fmt.Sprintf("Ask for a second reviewer on %s", topics[round])
		var wg sync.WaitGroup
		errs := make([]error, handles)
		for i, eng := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = eng.Save(ctx, SaveRequest{Kind: schema.KindFact, Content: content, Target: target, Actor: agentKind,
					Provenance: schema.Provenance{ConversationID: fmt.Sprintf("conv-%d-%d", round, i)}})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, handle %d: %v", round, i, err)
			}
		}
		res, err := engines[0].st.Search(ctx, store.Query{Text: content, Target: target, Limit: store.Limit(store.Unlimited)})
		if err != nil {
			t.Fatal(err)
		}
		var same []schema.MemoryRecord
		for _, r := range res.Records {
			if r.Content == content {
				same = append(same, r)
			}
		}
		if len(same) != 1 {
			t.Fatalf("round %d: %d records of one lesson saved at once by %d handles, want 1", round, len(same), handles)
		}
		if got := same[0].DistinctConversations(); got != handles {
			t.Errorf("round %d: the record counts %d distinct conversations, want %d", round, got, handles)
		}
	}
	if err := engines[0].st.Verify(ctx); err != nil {
		t.Fatalf("verify: %v", err)
	}
}
