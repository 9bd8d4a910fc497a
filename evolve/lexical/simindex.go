package lexical

import (
	"math"
	"slices"
	"sort"
)

// SimIndex finds, among indexed texts, those whose TextSimilarity (the
// Jaccard index of the token sets) with a probe may reach a threshold t,
// without comparing every pair: a prefix-filtered similarity join. Tokens
// are ordered rarest first (by frequency among the indexed texts, then by
// the token; a token the index lacks counts as rarest); two sets with
// Jaccard >= t share at least ceil(t*|x|) tokens, so they share one among
// the first |x|-ceil(t*|x|)+1 of either ordered set, and the index holds
// only those prefixes. A pair whose sizes alone cap the index below t
// (min/max < t) is dropped too. The filter is exact in one direction: no
// text reaching t is missed; texts it offers may still fall below t and
// the caller compares them. Texts without tokens are similar (1) only to
// each other. Not safe for concurrent use.
type SimIndex struct {
	t        float64
	sizes    []int
	freq     map[string]int
	postings map[string][]int // token -> indexes (ascending) whose prefix holds it
	empty    []int
	mark     []int // mark[k] == gen: k already offered to this probe
	gen      int
}

// NewSimIndex indexes texts for threshold t.
func NewSimIndex(texts []*Text, t float64) *SimIndex {
	x := &SimIndex{t: t, sizes: make([]int, len(texts)), freq: map[string]int{}, postings: map[string][]int{},
		mark: make([]int, len(texts))}
	sets := make([][]string, len(texts))
	for i, tx := range texts {
		sets[i] = tx.setWords()
		for _, w := range sets[i] {
			x.freq[w]++
		}
	}
	for i, set := range sets {
		x.sizes[i] = len(set)
		if len(set) == 0 {
			x.empty = append(x.empty, i)
			continue
		}
		for _, w := range x.prefix(set) {
			x.postings[w] = append(x.postings[w], i)
		}
	}
	return x
}

// prefix is set's tokens in the index's order, cut to the length a text
// reaching t must share a token within.
func (x *SimIndex) prefix(set []string) []string {
	ordered := slices.Clone(set)
	sort.Slice(ordered, func(a, b int) bool {
		if fa, fb := x.freq[ordered[a]], x.freq[ordered[b]]; fa != fb {
			return fa < fb
		}
		return ordered[a] < ordered[b]
	})
	n := len(ordered)
	// The overlap a pair reaching t needs, rounded down a little so float
	// rounding can only lengthen the prefix.
	need := max(int(math.Ceil(x.t*float64(n)-1e-9)), 1)
	return ordered[:min(n-need+1, n)]
}

// Probe returns, ascending, the indexes k >= from of the indexed texts
// whose similarity with q may reach the threshold.
func (x *SimIndex) Probe(q *Text, from int) []int {
	var out []int
	if x.t <= 0 {
		for k := from; k < len(x.sizes); k++ {
			out = append(out, k)
		}
		return out
	}
	set := q.setWords()
	if len(set) == 0 {
		return append(out, x.empty[sort.SearchInts(x.empty, from):]...)
	}
	x.gen++
	nq := float64(len(set))
	for _, w := range x.prefix(set) {
		list := x.postings[w]
		for _, k := range list[sort.SearchInts(list, from):] {
			if x.mark[k] == x.gen {
				continue
			}
			x.mark[k] = x.gen
			nk := float64(x.sizes[k])
			if lo, hi := min(nq, nk), max(nq, nk); lo < x.t*hi-1e-9*hi {
				continue // Jaccard <= lo/hi < t
			}
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
