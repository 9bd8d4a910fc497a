package evolve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/evolve/lexical"
)

// TestSimJoinFindsEveryPair: over random groups of texts drawn from small
// vocabularies (many overlaps, negations, texts without content tokens,
// repeats), the pairs simJoin offers that reach the threshold are exactly
// the pairs of the all-pairs loop that reach it, offered in ascending
// order — for the garden's threshold and others.
func TestSimJoinFindsEveryPair(t *testing.T) {
	t.Parallel()
	vocab := strings.Fields("deploy canary rollback queue latency review tests staging prod cache index schema migration alert budget owner ticket retry timeout never not always")
	for _, th := range []float64{FragmentThreshold, 0.2, 0.5, lexical.NearDuplicateThreshold, 0.9, 1} {
		for seed := range 40 {
			r := rand.New(rand.NewPCG(uint64(seed), 35))
			n := 2 + r.IntN(60)
			words := vocab[:3+r.IntN(len(vocab)-3)]
			contents := make([]string, n)
			for i := range contents {
				switch {
				case r.IntN(10) == 0:
					contents[i] = "the and of" // stopwords only: no tokens
				case i > 0 && r.IntN(8) == 0:
					contents[i] = contents[r.IntN(i)]
				default:
					w := make([]string, 1+r.IntN(9))
					for k := range w {
						w[k] = words[r.IntN(len(words))]
					}
					contents[i] = strings.Join(w, " ")
				}
			}
			texts := make([]*lexical.Text, n)
			for i, c := range contents {
				texts[i] = lexical.Analyze(c)
			}
			var want, got []string
			for i := range n {
				for j := i + 1; j < n; j++ {
					if lexical.Similarity(contents[i], contents[j]) >= th {
						want = append(want, fmt.Sprint(i, ",", j))
					}
				}
			}
			join := newSimJoin(texts, th)
			for i := range n {
				after := join.after(i)
				if !slices.IsSorted(after) {
					t.Fatalf("threshold %v seed %d: after(%d) = %v, not ascending", th, seed, i, after)
				}
				for _, j := range after {
					if j <= i {
						t.Fatalf("threshold %v seed %d: after(%d) offers %d", th, seed, i, j)
					}
					if lexical.TextSimilarity(texts[i], texts[j]) >= th {
						got = append(got, fmt.Sprint(i, ",", j))
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("threshold %v seed %d: pairs reaching it\n got %v\nwant %v\ntexts %q", th, seed, got, want, contents)
			}
		}
	}
}
