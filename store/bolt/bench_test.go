package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// benchMatches is how many promoted records match the benchmark's scope,
// whatever the store's size.
const benchMatches = 20

// fixtureVersion names the fixture layout in its cached file name; bump it
// when the generator changes.
const fixtureVersion = 4

var benchScope = map[string]string{"project": "bench", "agent": "bench-agent"}

var fixtureMu sync.Mutex

// promotedFixture returns a database file with benchMatches promoted records
// in benchScope plus unrelated records (other projects, 1% of them promoted,
// some targeted), generated from a fixed seed, with short contents so the
// 1M fixture stays near a gigabyte. The file is cached in the temp dir
// across runs, keyed by size and versions.
func promotedFixture(b *testing.B, unrelated int) string {
	b.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("agent-ls-bench-promoted-s%d-f%d-%d.db", Version, fixtureVersion, unrelated))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	defer os.Remove(tmp)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewSource(42))
	s, err := Open(tmp, store.Options{Now: func() time.Time { return clock }, Entropy: r})
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields("deploy window refund policy code review escalate customer invoice editor dark mode tuesday staging prod rollback")
	sentence := func() string {
		n := 4 + r.Intn(5)
		w := make([]string, n)
		for i := range w {
			w[i] = words[r.Intn(len(words))]
		}
		return strings.Join(w, " ")
	}
	target := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "code-review", Slot: schema.SlotHeuristics}
	total := unrelated + benchMatches
	// Big transactions: the 1M fixture builds in one pass of large
	// appends (ids grow with the clock).
	const perTx = 50_000
	ctx := context.Background()
	for start := 0; start < total; start += perTx {
		err := s.update(ctx, func(tx *bbolt.Tx) error {
			for i := start; i < min(start+perTx, total); i++ {
				clock = clock.Add(time.Second)
				id, err := s.newID(clock)
				if err != nil {
					return err
				}
				now := schema.FormatTime(clock)
				req := store.WriteRequest{Kind: schema.KindFact, Content: sentence(),
					Scope: map[string]string{"project": fmt.Sprintf("other-%d", r.Intn(200)), "team": "t"}}
				promote := r.Intn(100) == 0
				if i%(total/benchMatches) == 0 && i/(total/benchMatches) < benchMatches {
					req.Scope = map[string]string{"project": "bench"}
					promote = true
				}
				if r.Intn(4) == 0 {
					req.Target = &target
				}
				rec := store.NewRecord(req, id, now, store.Actor{Kind: store.ActorSystem, Name: "bench"})
				seq, err := tx.Bucket(bucketRecords).NextSequence()
				if err != nil {
					return err
				}
				if err := s.putRecord(tx, rec, seq); err != nil {
					return err
				}
				if err := indexTargeted(tx, rec); err != nil {
					return err
				}
				if err := s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpWrite, RecordID: id, Actor: store.SystemActor, Record: &rec}); err != nil {
					return err
				}
				if promote {
					p := store.Promotion{RecordID: id, Tier: schema.TierAuto, PromotedAt: now, Actor: store.SystemActor}
					if err := s.putPromotion(tx, rec, p); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkPromoted measures Promoted(scope, agent) with the same number of
// matches in stores of 1k, 100k and 1M unrelated records: the scope index
// keeps the timings close (docs/PERFORMANCE.md).
func BenchmarkPromoted(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("unrelated=%d", n), func(b *testing.B) {
			path := promotedFixture(b, n)
			s, err := Open(path, store.Options{ReadOnly: true, Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			got, err := s.Promoted(ctx, benchScope, "bench-agent")
			if err != nil || len(got) != benchMatches {
				b.Fatalf("Promoted = %d records, %v; want %d", len(got), err, benchMatches)
			}
			f0, fok := pageFaults()
			for b.Loop() {
				if _, err := s.Promoted(ctx, benchScope, "bench-agent"); err != nil {
					b.Fatal(err)
				}
			}
			// Each call maps the file afresh, so every page it reads is a
			// page fault: the part of the cost that grows with the tree's
			// depth (docs/PERFORMANCE.md, Store).
			if f1, ok := pageFaults(); fok && ok {
				b.ReportMetric(float64(f1-f0)/float64(b.N), "faults/op")
			}
		})
	}
}

// BenchmarkDecodeRecords: decoding 1,000 stored records of bench/gen's shape
// (a promoted background fact with provenance), direct and through
// json.Unmarshal.
func BenchmarkDecodeRecords(b *testing.B) {
	var vals [][]byte
	for i := range 1000 {
		rec := schema.MemoryRecord{ID: fmt.Sprintf("01KB%022d", i), Scope: map[string]string{"agent": "bench-bot"}, Kind: schema.KindFact,
			Content:    fmt.Sprintf("Learned fact %d: the service keeps its queue depth under a thousand", i),
			Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i), Author: "agent:bench-gen"},
			CreatedAt:  "2026-11-03T14:05:00Z", UpdatedAt: "2026-11-03T14:05:00Z",
			Target: &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}}
		data, err := json.Marshal(rec)
		if err != nil {
			b.Fatal(err)
		}
		vals = append(vals, data)
	}
	for _, bb := range []struct {
		name   string
		decode func([]byte, *schema.MemoryRecord) error
	}{
		{"direct", unmarshalRecord},
		{"json", func(d []byte, r *schema.MemoryRecord) error { return json.Unmarshal(d, r) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range vals {
					var r schema.MemoryRecord
					if err := bb.decode(v, &r); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
