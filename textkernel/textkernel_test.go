package textkernel

import (
	"slices"
	"testing"
)

// legacyStore is the hand table store/tokenize.go folded with before the
// kernel: the tokens the PostgreSQL backend persisted were made with it.
var legacyStore = map[string]string{
	"a": "àáâãäåāăąǎǟǡǻȁȃȧḁạảấầẩẫậắằẳẵặ", "ae": "æǣǽ", "c": "çćĉċčḉ", "d": "ďđḋḍḏḑḓð",
	"e": "èéêëēĕėęěȅȇȩḕḗḙḛḝẹẻẽếềểễệ", "f": "ḟ", "g": "ĝğġģǧǵḡ", "h": "ĥħȟḣḥḧḩḫẖ",
	"i": "ìíîïĩīĭįıǐȉȋḭḯỉị", "j": "ĵǰ", "k": "ķǩḱḳḵ", "l": "ĺļľŀłḷḹḻḽ", "m": "ḿṁṃ",
	"n": "ñńņňŉǹṅṇṉṋ", "o": "òóôõöøōŏőǒǫǭǿȍȏȫȭȯȱṍṏṑṓọỏốồổỗộớờởỡợơ", "oe": "œ", "p": "ṕṗ",
	"r": "ŕŗřȑȓṙṛṝṟ", "s": "śŝşšșṡṣṥṧṩ", "ss": "ß", "t": "ţťŧțṫṭṯṱẗ", "th": "þ",
	"u": "ùúûüũūŭůűųǔǖǘǚǜȕȗṳṵṷṹṻụủứừửữựư", "v": "ṽṿ", "w": "ŵẁẃẅẇẉẘ", "x": "ẋẍ",
	"y": "ýÿŷȳẏẙỳỵỷỹ", "z": "źżžẑẓẕ",
}

// legacyLexical is evolve/lexical's own table before the kernel.
var legacyLexical = map[string]string{
	"ss": "ß", "ae": "æ", "oe": "œ", "o": "øòóôõöōŏő", "d": "đď", "l": "łĺļľŀ", "th": "þ",
	"a": "àáâãäåāăą", "c": "çćĉċč", "e": "èéêëēĕėęě", "i": "ìíîïĩīĭįı",
	"n": "ñńņňŉ", "u": "ùúûüũūŭůűų", "y": "ýÿŷ", "s": "śŝşš",
	"z": "źżž", "g": "ĝğġģ", "r": "ŕŗř", "t": "ţťŧ",
}

// TestFoldMatchesLegacyTable: for every letter either old table covered,
// the kernel folds the same way (upper case too), so indexes built with the
// old tokenizer still match queries tokenized by the kernel.
func TestFoldMatchesLegacyTable(t *testing.T) {
	t.Parallel()
	for name, table := range map[string]map[string]string{"store": legacyStore, "lexical": legacyLexical} {
		for base, rs := range table {
			for _, r := range rs {
				if got := Fold(r); got != base {
					t.Errorf("%s table: Fold(%q) = %q, want %q", name, r, got, base)
				}
			}
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{"Café au LAIT", []string{"cafe", "au", "lait"}},
		{"Cafe\u0301 decomposed", []string{"cafe", "decomposed"}},
		{"Straße Ærø Łódź", []string{"strasse", "aero", "lodz"}},
		{"user's dark-mode.", []string{"user", "s", "dark", "mode"}},
		{"ḃ ẞ", []string{"b", "ss"}},
		{"йод Ἀθῆναι", []string{"йод", "ἀθῆναι"}},
		{"हिन्दी", []string{"हिनदी"}}, // the virama is a nonspacing mark, as in the store before
		{"?!", nil},
	}
	for _, tc := range cases {
		if got := Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
