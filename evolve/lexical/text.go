package lexical

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Text is a text analyzed once for repeated comparisons: its tokens, token
// set and contradiction core. The functions on Texts answer exactly what
// the string functions answer for the texts they were made from; callers
// comparing one text with many (reconciliation, gardening) analyze each
// text once.
//
// A Text has one of two forms. Analyze makes the string form: the token
// set and the core as sorted slices of strings. An Interner makes the
// compact form: every word is a number into the Interner's word table, and
// the tokens, the set, the core (each word with its polarity) and the
// markers are one []uint32. Callers keep many Texts (the language server's
// lint cache holds one per record of an agent: about 100k with a big store)
// and the compact form is a quarter of the string form's size. Two compact
// Texts of one Interner compare by number; any other pair compares by
// word, with the same answers.
type Text struct {
	str *strForm // the string form (Analyze); nil for a compact Text
	// The compact form: voc is the word table ids index. ids holds a
	// header (the token, set and core counts), then the tokens in order,
	// the set sorted by id, the core sorted by id (id<<2 | polarity code)
	// and the markers.
	voc    *vocab
	ids    []uint32
	anyPos bool // a core word is polPos
	anyNeg bool // a core word is polNeg
}

// strForm is a Text's words as strings.
type strForm struct {
	tokens  []string
	set     []string // distinct tokens, sorted
	core    []string // distinct core words, sorted
	pol     []int8   // polarity of each core word (polPos, polNeg, polMixed)
	markers []string
}

// The compact form's header: ids[hdrTok], ids[hdrSet] and ids[hdrCore] are
// the counts of tokens, set words and core words.
const (
	hdrTok = iota
	hdrSet
	hdrCore
	hdrLen
)

// Analyze prepares s for TextNearDuplicate, TextContradicts and TextTokens.
func Analyze(s string) *Text {
	toks := Tokens(s)
	core, markers := analyze(s)
	keys := make([]string, 0, len(core))
	for k := range core {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	f := &strForm{tokens: slices.Clone(toks), set: sortedSet(toks), core: keys, pol: make([]int8, len(keys)), markers: markers}
	t := &Text{str: f}
	for i, k := range keys {
		f.pol[i] = core[k]
		t.anyPos = t.anyPos || f.pol[i] == polPos
		t.anyNeg = t.anyNeg || f.pol[i] == polNeg
	}
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

// sortedJaccard is jaccard of two sorted sets: of words (the string form)
// or of word numbers sorted by number (the compact form).
func sortedJaccard[T cmp.Ordered](a, b []T) float64 {
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

// The compact form's parts.
func (t *Text) tokIDs() []uint32 {
	return t.ids[hdrLen : hdrLen+t.ids[hdrTok]]
}

func (t *Text) setIDs() []uint32 {
	o := hdrLen + t.ids[hdrTok]
	return t.ids[o : o+t.ids[hdrSet]]
}

func (t *Text) coreIDs() []uint32 {
	o := hdrLen + t.ids[hdrTok] + t.ids[hdrSet]
	return t.ids[o : o+t.ids[hdrCore]]
}

func (t *Text) markerIDs() []uint32 {
	return t.ids[hdrLen+t.ids[hdrTok]+t.ids[hdrSet]+t.ids[hdrCore]:]
}

// setLen and coreLen are the sizes of the token set and the core.
func (t *Text) setLen() int {
	if t.str != nil {
		return len(t.str.set)
	}
	return int(t.ids[hdrSet])
}

func (t *Text) coreLen() int {
	if t.str != nil {
		return len(t.str.core)
	}
	return int(t.ids[hdrCore])
}

// form is t's string form: t's own, or made from the compact form (a new
// value each call).
func (t *Text) form() *strForm {
	if t.str != nil {
		return t.str
	}
	v := t.voc
	v.mu.RLock()
	defer v.mu.RUnlock()
	words := func(ids []uint32) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = v.words[id]
		}
		return out
	}
	f := &strForm{tokens: words(t.tokIDs()), set: words(t.setIDs()), markers: words(t.markerIDs())}
	slices.Sort(f.set)
	core := t.coreIDs()
	order := make([]int, len(core))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(v.words[core[a]>>2], v.words[core[b]>>2]) })
	f.core, f.pol = make([]string, len(core)), make([]int8, len(core))
	for i, k := range order {
		f.core[i], f.pol[i] = v.words[core[k]>>2], int8(core[k]&3)-1
	}
	return f
}

// sameTable reports whether a and b are compact Texts of one Interner.
func sameTable(a, b *Text) bool { return a.str == nil && b.str == nil && a.voc == b.voc }

// coreWords and setWords are the core and the token set as strings,
// sorted (do not modify them): t's own, or made from the compact form.
func (t *Text) coreWords() []string {
	if t.str != nil {
		return t.str.core
	}
	return t.voc.sortedWords(t.coreIDs(), 2)
}

func (t *Text) setWords() []string {
	if t.str != nil {
		return t.str.set
	}
	return t.voc.sortedWords(t.setIDs(), 0)
}

// sortedWords is the words of ids (each shifted right by shift), sorted.
func (v *vocab) sortedWords(ids []uint32, shift uint) []string {
	out := make([]string, len(ids))
	v.mu.RLock()
	for i, id := range ids {
		out[i] = v.words[id>>shift]
	}
	v.mu.RUnlock()
	slices.Sort(out)
	return out
}

// TokenList is Tokens of the analyzed text (do not modify it).
func (t *Text) TokenList() []string { return t.form().tokens }

// TokenSet is the distinct tokens of the analyzed text, sorted: the set
// TextSimilarity compares (do not modify it).
func (t *Text) TokenSet() []string { return t.form().set }

// TextSimilarity is Similarity of two analyzed texts.
func TextSimilarity(a, b *Text) float64 {
	if sameTable(a, b) {
		return sortedJaccard(a.setIDs(), b.setIDs())
	}
	return sortedJaccard(a.setWords(), b.setWords())
}

// TextContradicts is Contradicts of two analyzed texts.
func TextContradicts(a, b *Text) (bool, string) {
	// The flags first: texts of one clause (or clauses of one polarity)
	// answer as fast as one polarity per text did.
	if !(a.anyPos && b.anyNeg || a.anyNeg && b.anyPos) {
		return false, ""
	}
	// Jaccard is at most the ratio of the two sizes: too different in size
	// is too different in core, without comparing a word.
	if !sizesAllow(a.coreLen(), b.coreLen(), ContradictionThreshold) {
		return false, ""
	}
	if sameTable(a, b) {
		if !idCoreContradicts(a.coreIDs(), b.coreIDs()) {
			return false, ""
		}
	} else {
		fa, fb := a.form(), b.form()
		if sortedJaccard(fa.core, fb.core) < ContradictionThreshold || !opposed(fa, fb) {
			return false, ""
		}
	}
	return true, "same subject with opposite polarity: " + describe(a.form().markers) + " vs " + describe(b.form().markers)
}

// idCoreContradicts is the core test of TextContradicts on two compact
// cores (id<<2 | polarity code, sorted): Jaccard of the words at least
// ContradictionThreshold and a shared word of opposite polarities.
func idCoreContradicts(a, b []uint32) bool {
	inter, opp := 0, false
	for i, j := 0, 0; i < len(a) && j < len(b); {
		wa, wb := a[i]>>2, b[j]>>2
		switch {
		case wa == wb:
			inter++
			if (int8(a[i]&3)-1)*(int8(b[j]&3)-1) < 0 {
				opp = true
			}
			i++
			j++
		case wa < wb:
			i++
		default:
			j++
		}
	}
	j := 1.0
	if len(a) > 0 || len(b) > 0 {
		j = float64(inter) / float64(len(a)+len(b)-inter)
	}
	return j >= ContradictionThreshold && opp
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
func opposed(a, b *strForm) bool {
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

// vocab is an Interner's word table: each distinct word once, numbered in
// the order first met. Texts read it while their Interner adds words.
type vocab struct {
	mu    sync.RWMutex
	ids   map[string]uint32
	words []string
}

// Interner analyzes texts into the compact form: equal words are stored
// once, in the Interner's table, among all the Texts it made, and each
// Text holds numbers. The zero value is ready. Analyze is not safe for
// concurrent use; the Texts it made may be compared (and read) while it
// analyzes more.
type Interner struct {
	voc *vocab
}

// Analyze is Analyze in the compact form, the text's words in in's table.
func (in *Interner) Analyze(s string) *Text {
	a := Analyze(s)
	if in.voc == nil {
		in.voc = &vocab{ids: map[string]uint32{}}
	}
	v := in.voc
	f := a.str
	n := hdrLen + len(f.tokens) + len(f.set) + len(f.core) + len(f.markers)
	ids := make([]uint32, hdrLen, n)
	ids[hdrTok], ids[hdrSet], ids[hdrCore] = uint32(len(f.tokens)), uint32(len(f.set)), uint32(len(f.core))
	v.mu.Lock()
	id := func(w string) uint32 {
		x, ok := v.ids[w]
		if !ok {
			// An exact copy: a stem is a substring of its text.
			c := strings.Clone(w)
			x = uint32(len(v.words))
			v.words = append(v.words, c)
			v.ids[c] = x
		}
		return x
	}
	for _, w := range f.tokens {
		ids = append(ids, id(w))
	}
	for _, w := range f.set {
		ids = append(ids, id(w))
	}
	for i, w := range f.core {
		ids = append(ids, id(w)<<2|uint32(f.pol[i]+1))
	}
	for _, w := range f.markers {
		ids = append(ids, id(w))
	}
	v.mu.Unlock()
	t := &Text{voc: v, ids: ids, anyPos: a.anyPos, anyNeg: a.anyNeg}
	slices.Sort(t.setIDs())
	slices.Sort(t.coreIDs())
	return t
}
