package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// BenchmarkVouch vouches for the 1,000 promoted records of a store shaped
// like bench/gen's (a write and a promote entry each), as a cold render
// does after Promoted.
func BenchmarkVouch(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-bot"}
	var batch []store.WriteRequest
	for i := range 1000 {
		t := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: "bench-bot"}, Kind: schema.KindFact,
			Content: fmt.Sprintf("learned fact %d about deploys", i), Target: t, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := s.Write(ctx, batch, actor)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		if _, err := s.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			b.Fatal(err)
		}
	}
	promoted, err := s.Promoted(ctx, nil, "bench-bot")
	if err != nil || len(promoted) != 1000 {
		b.Fatalf("Promoted: %d records, %v", len(promoted), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Vouch(ctx, promoted); err != nil {
			b.Fatal(err)
		}
	}
}
