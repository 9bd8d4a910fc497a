package lexical

import (
	"slices"
	"strings"
)

// Text is a text analyzed once for repeated comparisons: its tokens, token
// set and contradiction core. The functions on Texts answer exactly what
// the string functions answer for the texts they were made from; callers
// comparing one text with many (reconciliation, gardening) analyze each
// text once.
//
// The token set and the core are kept as sorted slices, not maps: callers
// keep thousands of Texts (the language server's lint cache holds one per
// record of an agent), and a small map costs several times its slice.
type Text struct {
	tokens  []string
	set     []string // distinct tokens, sorted
	core    []string // distinct core words, sorted
	pol     []int8   // polarity of each core word (polPos, polNeg, polMixed)
	anyPos  bool     // a core word is polPos
	anyNeg  bool     // a core word is polNeg
	markers []string
}

// Analyze prepares s for TextNearDuplicate, TextContradicts and TextTokens.
func Analyze(s string) *Text {
	toks := Tokens(s)
	core, markers := analyze(s)
	keys := make([]string, 0, len(core))
	for k := range core {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t := &Text{tokens: slices.Clone(toks), set: sortedSet(toks), core: keys, pol: make([]int8, len(keys)), markers: markers}
	for i, k := range keys {
		t.pol[i] = core[k]
		t.anyPos = t.anyPos || t.pol[i] == polPos
		t.anyNeg = t.anyNeg || t.pol[i] == polNeg
	}
	// Exact-size copies: a Text is kept, the growth slack of append is not.
	return t
}

// sortedSet is the distinct strings of xs, sorted, in a slice of its size.
func sortedSet(xs []string) []string {
	out := slices.Compact(slices.Sorted(slices.Values(xs)))
	if len(out) < cap(out) {
		out = slices.Clone(out)
	}
	return out
}

// sortedJaccard is jaccard of two sorted sets.
func sortedJaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// TokenList is Tokens of the analyzed text (do not modify it).
func (t *Text) TokenList() []string { return t.tokens }

// TokenSet is the distinct tokens of the analyzed text, sorted: the set
// TextSimilarity compares (do not modify it).
func (t *Text) TokenSet() []string { return t.set }

// TextSimilarity is Similarity of two analyzed texts.
func TextSimilarity(a, b *Text) float64 { return sortedJaccard(a.set, b.set) }

// TextContradicts is Contradicts of two analyzed texts.
func TextContradicts(a, b *Text) (bool, string) {
	// The flags first: texts of one clause (or clauses of one polarity)
	// answer as fast as one polarity per text did.
	if !(a.anyPos && b.anyNeg || a.anyNeg && b.anyPos) {
		return false, ""
	}
	// Jaccard is at most the ratio of the two sizes: too different in size
	// is too different in core, without comparing a word.
	if !sizesAllow(len(a.core), len(b.core), ContradictionThreshold) ||
		sortedJaccard(a.core, b.core) < ContradictionThreshold || !opposed(a, b) {
		return false, ""
	}
	return true, "same subject with opposite polarity: " + describe(a.markers) + " vs " + describe(b.markers)
}

// sizesAllow reports whether sets of sizes m and n can reach Jaccard
// similarity t: |A∩B|/|A∪B| <= min(m,n)/max(m,n).
func sizesAllow(m, n int, t float64) bool {
	if m > n {
		m, n = n, m
	}
	return n == 0 || float64(m) >= t*float64(n)
}

// opposed reports whether a word of both cores has opposite polarities.
func opposed(a, b *Text) bool {
	for i, j := 0, 0; i < len(a.core) && j < len(b.core); {
		switch {
		case a.core[i] == b.core[j]:
			if a.pol[i]*b.pol[j] < 0 {
				return true
			}
			i++
			j++
		case a.core[i] < b.core[j]:
			i++
		default:
			j++
		}
	}
	return false
}

// TextNearDuplicate is NearDuplicate of two analyzed texts.
func TextNearDuplicate(a, b *Text) bool {
	if TextSimilarity(a, b) < NearDuplicateThreshold {
		return false
	}
	c, _ := TextContradicts(a, b)
	return !c
}

// Interner analyzes texts so that equal words are stored once among all
// the Texts it made: a cache of thousands of analyzed texts of one agent
// keeps each distinct token once instead of once per text. The zero value
// is ready; it is not safe for concurrent use.
type Interner struct {
	words map[string]string
}

// Analyze is Analyze with the text's words shared through in.
func (in *Interner) Analyze(s string) *Text {
	t := Analyze(s)
	if in.words == nil {
		in.words = map[string]string{}
	}
	for _, xs := range [][]string{t.tokens, t.set, t.core, t.markers} {
		for i, w := range xs {
			c, ok := in.words[w]
			if !ok {
				// An exact copy: a stem is a substring of its word.
				c = strings.Clone(w)
				in.words[c] = c
			}
			xs[i] = c
		}
	}
	return t
}
