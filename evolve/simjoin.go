package evolve

import (
	"math"
	"slices"
	"sort"

	"github.com/agent-ls/agent-ls/evolve/lexical"
)

// simJoin finds, among texts, the pairs whose lexical.TextSimilarity (the
// Jaccard index of their token sets) may reach t, without comparing every
// pair: a prefix-filtered all-pairs join. Each text's tokens are ordered
// rarest first (by frequency among texts, then by the token); two sets
// with Jaccard >= t share at least ceil(t*|x|) tokens, so they share one
// among the first |x|-ceil(t*|x|)+1 of either ordered set, and the index
// holds only those prefixes. A pair whose sizes alone cap the index below t
// (min/max < t) is dropped too. The filter is exact in one direction: no
// pair reaching t is missed; pairs it keeps may still fall below t, and
// the caller compares them as before. Texts without tokens (similar only
// to each other) are paired among themselves.
type simJoin struct {
	t        float64
	sets     [][]string
	prefix   [][]string
	postings map[string][]int // token -> indexes (ascending) whose prefix holds it
	empty    []int
	mark     []int // mark[j] == i+1: j already collected for i
}

func newSimJoin(texts []*lexical.Text, t float64) *simJoin {
	j := &simJoin{t: t, sets: make([][]string, len(texts)), prefix: make([][]string, len(texts)),
		postings: map[string][]int{}, mark: make([]int, len(texts))}
	freq := map[string]int{}
	for i, x := range texts {
		j.sets[i] = x.TokenSet()
		for _, w := range j.sets[i] {
			freq[w]++
		}
	}
	for i, set := range j.sets {
		n := len(set)
		if n == 0 {
			j.empty = append(j.empty, i)
			continue
		}
		ordered := slices.Clone(set)
		sort.Slice(ordered, func(a, b int) bool {
			if fa, fb := freq[ordered[a]], freq[ordered[b]]; fa != fb {
				return fa < fb
			}
			return ordered[a] < ordered[b]
		})
		// The overlap a pair reaching t needs, rounded down a little so
		// float rounding can only lengthen the prefix.
		need := max(int(math.Ceil(t*float64(n)-1e-9)), 1)
		j.prefix[i] = ordered[:min(n-need+1, n)]
		for _, w := range j.prefix[i] {
			j.postings[w] = append(j.postings[w], i)
		}
	}
	return j
}

// after returns, ascending, the indexes k > i that may pair with i.
func (j *simJoin) after(i int) []int {
	var out []int
	if len(j.sets[i]) == 0 {
		k := sort.SearchInts(j.empty, i+1)
		return append(out, j.empty[k:]...)
	}
	ni := float64(len(j.sets[i]))
	for _, w := range j.prefix[i] {
		list := j.postings[w]
		for _, k := range list[sort.SearchInts(list, i+1):] {
			if j.mark[k] == i+1 {
				continue
			}
			j.mark[k] = i + 1
			nk := float64(len(j.sets[k]))
			if lo, hi := min(ni, nk), max(ni, nk); lo < j.t*hi-1e-9*hi {
				continue // Jaccard <= lo/hi < t
			}
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
