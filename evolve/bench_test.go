package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// Save benchmark shape (issue 10, docs/PERFORMANCE.md): n saves in batches
// of saveBenchBatch, against a raw bbolt Put of the same record bytes with
// the same batching. The 10k size runs only with
// AGENT_LS_BENCH_SAVE10K=1 (seconds): a heuristic's reconciliation compares
// it with every live heuristic of its domain, so the cost per save grows
// with n / saveBenchDomains.
const (
	saveBenchBatch   = 100
	saveBenchDomains = 20
)

func saveBenchSizes() []int {
	if os.Getenv("AGENT_LS_BENCH_SAVE10K") == "1" {
		return []int{1_000, 10_000}
	}
	return []int{1_000}
}

// saveBenchAgent authors saveBenchDomains judgment domains so heuristics
// spread over them (a memory may not create a domain).
func saveBenchAgent() *schema.AgentConfig {
	var js []string
	for d := range saveBenchDomains {
		js = append(js, fmt.Sprintf(`{"domain":"area-%02d","heuristics":["Authored rule %d: keep changes small"]}`, d, d))
	}
	text := `{"roleTemplate":{"name":"bench-agent","persona":{"identity":"a benchmark agent","tone":"terse"},"judgments":[` +
		strings.Join(js, ",") + `]},"mission":{"objective":"measure saves"},"background":{"projectContext":{"language":"Go"}},"awareness":{}}`
	var c schema.AgentConfig
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		panic(err) // a constant: a test bug
	}
	return &c
}

// saveBenchRequests is a deterministic mix (seed 7): half background facts
// with distinct keys (auto tier: promoted at save), 30% heuristics over the
// authored domains of which about a third repeat an earlier one of the same
// domain with one word changed, from another conversation (near-duplicates:
// corroborated, and promoted once recurrence is met), 20% untargeted.
func saveBenchRequests(n int) []SaveRequest {
	r := rand.New(rand.NewSource(7))
	words := strings.Fields("deploy canary rollback queue latency review tests staging prod cache index schema migration alert dashboard budget owner ticket retry timeout")
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[r.Intn(len(words))]
		}
		return strings.Join(w, " ")
	}
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-agent"}
	heur := make([][]string, saveBenchDomains)
	out := make([]SaveRequest, 0, n)
	for i := range n {
		req := SaveRequest{Actor: actor, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("conv-%d", i)}}
		switch p := r.Intn(10); {
		case p < 5:
			req.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("fact_%05d", i)}
			req.Content = "the " + sentence(6) + fmt.Sprintf(" value %d", i)
		case p < 8:
			d := r.Intn(saveBenchDomains)
			req.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: fmt.Sprintf("area-%02d", d), Slot: schema.SlotHeuristics}
			if n := len(heur[d]); n > 0 && r.Intn(3) == 0 {
				w := strings.Fields(heur[d][r.Intn(n)])
				w[len(w)-1] = "carefully"
				req.Content = strings.Join(w, " ")
			} else {
				req.Content = fmt.Sprintf("When %s, check %s first (rule %d)", sentence(5), sentence(4), i)
				heur[d] = append(heur[d], req.Content)
			}
		default:
			req.Content = "remember that " + sentence(10)
		}
		out = append(out, req)
	}
	return out
}

// BenchmarkSave saves saveBenchRequests through Engine.Save, with
// reconciliation, into a fresh bbolt store per iteration, in batches of
// saveBenchBatch through SaveBatch. Compare with BenchmarkRawPut.
func BenchmarkSave(b *testing.B) {
	for _, n := range saveBenchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { benchSave(b, n) })
	}
}

func benchSave(b *testing.B, n int) {
	reqs := saveBenchRequests(n)
	agent := saveBenchAgent()
	ctx := context.Background()
	var corroborated, promoted int
	var fileBytes int64
	for b.Loop() {
		b.StopTimer()
		clock := time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC)
		now := func() time.Time { return clock }
		st, err := bolt.Open(filepath.Join(b.TempDir(), "memory.db"), store.Options{Now: now, Entropy: rand.New(rand.NewSource(1))})
		if err != nil {
			b.Fatal(err)
		}
		eng := New(Config{Store: st, Agent: agent, Scope: map[string]string{"project": "bench"}, Now: now})
		corroborated, promoted = 0, 0
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
				if r.State == StatePromoted {
					promoted++
				}
			}
		}
		b.StopTimer()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		fileBytes = dataSize(b, st.Path())
		b.StartTimer()
	}
	// The file's pages per record saved: what the store's copies and
	// indexes cost on disk, against BenchmarkRawPut's (docs/PERFORMANCE.md).
	b.ReportMetric(float64(fileBytes)/float64(n), "pagebytes/rec")
	if corroborated == 0 {
		b.Fatal("no save was reconciled as a near-duplicate")
	}
	b.ReportMetric(float64(corroborated), "corroborated")
	b.ReportMetric(float64(promoted), "promoted")
}

// BenchmarkRawPut is the floor of BenchmarkSave: the JSON of the same
// records put into one bbolt bucket, one Update per batch of
// saveBenchBatch, on a bbolt file in b.TempDir kept open.
func BenchmarkRawPut(b *testing.B) {
	for _, n := range saveBenchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { benchRawPut(b, n) })
	}
}

func benchRawPut(b *testing.B, n int) {
	reqs := saveBenchRequests(n)
	gen := schema.NewIDGenerator(rand.New(rand.NewSource(1)))
	at := time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC)
	now := schema.FormatTime(at)
	type kv struct{ k, v []byte }
	vals := make([]kv, len(reqs))
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
		vals[i] = kv{[]byte(id), v}
	}
	bucket := []byte("records")
	var fileBytes int64
	for b.Loop() {
		b.StopTimer()
		db, err := bbolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for start := 0; start < len(vals); start += saveBenchBatch {
			err := db.Update(func(tx *bbolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists(bucket)
				if err != nil {
					return err
				}
				for _, p := range vals[start:min(start+saveBenchBatch, len(vals))] {
					if err := bk.Put(p.k, p.v); err != nil {
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
		path := db.Path()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		fileBytes = dataSize(b, path)
		b.StartTimer()
	}
	b.ReportMetric(float64(fileBytes)/float64(n), "pagebytes/rec")
}

// dataSize is the size of the pages the bbolt file at path uses (its high
// water mark; bbolt grows the file itself in steps of up to 16 MB).
func dataSize(b *testing.B, path string) int64 {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.View(func(tx *bbolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	return size
}
