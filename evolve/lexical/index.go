package lexical

import "slices"

// ContradictionIndex finds, among a fixed list of analysed texts, the ones
// another text may contradict without comparing it with each: two texts
// contradict only when their cores reach ContradictionThreshold (Jaccard),
// which needs a number of shared core words that an inverted index counts
// from the words the text has. A text sharing too few is never compared.
// It is not safe for concurrent use (it keeps scratch counters).
type ContradictionIndex struct {
	texts   []*Text
	post    map[string][]int32
	count   []int32
	touched []int32
}

// NewContradictionIndex indexes texts by their core words.
func NewContradictionIndex(texts []*Text) *ContradictionIndex {
	x := &ContradictionIndex{texts: texts, post: map[string][]int32{}, count: make([]int32, len(texts))}
	for i, t := range texts {
		for _, w := range t.coreWords() {
			x.post[w] = append(x.post[w], int32(i))
		}
	}
	return x
}

// Candidates calls fn, in index order, with each text that shares enough
// core words with t to reach ContradictionThreshold (and has the polarity
// that could oppose t's): every text TextContradicts(t, ·) could report is
// among them.
func (x *ContradictionIndex) Candidates(t *Text, fn func(i int)) {
	if !t.anyPos && !t.anyNeg {
		return // no polarity: contradicts nothing
	}
	x.touched = x.touched[:0]
	for _, w := range t.coreWords() {
		for _, i := range x.post[w] {
			if x.count[i] == 0 {
				x.touched = append(x.touched, i)
			}
			x.count[i]++
		}
	}
	slices.Sort(x.touched)
	for _, i := range x.touched {
		shared := x.count[i]
		x.count[i] = 0
		o := x.texts[i]
		if !(t.anyPos && o.anyNeg || t.anyNeg && o.anyPos) {
			continue
		}
		// Jaccard >= th  <=>  shared*(1+th) >= th*(|A|+|B|).
		if float64(shared)*(1+ContradictionThreshold) < ContradictionThreshold*float64(t.coreLen()+o.coreLen())-1e-9 {
			continue
		}
		fn(int(i))
	}
}
