package postgres_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// benchMatches is how many promoted records of the benchmark's scope every
// Promoted fixture holds, whatever the number of unrelated records.
const benchMatches = 50

var benchScope = map[string]string{"project": "atlas"}

// promotedFixturePG loads a fresh schema with benchMatches promoted
// records of benchScope for agent bench-agent plus unrelated records (other
// projects, 1% of them promoted, half targeted), from a fixed seed.
func promotedFixturePG(b *testing.B, unrelated int) *postgres.Store {
	b.Helper()
	r := rand.New(rand.NewSource(42))
	words := strings.Fields("deploy window refund policy code review escalate customer invoice editor dark mode tuesday staging prod rollback")
	sentence := func() string {
		w := make([]string, 6)
		for i := range w {
			w[i] = words[r.Intn(len(words))]
		}
		return strings.Join(w, " ")
	}
	gen := schema.NewIDGenerator(r)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	target := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "code-review", Slot: schema.SlotHeuristics}
	var snap store.Snapshot
	for i := range unrelated + benchMatches {
		clock = clock.Add(time.Second)
		id, err := gen.New(clock)
		if err != nil {
			b.Fatal(err)
		}
		now := schema.FormatTime(clock)
		rec := schema.MemoryRecord{ID: id, Kind: schema.KindFact, Content: sentence(), CreatedAt: now, UpdatedAt: now,
			Scope: map[string]string{"project": fmt.Sprintf("other-%d", i%500), store.AgentKey: "bench-agent"}}
		promote := i%100 == 0
		if i >= unrelated {
			rec.Scope["project"], promote = benchScope["project"], true
		}
		if promote || i%2 == 0 {
			t := target
			rec.Target = &t
		}
		snap.Records = append(snap.Records, store.Stored{Rec: rec, Seq: uint64(i + 1)})
		if promote {
			snap.Promotions = append(snap.Promotions, store.Promotion{RecordID: id, Tier: schema.TierEarned, PromotedAt: now, Actor: store.Actor{Kind: store.ActorSystem, Name: "bench"}})
		}
	}
	s, err := postgres.Open(context.Background(), pgtest.Fresh(b), store.Options{Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Load(context.Background(), snap); err != nil {
		b.Fatal(err)
	}
	pgtest.Exec(b, pgtest.WithSchema(b, pgtest.URL(b), s.Schema()), `ANALYZE`)
	return s
}

// BenchmarkPromotedPG measures Promoted(scope, agent) with the same
// benchMatches matches in PostgreSQL stores of 1k and 100k unrelated
// records: the promotion rows' scope index keeps the timings close
// (docs/PERFORMANCE.md).
func BenchmarkPromotedPG(b *testing.B) {
	pgtest.URL(b)
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("unrelated=%d", n), func(b *testing.B) {
			s := promotedFixturePG(b, n)
			ctx := context.Background()
			got, err := s.Promoted(ctx, benchScope, "bench-agent")
			if err != nil || len(got) != benchMatches {
				b.Fatalf("Promoted = %d records, %v; want %d", len(got), err, benchMatches)
			}
			for b.Loop() {
				if _, err := s.Promoted(ctx, benchScope, "bench-agent"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
