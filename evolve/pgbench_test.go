package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// pgBenchURL is the PostgreSQL server of the PG benchmarks (make bench runs
// them inside scripts/pg.sh); they skip without one.
func pgBenchURL(b *testing.B) string {
	if os.Getenv(pgtest.EnvURL) == "" {
		b.Skipf("%s is not set", pgtest.EnvURL)
	}
	return pgtest.URL(b)
}

// BenchmarkSavePG is BenchmarkSave on a PostgreSQL store: the same requests,
// reconciled, in batches of saveBenchBatch through SaveBatch, each batch one
// transaction, into a fresh schema per iteration. Compare with
// BenchmarkRawInsertPG.
func BenchmarkSavePG(b *testing.B) {
	pgBenchURL(b)
	for _, n := range saveBenchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			reqs := saveBenchRequests(n)
			agent := saveBenchAgent()
			ctx := context.Background()
			corroborated := 0
			for b.Loop() {
				b.StopTimer()
				clock := time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC)
				now := func() time.Time { return clock }
				st, err := postgres.Open(ctx, pgtest.Fresh(b), store.Options{Now: now, Entropy: rand.New(rand.NewSource(1))})
				if err != nil {
					b.Fatal(err)
				}
				// Connect outside the timer, as BenchmarkRawInsertPG does.
				if _, err := st.Ledger(ctx, store.LedgerFilter{Limit: 1}); err != nil {
					b.Fatal(err)
				}
				eng := New(Config{Store: st, Agent: agent, Scope: map[string]string{"project": "bench"}, Now: now})
				corroborated = 0
				b.StartTimer()
				for start := 0; start < len(reqs); start += saveBenchBatch {
					clock = clock.Add(time.Second)
					res, err := eng.SaveBatch(ctx, reqs[start:min(start+saveBenchBatch, len(reqs))])
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Status != SaveSaved {
							b.Fatalf("save: %s: %s", r.Status, r.Guidance)
						}
						if r.Corroborated {
							corroborated++
						}
					}
				}
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
			if corroborated == 0 {
				b.Fatal("no save was reconciled as a near-duplicate")
			}
			b.ReportMetric(float64(corroborated), "corroborated")
		})
	}
}

// BenchmarkRawInsertPG is the floor of BenchmarkSavePG: the JSON of the same
// records INSERTed into a two-column table, one transaction per batch of
// saveBenchBatch, on one connection.
func BenchmarkRawInsertPG(b *testing.B) {
	pgBenchURL(b)
	for _, n := range saveBenchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			reqs := saveBenchRequests(n)
			gen := schema.NewIDGenerator(rand.New(rand.NewSource(1)))
			at := time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC)
			now := schema.FormatTime(at)
			ids, vals := make([]string, len(reqs)), make([]string, len(reqs))
			for i, r := range reqs {
				id, err := gen.New(at)
				if err != nil {
					b.Fatal(err)
				}
				rec := store.NewRecord(store.WriteRequest{Scope: map[string]string{"project": "bench", store.AgentKey: "bench-agent"},
					Kind: schema.KindFact, Content: r.Content, Target: r.Target, Provenance: r.Provenance}, id, now, r.Actor)
				v, err := json.Marshal(rec)
				if err != nil {
					b.Fatal(err)
				}
				ids[i], vals[i] = id, string(v)
			}
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				conn, err := pgx.Connect(ctx, pgtest.Fresh(b))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Exec(ctx, `CREATE TABLE raw (id text PRIMARY KEY, body text NOT NULL)`); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for start := 0; start < len(vals); start += saveBenchBatch {
					err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
						for i := start; i < min(start+saveBenchBatch, len(vals)); i++ {
							if _, err := tx.Exec(ctx, `INSERT INTO raw (id, body) VALUES ($1, $2)`, ids[i], vals[i]); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				conn.Close(ctx)
				b.StartTimer()
			}
		})
	}
}
