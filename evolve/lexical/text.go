package lexical

// Text is a text analyzed once for repeated comparisons: its tokens, token
// set and contradiction core. The functions on Texts answer exactly what
// the string functions answer for the texts they were made from; callers
// comparing one text with many (reconciliation, gardening) analyze each
// text once.
type Text struct {
	tokens  []string
	set     map[string]bool
	core    map[string]bool
	neg     bool
	markers []string
}

// Analyze prepares s for TextNearDuplicate, TextContradicts and TextTokens.
func Analyze(s string) *Text {
	toks := Tokens(s)
	core, neg, markers := analyze(s)
	return &Text{tokens: toks, set: set(toks), core: core, neg: neg, markers: markers}
}

// TokenList is Tokens of the analyzed text (do not modify it).
func (t *Text) TokenList() []string { return t.tokens }

// TextSimilarity is Similarity of two analyzed texts.
func TextSimilarity(a, b *Text) float64 { return jaccard(a.set, b.set) }

// TextContradicts is Contradicts of two analyzed texts.
func TextContradicts(a, b *Text) (bool, string) {
	if len(a.core) == 0 || len(b.core) == 0 || a.neg == b.neg {
		return false, ""
	}
	if jaccard(a.core, b.core) < ContradictionThreshold {
		return false, ""
	}
	return true, "same subject with opposite polarity: " + describe(a.markers) + " vs " + describe(b.markers)
}

// TextNearDuplicate is NearDuplicate of two analyzed texts.
func TextNearDuplicate(a, b *Text) bool {
	if TextSimilarity(a, b) < NearDuplicateThreshold {
		return false
	}
	c, _ := TextContradicts(a, b)
	return !c
}
