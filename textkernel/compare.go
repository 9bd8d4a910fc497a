package textkernel

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Comparison form.
//
// Canon is the form every comparison of agent-ls goes through: near-duplicate
// and contradiction (evolve/lexical, through Words), background key collision
// and authored-wins (Key), awareness domain lookup and judgment line
// duplicates. Two strings a reader cannot tell apart get the same Canon:
//
//  1. NFKC (fullwidth "ｐ" -> "p", ligature "ﬁ" -> "fi", NBSP -> space);
//  2. full case folding (golang.org/x/text/cases.Fold: "ß" -> "ss", "ς" -> "σ");
//  3. format and default-ignorable characters dropped (Unicode Cf: ZWSP U+200B,
//     ZWNJ/ZWJ U+200C/D, WJ U+2060, BOM U+FEFF, soft hyphen, the bidi
//     controls; variation selectors; Other_Default_Ignorable_Code_Point);
//  4. every non-ASCII letter, digit or mark folded to its TR39 skeleton
//     (Unicode confusables.txt, github.com/mtibben/confusables) when that
//     skeleton is itself letters, digits and marks: Cyrillic "е" -> "e",
//     Greek "ο" -> "o". ASCII is never skeleton-mapped: TR39 maps Latin to
//     Latin too ("m" -> "rn", "l" and "1" -> "l", "0" -> "O"), which would make
//     "modem" equal "modern"; the ASCII letters are the prototypes here.
//     Punctuation and symbols are not mapped either (the skeleton of an em
//     dash is a Katakana letter, which would glue two words into one);
//     A letter that Fold already makes ASCII is folded by Fold ("ṁ" -> "m";
//     its skeleton would be "rṅ");
//  5. nonspacing marks dropped and Latin letters folded plain (Fold): "é" -> "e".
//
// Canon is for comparison keys only, never for display: a Russian word's
// Canon mixes scripts. It is idempotent on its output for the strings the
// tests cover, and ASCII input takes a fast path (lowercasing only).
func Canon(s string) string {
	// One pass decides the ASCII fast path and whether it lowercases.
	upper := false
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= utf8.RuneSelf {
			return canonUnicode(s)
		}
		if 'A' <= b && b <= 'Z' {
			upper = true
		}
	}
	if !upper {
		return s
	}
	out := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		b := s[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		out[i] = b
	}
	return string(out)
}

// canonUnicode is Canon of a string that is not all ASCII.
func canonUnicode(s string) string {
	s = norm.NFKC.String(s)
	c := folders.Get().(*cases.Caser)
	s = c.String(s)
	folders.Put(c)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(unicode.ToLower(r))
		case Ignorable(r), unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteString(skeleton(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Key is the comparison key of an identifier (a background key, an
// awareness name, a domain): Canon with surrounding white space trimmed and
// inner runs of white space made one space. "Pipeline", "pip\u0435line"
// (Cyrillic е), "pipe\u200bline", "\uff50ipeline" and "pipeline " all have the
// Key "pipeline".
func Key(s string) string {
	c := Canon(s)
	if plainKey(c) {
		return c
	}
	return strings.Join(strings.Fields(c), " ")
}

// plainKey reports whether c is ASCII with single spaces between words and
// none around them (Key has nothing to collapse), in one pass.
func plainKey(c string) bool {
	prevSpace := true // a leading space is not plain
	for i := 0; i < len(c); i++ {
		b := c[i]
		switch {
		case b >= 0x80, b == '\t', b == '\n', b == '\r', b == '\v', b == '\f':
			return false
		case b == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		default:
			prevSpace = false
		}
	}
	return c == "" || c[len(c)-1] != ' '
}

// SameKey reports whether two identifiers are one (Key equality).
func SameKey(a, b string) bool { return a == b || Key(a) == Key(b) }

// Ignorable reports whether r is dropped from comparisons: a format
// character (Cf), a variation selector or another default-ignorable code
// point.
func Ignorable(r rune) bool {
	if r < 0xAD {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

var folders = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

// skeletons memoizes skeleton per rune.
var skeletons sync.Map // rune -> string

// skeleton is the comparison form of one non-ASCII letter, digit or mark
// (steps 4 and 5 of Canon).
func skeleton(r rune) string {
	if v, ok := skeletons.Load(r); ok {
		return v.(string)
	}
	// A letter Fold makes ASCII is that ASCII ("ṁ" -> "m"): its skeleton
	// would map the ASCII base too ("ṁ" -> "rṅ").
	if f := Fold(r); isASCII(f) {
		skeletons.Store(r, f)
		return f
	}
	sk := confusables.Skeleton(string(r))
	for _, x := range sk {
		if !(unicode.IsLetter(x) || unicode.IsDigit(x) || unicode.IsMark(x)) {
			sk = norm.NFD.String(string(r))
			break
		}
	}
	var b strings.Builder
	for _, x := range sk {
		if unicode.Is(unicode.Mn, x) {
			continue
		}
		b.WriteString(Fold(x))
	}
	out := b.String()
	if out == "" {
		out = string(r)
	}
	skeletons.Store(r, out)
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Clause breaks: punctuation that ends a clause for Words.
func clauseBreak(r rune) bool {
	switch r {
	case ',', ';', ':', '.', '!', '?', '(', ')', '[', ']', '\n', '\u2013', '\u2014', '\u2026':
		return true
	}
	return false
}

// apostrophe reports whether r is an apostrophe (ASCII, typographic or the
// modifier letter), which Words keeps inside a word.
func apostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u2018' || r == '\u02bc'
}

// Words is the one tokenizer of comparisons: the words of Canon(s), in
// order, each with whether it starts a new clause. A word is a maximal run of
// letters, digits and spacing or enclosing marks (nonspacing marks are
// already gone in Canon); an apostrophe inside a word is kept as "'" (so
// that evolve/lexical can expand "n't" and drop a possessive "'s"), at a
// word's edges it is dropped. Anything else separates words; ",", ";", ":",
// ".", "!", "?", brackets, dashes and line breaks also end a clause
// (lexical scopes negation to a clause). fn is called once per word.
//
// Search tokens (Tokens) split the same way except that an apostrophe always
// separates: the PostgreSQL backend persists them (see Tokens).
func Words(s string, fn func(w string, clauseStart bool)) {
	s = Canon(s)
	start, clause := -1, true
	apos := false // the run holds an apostrophe: rebuild with "'" only
	emit := func(end int) {
		if start < 0 {
			return
		}
		w := s[start:end]
		start = -1
		if apos {
			var b strings.Builder
			for _, r := range w {
				if apostrophe(r) {
					r = '\''
				}
				b.WriteRune(r)
			}
			w = b.String()
			apos = false
		}
		w = strings.Trim(w, "'")
		if w == "" {
			return
		}
		fn(w, clause)
		clause = false
	}
	for i, r := range s {
		switch {
		case wordRune(r):
			if start < 0 {
				start = i
			}
		case apostrophe(r) && start >= 0:
			apos = apos || r != '\''
		default:
			emit(i)
			if clauseBreak(r) {
				clause = true
			}
		}
	}
	emit(len(s))
}
