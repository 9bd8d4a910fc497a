package store

import (
	"strings"
	"unicode"
)

// Tokenize turns text into search tokens, the single tokenizer every backend
// uses for both records and queries:
//
//   - runes are lowercased, then Latin letters with diacritics are folded to
//     their base letters ("Café" -> "cafe", "Ærø" -> "aero", "Straße" ->
//     "strasse"); combining marks (decomposed input) are dropped;
//   - tokens are maximal runs of letters, digits and spacing marks; everything else
//     separates ("dark-mode" -> "dark", "mode"; "editor." -> "editor");
//   - an apostrophe is a separator too, so possessives split:
//     "user's" -> "user", "s" (a query for "user" finds "user's");
//   - there is no stopword removal and no stemming: "the" is a token like any
//     other, and "editors" does not match "editor".
//
// Duplicates are kept in order; callers that need sets dedupe.
func Tokenize(s string) []string {
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
			// A nonspacing mark (an accent of decomposed input) folds away
			// and does not split the word.
		case unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r):
			// Spacing and enclosing marks belong to the word (vowel signs
			// of Indic scripts): kept, so words do not split.
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToLower(r)
			if f, ok := fold[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		default:
			flush()
		}
	}
	flush()
	return toks
}

// tokenSet returns the distinct tokens of s.
func tokenSet(parts ...string) map[string]bool {
	set := map[string]bool{}
	for _, p := range parts {
		for _, t := range Tokenize(p) {
			set[t] = true
		}
	}
	return set
}

// fold maps lowercase Latin letters with diacritics (and a few ligatures) to
// their ASCII base, an NFD-like folding without golang.org/x/text.
var fold = buildFold()

func buildFold() map[rune]string {
	groups := []struct {
		base  string
		runes string
	}{
		{"a", "àáâãäåāăąǎǟǡǻȁȃȧḁạảấầẩẫậắằẳẵặ"},
		{"ae", "æǣǽ"},
		{"c", "çćĉċčḉ"},
		{"d", "ďđḋḍḏḑḓð"},
		{"e", "èéêëēĕėęěȅȇȩḕḗḙḛḝẹẻẽếềểễệ"},
		{"f", "ḟ"},
		{"g", "ĝğġģǧǵḡ"},
		{"h", "ĥħȟḣḥḧḩḫẖ"},
		{"i", "ìíîïĩīĭįıǐȉȋḭḯỉị"},
		{"j", "ĵǰ"},
		{"k", "ķǩḱḳḵ"},
		{"l", "ĺļľŀłḷḹḻḽ"},
		{"m", "ḿṁṃ"},
		{"n", "ñńņňŉǹṅṇṉṋ"},
		{"o", "òóôõöøōŏőǒǫǭǿȍȏȫȭȯȱṍṏṑṓọỏốồổỗộớờởỡợơ"},
		{"oe", "œ"},
		{"p", "ṕṗ"},
		{"r", "ŕŗřȑȓṙṛṝṟ"},
		{"s", "śŝşšșṡṣṥṧṩ"},
		{"ss", "ß"},
		{"t", "ţťŧțṫṭṯṱẗ"},
		{"th", "þ"},
		{"u", "ùúûüũūŭůűųǔǖǘǚǜȕȗṳṵṷṹṻụủứừửữựư"},
		{"v", "ṽṿ"},
		{"w", "ŵẁẃẅẇẉẘ"},
		{"x", "ẋẍ"},
		{"y", "ýÿŷȳẏẙỳỵỷỹ"},
		{"z", "źżžẑẓẕ"},
	}
	m := map[rune]string{}
	for _, g := range groups {
		for _, r := range g.runes {
			m[r] = g.base
		}
	}
	return m
}
