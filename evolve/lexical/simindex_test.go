package lexical

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSimIndexFindsEveryPair: over random groups of texts drawn from small
// vocabularies (many overlaps, negations, texts without content tokens,
// repeats), the pairs a self-join (Probe(texts[i], i+1)) offers that reach
// the threshold are exactly the pairs of the all-pairs loop that reach it,
// offered in ascending order, and so are those of probes with texts the
// index does not hold — for the garden's and lint's thresholds and others.
func TestSimIndexFindsEveryPair(t *testing.T) {
	t.Parallel()
	vocab := strings.Fields("deploy canary rollback queue latency review tests staging prod cache index schema migration alert budget owner ticket retry timeout never not always")
	for _, th := range []float64{0.35, 0.2, 0.5, NearDuplicateThreshold, 0.9, 1, 0} {
		for seed := range 25 {
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
			texts := make([]*Text, n)
			for i, c := range contents {
				texts[i] = Analyze(c)
			}
			var want, got []string
			for i := range n {
				for j := i + 1; j < n; j++ {
					if Similarity(contents[i], contents[j]) >= th {
						want = append(want, fmt.Sprint(i, ",", j))
					}
				}
			}
			join := NewSimIndex(texts, th)
			for i := range n {
				after := join.Probe(texts[i], i+1)
				if !slices.IsSorted(after) {
					t.Fatalf("threshold %v seed %d: after(%d) = %v, not ascending", th, seed, i, after)
				}
				for _, j := range after {
					if j <= i {
						t.Fatalf("threshold %v seed %d: after(%d) offers %d", th, seed, i, j)
					}
					if TextSimilarity(texts[i], texts[j]) >= th {
						got = append(got, fmt.Sprint(i, ",", j))
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("threshold %v seed %d: pairs reaching it\n got %v\nwant %v\ntexts %q", th, seed, got, want, contents)
			}
			// Probes the index does not hold: texts with words from the
			// whole vocabulary, against every indexed text.
			for p := range 10 {
				w := make([]string, r.IntN(7))
				for k := range w {
					w[k] = vocab[r.IntN(len(vocab))]
				}
				probe := strings.Join(w, " ")
				pt := Analyze(probe)
				var want, got []int
				for k := range n {
					if Similarity(probe, contents[k]) >= th {
						want = append(want, k)
					}
				}
				for _, k := range join.Probe(pt, 0) {
					if TextSimilarity(pt, texts[k]) >= th {
						got = append(got, k)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("threshold %v seed %d probe %d %q: got %v want %v", th, seed, p, probe, got, want)
				}
			}
		}
	}
}
