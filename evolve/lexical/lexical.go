// Package lexical holds the text rules evolution and lint share: content
// tokens, similarity, near-duplicate detection and lexical contradiction.
// It is pure (no I/O, no state) and deliberately search-grade, not semantic.
//
// # Tokens
//
// Tokens takes the words of the text kernel (textkernel.Words: NFKC, case
// folded, format characters dropped, confusable letters folded to their
// TR39 skeleton, accents folded; split on anything that is not a letter,
// digit or spacing mark, an apostrophe inside a word kept long enough to
// expand "n't" to "not" and to drop a possessive "'s"), removes stopwords,
// negation and emphasis markers (always, never, not, must, should, ...) and
// applies a light stemmer: plural "ies"→"y", "s" (not "ss"), "ing", "ed",
// "ly", a final "e", and a doubled final consonant ("deferred"→"defer",
// "handles"/"handled"/"handle"→"handl"). It is not a linguistic stemmer:
// irregular forms ("went"/"go") stay distinct.
//
// # Similarity and near-duplicates
//
// Similarity is the Jaccard index |A∩B| / |A∪B| of the two token sets (1
// when both are empty). NearDuplicate holds when Similarity >=
// NearDuplicateThreshold (0.6) and the two texts do not contradict each
// other: "Always refund within 30 days" and "Never refund within 30 days"
// share every content token but are opposites, not duplicates.
//
// # Contradiction
//
// Each text is reduced to a core (its tokens, with antonyms mapped to one
// canonical word: after→before, forbid/prohibit/disallow→allow,
// deny/reject/decline→approve/accept, disable→enable, exclude→include,
// decrease→increase, less→more, below→above, ignore→flag, skip→run,
// late→early), each core word with a polarity: the parity of the negators
// (not, no, never, n't, cannot, avoid, without) and flipped antonyms of its
// clause. Negation stays in its clause: a comma, semicolon, colon, full
// stop, bracket or dash ends one, so in "Never page anyone, just disable
// alerts" both clauses are negative (the second by "disable"), where a
// parity over the whole sentence would cancel them out. Two texts contradict
// when their cores have Jaccard similarity >= ContradictionThreshold (0.6)
// and a word of both cores has opposite polarities in them, i.e. the same
// subject is asserted and denied. A word found in clauses of both
// polarities of one text decides nothing.
//
// Limits, stated: double negatives within one clause, negation scoped to
// part of a clause, quantities ("over $20" vs "under $20" is caught only via
// above/below/more/less words), synonyms and paraphrases with different
// content words are not detected. The check narrows the window for bad
// promotions; gardening and human review are the backstop.
package lexical

import (
	"strings"

	"github.com/agent-ls/agent-ls/textkernel"
)

// NearDuplicateThreshold is the Similarity at or above which two
// non-contradicting texts count as the same lesson.
const NearDuplicateThreshold = 0.6

// ContradictionThreshold is the core similarity at or above which two texts
// of opposite polarity contradict.
const ContradictionThreshold = 0.6

// Tokens returns the normalized content tokens of s in order of appearance
// (duplicates kept): stopwords and negation/emphasis markers removed,
// lightly stemmed.
func Tokens(s string) []string {
	var out []string
	for _, x := range words(s) {
		if w := x.w; !stopwords[w] && !negators[w] && !emphasis[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// Similarity is the Jaccard index of the token sets of a and b, in [0, 1].
// Two texts without content tokens are similar (1) only when both are empty.
func Similarity(a, b string) float64 {
	return jaccard(set(Tokens(a)), set(Tokens(b)))
}

// NearDuplicate reports whether a and b state the same lesson: Similarity at
// or above NearDuplicateThreshold and no contradiction between them.
func NearDuplicate(a, b string) bool {
	return TextNearDuplicate(Analyze(a), Analyze(b))
}

// Contradicts reports whether a and b assert and deny the same subject, and
// why (a short human explanation naming the differing polarity words).
func Contradicts(a, b string) (bool, string) {
	return TextContradicts(Analyze(a), Analyze(b))
}

// describe names the polarity markers of a text ("(affirmative)" when none).
func describe(markers []string) string {
	if len(markers) == 0 {
		return "(affirmative)"
	}
	return `"` + strings.Join(markers, " ") + `"`
}

// analyze returns the core words with their polarity (polPos, polNeg, or
// polMixed when a word occurs in clauses of both polarities) and the words
// that set a polarity. A clause's polarity is the parity of its negators and
// flipped antonyms; negation does not cross a clause break (textkernel.Words).
func analyze(s string) (map[string]int8, []string) {
	core := map[string]int8{}
	var markers []string
	var clause []string // core words of the current clause
	neg := false
	end := func() {
		p := polPos
		if neg {
			p = polNeg
		}
		for _, w := range clause {
			switch q, ok := core[w]; {
			case !ok:
				core[w] = p
			case q != p:
				core[w] = polMixed
			}
		}
		clause, neg = clause[:0], false
	}
	for _, x := range words(s) {
		w := x.w
		if x.clauseStart {
			end()
		}
		if negators[w] {
			neg = !neg
			markers = append(markers, w)
			continue
		}
		if c, ok := antonyms[w]; ok {
			clause = append(clause, c)
			if c != w && !canonical[w] {
				neg = !neg
				markers = append(markers, w)
			}
			continue
		}
		if stopwords[w] || emphasis[w] {
			continue
		}
		clause = append(clause, stem(w))
	}
	end()
	return core, markers
}

// Polarities of a core word.
const (
	polPos   int8 = 1
	polNeg   int8 = -1
	polMixed int8 = 0
)

// word is a word of a text and whether it starts a clause.
type word struct {
	w           string
	clauseStart bool
}

// words splits s with the text kernel (textkernel.Words: the comparison
// form, so case, width, format characters and confusable letters do not
// matter) and expands contractions: "n't" becomes a following "not",
// "cannot" becomes "can not", a possessive "'s" is dropped, and other
// contractions ("we'll", "i'm") keep their head word.
func words(s string) []word {
	var out []word
	textkernel.Words(s, func(w string, start bool) {
		add := func(x string) {
			out = append(out, word{x, start})
			start = false
		}
		switch {
		case w == "cannot":
			add("can")
			add("not")
		case strings.HasSuffix(w, "n't"):
			base := strings.TrimSuffix(w, "n't")
			switch base {
			case "wo":
				base = "will"
			case "ca":
				base = "can"
			case "sha":
				base = "shall"
			}
			if base != "" {
				add(base)
			}
			add("not")
		case strings.HasSuffix(w, "'s"):
			add(strings.TrimSuffix(w, "'s"))
		default:
			if i := strings.IndexByte(w, '\''); i >= 0 {
				w = w[:i]
			}
			if w != "" {
				add(w)
			}
		}
	})
	return out
}

// stem applies the light suffix stripping described in the package doc.
func stem(w string) string {
	if len(w) <= 3 || !isAlpha(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"):
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ly") && len(w) > 4:
		w = w[:len(w)-2]
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	if n := len(w); n > 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

func isAlpha(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func set(toks []string) map[string]bool {
	m := make(map[string]bool, len(toks))
	for _, t := range toks {
		m[t] = true
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	return float64(inter) / float64(union)
}

func wordSet(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// negators flip polarity.
var negators = wordSet("not", "no", "never", "nor", "avoid", "without", "neither")

// emphasis words carry no subject and no polarity of their own.
var emphasis = wordSet("always", "must", "should", "shall", "ensure", "sure", "make", "remember",
	"please", "need", "needs", "required", "important", "really", "just", "only", "every", "each")

// antonyms maps a word to the canonical member of its antonym pair. A word
// that is its own canonical form (or listed in canonical) keeps polarity; any
// other form flips it.
var antonyms = map[string]string{
	"before": "before", "after": "before",
	"allow": "allow", "allows": "allow", "allowed": "allow", "permit": "allow", "permits": "allow", "permitted": "allow",
	"forbid": "allow", "forbids": "allow", "forbidden": "allow", "prohibit": "allow", "prohibits": "allow",
	"prohibited": "allow", "disallow": "allow", "disallows": "allow", "disallowed": "allow",
	"approve": "approve", "approves": "approve", "approved": "approve", "deny": "approve", "denies": "approve",
	"denied": "approve", "decline": "approve", "declines": "approve", "declined": "approve",
	"accept": "accept", "accepts": "accept", "accepted": "accept", "reject": "accept", "rejects": "accept", "rejected": "accept",
	"enable": "enable", "enables": "enable", "enabled": "enable", "disable": "enable", "disables": "enable", "disabled": "enable",
	"include": "include", "includes": "include", "included": "include", "exclude": "include", "excludes": "include", "excluded": "include",
	"increase": "increase", "increases": "increase", "increased": "increase", "decrease": "increase", "decreases": "increase", "decreased": "increase",
	"more": "more", "less": "more", "fewer": "more",
	"above": "above", "below": "above",
	"flag": "flag", "flags": "flag", "flagged": "flag", "ignore": "flag", "ignores": "flag", "ignored": "flag",
	"run": "run", "runs": "run", "skip": "run", "skips": "run", "skipped": "run",
	"early": "early", "earlier": "early", "late": "early", "later": "early",
}

// canonical lists forms that mean the canonical word (no polarity flip).
var canonical = wordSet("allows", "allowed", "permit", "permits", "permitted", "approves", "approved",
	"accepts", "accepted", "enables", "enabled", "includes", "included", "increases", "increased",
	"flags", "flagged", "runs", "earlier")

// stopwords are function words that carry no subject.
var stopwords = wordSet(
	"a", "an", "the", "and", "or", "but", "if", "then", "else", "when", "while", "of", "to", "in", "on",
	"at", "by", "for", "with", "from", "into", "onto", "as", "is", "are", "was", "were", "be", "been",
	"being", "am", "do", "does", "did", "doing", "done", "have", "has", "had", "having", "it", "its",
	"this", "that", "these", "those", "there", "here", "we", "you", "they", "he", "she", "i", "me", "my",
	"our", "your", "their", "them", "us", "his", "her", "so", "than", "too", "very", "can", "could",
	"will", "would", "may", "might", "any", "all", "some", "such", "which", "who", "whom", "what",
	"up", "out", "about", "also", "one", "s", "t",
)
