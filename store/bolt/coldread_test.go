package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// coldStore writes n promoted records shaped like bench/gen's (the cold
// render of issue 35): agent bench-bot's facts, a write and a promote
// entry each.
func coldStore(t testing.TB, n int) *Store {
	t.Helper()
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: newClock().Now})
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-bot"}
	var batch []store.WriteRequest
	for i := range n {
		tg := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: "bench-bot"}, Kind: schema.KindFact,
			Content: fmt.Sprintf("learned fact %d about deploys", i), Target: tg, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := s.Write(ctx, batch, actor)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := s.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// allocated returns the fewest bytes one of three runs of fn allocated.
func allocated(fn func()) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestPromotedHoldsEachRecordOnce: Promoted of an agent's 1,000 records
// allocates each record's place once (the result), not also a decoded copy
// and a heap record per decode: a cold render allocated three records'
// worth per record it showed. Not parallel: it counts the process's
// allocations.
func TestPromotedHoldsEachRecordOnce(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	s := coldStore(t, n)
	var got []schema.MemoryRecord
	bytes := allocated(func() {
		var err error
		if got, err = s.Promoted(ctx, nil, "bench-bot"); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != n {
		t.Fatalf("Promoted = %d records, want %d", len(got), n)
	}
	// The record itself, its strings, scope map and target, the read's own
	// arrays (about 1,150 bytes; 1,330 under -race); with a decoded copy
	// and a heap record per decode it was 1,900.
	per := bytes / n
	limit := 2*uint64(unsafe.Sizeof(schema.MemoryRecord{})) + 800
	if per > limit {
		t.Errorf("Promoted allocated %d bytes a record, want at most %d (a record is %d)", per, limit, unsafe.Sizeof(schema.MemoryRecord{}))
	}
	t.Logf("Promoted: %d bytes a record (a record is %d)", per, unsafe.Sizeof(schema.MemoryRecord{}))
}
