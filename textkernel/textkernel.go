// Package textkernel is the one text kernel of agent-ls. It is pure (no
// I/O) and every text comparison goes through it:
//
//   - Canon (compare.go) is the comparison form: NFKC, case folding, format
//     characters dropped, confusables folded to their TR39 skeleton, Latin
//     diacritics dropped. Key is Canon for identifiers (white space trimmed
//     and collapsed): background key collisions, authored-wins, awareness
//     domain names. Words splits Canon into words with clause breaks: the
//     tokens of near-duplicate and contradiction checks (evolve/lexical).
//   - Tokens is the store's search tokenizer (store.Tokenize, whose tokens
//     the PostgreSQL backend persists): the same word rule on text folded
//     rune by rune with Fold, kept stable so that persisted indexes match.
//
// Folding (Fold) lowercases a rune and, for Latin letters, removes
// diacritics by canonical decomposition (golang.org/x/text/unicode/norm,
// NFD) dropping the nonspacing marks: "É" -> "e", "ǘ" -> "u". The few Latin
// letters that have no canonical decomposition fold by the table in letters
// ("ß" -> "ss", "æ" -> "ae", "ø" -> "o", "ł" -> "l", ...). Letters of other
// scripts are lowercased only ("й" stays "й") by Fold; Canon folds them
// further to their skeleton.
//
// Index compatibility: for every character the store's earlier hand table
// covered, Fold gives that table's answer (TestFoldMatchesLegacyTable), so
// token indexes built before the kernel stay valid; the kernel only also
// folds the rarer Latin letters that table missed.
package textkernel

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// letters folds the Latin letters without a canonical decomposition.
var letters = map[rune]string{
	'ß': "ss", 'æ': "ae", 'ǣ': "ae", 'ǽ': "ae", 'œ': "oe", 'ø': "o", 'ǿ': "o",
	'đ': "d", 'ð': "d", 'ħ': "h", 'ı': "i", 'ł': "l", 'ŀ': "l", 'ŧ': "t", 'þ': "th", 'ŉ': "n",
}

// Fold returns r lowercased and, for a Latin letter, without diacritics.
func Fold(r rune) string {
	r = unicode.ToLower(r)
	if r < 0x80 {
		return string(r)
	}
	if f, ok := letters[r]; ok {
		return f
	}
	if !unicode.Is(unicode.Latin, r) {
		return string(r)
	}
	var b strings.Builder
	for _, d := range norm.NFD.String(string(r)) {
		if unicode.Is(unicode.Mn, d) {
			continue
		}
		if f, ok := letters[d]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(d)
	}
	if b.Len() == 0 {
		return string(r)
	}
	return b.String()
}

// wordRune reports whether r belongs to a word, for Tokens and Words alike:
// letters, digits and spacing or enclosing marks.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r)
}

// Tokens turns text into search tokens:
//
//   - runes are folded (Fold); combining marks of decomposed input
//     (nonspacing marks) are dropped without splitting the word;
//   - tokens are maximal runs of letters, digits and spacing or enclosing
//     marks (vowel signs of Indic scripts stay in their word); everything
//     else separates ("dark-mode" -> "dark", "mode"), the apostrophe too
//     ("user's" -> "user", "s");
//   - no stopwords, no stemming. Duplicates are kept in order.
//
// Tokens are the store's search index (the PostgreSQL backend persists
// them), so they keep the folding they were built with: no NFKC, no
// confusable skeleton, format characters separate. Comparisons use Words
// (the same word rule on Canon).
func Tokens(s string) []string {
	var toks []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case wordRune(r):
			b.WriteString(Fold(r))
		default:
			flush()
		}
	}
	flush()
	return toks
}
