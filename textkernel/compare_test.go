package textkernel

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestKey(t *testing.T) {
	t.Parallel()
	same := []string{
		"pipeline", "Pipeline", "PIPELINE", "pip\u0435line", "pipe\u200bline", "\uff50ipeline", "pipeline ",
		" pipeline", "pipe\u200dline", "pipe\u2060line", "\ufeffpipeline", "pipe\u202eline", "pipe\u00adline",
		"p\u0456peline", "pipel\u0456ne", "pipe\ufe0fline",
	}
	for _, s := range same {
		if got := Key(s); got != "pipeline" {
			t.Errorf("Key(%q) = %q, want %q", s, got, "pipeline")
		}
		if !SameKey(s, "pipeline") {
			t.Errorf("SameKey(%q, pipeline) = false", s)
		}
	}
	differ := []string{"pipelines", "pipe line", "pipe_line", "pipe-line", "modem", "pipel1ne", "plpeline"}
	for _, s := range differ {
		if SameKey(s, "pipeline") {
			t.Errorf("SameKey(%q, pipeline) = true", s)
		}
	}
	// ASCII is never skeleton-mapped: TR39 would make these pairs equal.
	for _, p := range [][2]string{{"modem", "modern"}, {"l", "1"}, {"O", "0"}, {"burn", "bum"}} {
		if SameKey(p[0], p[1]) {
			t.Errorf("SameKey(%q, %q) = true; ASCII must compare as itself", p[0], p[1])
		}
	}
	if got := Key("  deploy \u00a0 window\t"); got != "deploy window" {
		t.Errorf("Key collapses white space: got %q", got)
	}
}

func TestCanon(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"Never deploy", "never deploy"},
		{"Al\u200bways", "always"},
		{"\u0410lw\u0430ys d\u0435pl\u043ey", "always deploy"}, // Cyrillic А а е о
		{"Café CRÈME", "cafe creme"},
		{"Stra\u00dfe", "strasse"},
		{"\uff21\uff22\uff23", "abc"},
		{"\ufb01le", "file"},
		{"deploy\u2014never", "deploy\u2014never"}, // punctuation is not skeleton-mapped
		{"\u03bf\u03bd", "o" + Canon("\u03bd")},
	}
	for _, tc := range cases {
		if got := Canon(tc.in); got != tc.want {
			t.Errorf("Canon(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Canon(Canon(tc.in)); got != Canon(tc.in) {
			t.Errorf("Canon is not idempotent on %q: %q then %q", tc.in, Canon(tc.in), got)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // words joined by " ", a clause start marked "|"
	}{
		{"Never page anyone, just disable alerts", "|never page anyone |just disable alerts"},
		{"user's dark-mode. Don\u2019t", "|user's dark mode |don't"},
		{"'quoted' words", "|quoted words"},
		{"Al\u200bways d\u0435ploy", "|always deploy"},
		{"Cafe\u0301 decomposed", "|cafe decomposed"},
		{"हिन्दी", "|हिनदी"},
		{"?!", ""},
	}
	for _, tc := range cases {
		var got []string
		Words(tc.in, func(w string, start bool) {
			if start {
				w = "|" + w
			}
			got = append(got, w)
		})
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("Words(%q) = %q, want %q", tc.in, s, tc.want)
		}
	}
}

// TestTokensUnchanged: the search tokens the PostgreSQL backend persisted
// are not changed by the comparison form.
func TestTokensUnchanged(t *testing.T) {
	t.Parallel()
	if got := Tokens("pip\u0435line Al\u200bways"); !slices.Equal(got, []string{"pip\u0435line", "al", "ways"}) {
		t.Errorf("Tokens = %q", got)
	}
}

func BenchmarkCanonASCII(b *testing.B) {
	s := "Always run the database migration before you deploy the app to production"
	for b.Loop() {
		Words(s, func(string, bool) {})
	}
}

func BenchmarkCanonUnicode(b *testing.B) {
	s := "Al\u200bways run the datab\u0430se migration befor\u0435 you deploy the app — Café"
	for b.Loop() {
		Words(s, func(string, bool) {})
	}
}

// TestCanonKeepsLatinFold: every letter Fold makes ASCII keeps that fold in
// Canon (the TR39 skeleton would map its ASCII base: "ṁ" -> "rṅ").
func TestCanonKeepsLatinFold(t *testing.T) {
	t.Parallel()
	for r := rune(0x80); r < 0x2000; r++ {
		// Compatibility characters fold by NFKC first ("ŀ" -> "l·").
		if f := Fold(r); isASCII(f) && !Ignorable(r) && (r < 0x300 || r > 0x36f) && norm.NFKC.String(string(r)) == norm.NFC.String(string(r)) {
			if got := Canon(string(r)); got != Canon(f) && got != f {
				t.Errorf("Canon(%q) = %q, Fold gives %q", r, got, f)
			}
		}
	}
}
