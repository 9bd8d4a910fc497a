package store

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestRankerIsRank: over random candidates (createdAt and sequence ties,
// expired and invalidated records, scopes, contents) and random queries
// (text or none, limits nil, 0, small, large and unlimited, scope and kind
// filters), a Ranker offered the candidates one by one returns exactly
// Rank of all of them.
func TestRankerIsRank(t *testing.T) {
	t.Parallel()
	words := strings.Fields("refund queue deploy canary latency owner budget ticket")
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 36))
		n := r.IntN(80)
		cands := make([]Stored, n)
		for i := range cands {
			rec := schema.MemoryRecord{ID: fmt.Sprintf("r%03d", i), Kind: []schema.Kind{schema.KindFact, schema.KindPreference}[r.IntN(2)],
				CreatedAt: fmt.Sprintf("2026-12-0%dT00:00:00Z", 1+r.IntN(4)),
				Scope:     map[string]string{"project": []string{"web", "api"}[r.IntN(2)]}}
			w := make([]string, 1+r.IntN(4))
			for k := range w {
				w[k] = words[r.IntN(len(words))]
			}
			rec.Content = strings.Join(w, " ")
			switch r.IntN(8) {
			case 0:
				rec.ExpiresAt = "2026-12-02T00:00:00Z"
			case 1:
				rec.InvalidAt = "2026-12-02T00:00:00Z"
			}
			cands[i] = Stored{Rec: rec, Seq: uint64(r.IntN(n + 1))}
		}
		q := Query{}
		switch r.IntN(6) {
		case 0:
		case 1:
			q.Limit = Limit(0)
		case 2:
			q.Limit = Limit(Unlimited)
		default:
			q.Limit = Limit(1 + r.IntN(12))
		}
		if r.IntN(2) == 0 {
			q.Text = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		} else if r.IntN(10) == 0 {
			q.Text = "the"
		}
		if r.IntN(3) == 0 {
			q.Scope = map[string]string{"project": "web"}
		}
		if r.IntN(4) == 0 {
			q.Kinds = []schema.Kind{schema.KindFact}
		}
		q.IncludeInvalidated = r.IntN(2) == 0
		now := "2026-12-03T00:00:00Z"
		rk := NewRanker(q, now)
		for _, c := range cands {
			rk.Offer(c)
		}
		got, want := rk.Result(), Rank(cands, q, now)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, query %+v: Ranker %v\nRank %v", seed, q, rankIDs(got), rankIDs(want))
		}
	}
}

func rankIDs(recs []schema.MemoryRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}
