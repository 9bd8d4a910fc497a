package lint_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// interned is an Input.Analyze that analyzes into one Interner's compact
// form (what the language server passes), safe for concurrent use.
func interned() func(string) *lint.Analysis {
	var mu sync.Mutex
	var in lint.Interner
	return func(s string) *lint.Analysis {
		mu.Lock()
		defer mu.Unlock()
		return in.Analyze(s)
	}
}

// randomInput is an agent with judgment lines and promoted and candidate
// records on its domains, drawn from a small vocabulary with negations and
// antonyms: contradictions, near-duplicates and restatements are common.
func randomInput(seed uint64) lint.Input {
	r := rand.New(rand.NewPCG(seed, 35))
	words := strings.Fields("deploy canary rollback queue review tests staging prod cache never not always don't allow forbid enable disable before after skip run the on Fridays")
	sentence := func() string {
		w := make([]string, 2+r.IntN(7))
		for k := range w {
			w[k] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	domains := []string{"deploys", "reviews"}
	var y strings.Builder
	y.WriteString("roleTemplate:\n  name: bot\n  persona:\n    identity: a bot\n  judgments:\n")
	for _, d := range domains {
		fmt.Fprintf(&y, "    - domain: %s\n", d)
		for _, slot := range []string{"heuristics", "constraints"} {
			if n := r.IntN(5); n > 0 {
				fmt.Fprintf(&y, "      %s:\n", slot)
				for range n {
					fmt.Fprintf(&y, "        - %q\n", sentence())
				}
			}
		}
	}
	y.WriteString("mission:\n  objective: ship\n")
	doc, cfg, _, err := schema.LoadAgent("bot.agent.yaml", []byte(y.String()))
	if err != nil {
		panic(err)
	}
	rec := func(i int) schema.MemoryRecord {
		slot := schema.SlotHeuristics
		if r.IntN(3) == 0 {
			slot = schema.SlotConstraints
		}
		return schema.MemoryRecord{ID: fmt.Sprintf("m%03d", i), Kind: schema.KindFact, Content: sentence(),
			Provenance: schema.Provenance{ConversationID: fmt.Sprintf("conv-%d", r.IntN(3))},
			CreatedAt:  fmt.Sprintf("2026-01-01T00:%02d:00Z", r.IntN(60)),
			Target:     &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: domains[r.IntN(len(domains))], Slot: slot}}
	}
	in := lint.Input{Doc: doc, Config: cfg}
	in.Facts.Now = "2026-02-01T00:00:00Z"
	n := 0
	for range r.IntN(12) {
		in.Facts.Promoted = append(in.Facts.Promoted, rec(n))
		n++
	}
	for range r.IntN(60) {
		in.Facts.Candidates = append(in.Facts.Candidates, rec(n))
		n++
	}
	return in
}

// TestInternedAnalysis is the differential test of the compact analyses:
// with Input.Analyze analyzing into an Interner (with and without a Memo,
// and after an edit of the authored lines), every finding and conflict is
// the one the string-form analyses give — over the lint fixtures and over
// random agents.
func TestInternedAnalysis(t *testing.T) {
	t.Parallel()
	var inputs []lint.Input
	for _, p := range fixtures(t) {
		inputs = append(inputs, loadFixture(t, p).in)
	}
	for seed := range 60 {
		inputs = append(inputs, randomInput(uint64(seed)))
	}
	for i, in := range inputs {
		variants := []lint.Input{in, edited(in)}
		analyze := interned() // one table for every run, as the server's cache
		memo := &lint.Memo{}
		for _, v := range []int{0, 1, 0} {
			want, wantConflicts := full(lint.Run(variants[v])), js(t, lint.Conflicts(variants[v]))
			x := variants[v]
			x.Analyze = analyze
			if got := full(lint.Run(x)); got != want {
				t.Fatalf("input %d variant %d: findings interned:\n%s\nstring form:\n%s", i, v, got, want)
			}
			if got := js(t, lint.Conflicts(x)); got != wantConflicts {
				t.Fatalf("input %d variant %d: conflicts interned:\n%s\nstring form:\n%s", i, v, got, wantConflicts)
			}
			x.Memo = memo
			if got := full(lint.Run(x)); got != want {
				t.Fatalf("input %d variant %d: findings interned with a memo:\n%s\nstring form:\n%s", i, v, got, want)
			}
		}
	}
}
