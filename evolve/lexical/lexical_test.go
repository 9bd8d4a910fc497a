package lexical

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/agent-ls/agent-ls/store"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"The deploy's window", []string{"deploy", "window"}},
		{"Don't refund digital goods", []string{"refund", "digital", "good"}},
		{"Always check errors from deferred Close calls", []string{"check", "error", "defer", "clos", "call"}},
		{"Handled, handles, handle", []string{"handl", "handl", "handl"}},
		{"Café CRÈME", []string{"caf", "crem"}},
		{"Deploys go out Tuesdays after 14:00 ET", []string{"deploy", "go", "tuesday", "after", "14", "00", "et"}},
		{"You cannot skip tests", []string{"skip", "test"}},
		{"it’s the user’s choice", []string{"user", "choic"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSimilarityBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"refund", "", 0},
		{"refund digital goods", "refund digital goods", 1},
		{"refund digital goods", "ship physical parcels", 0},
		{"refund digital goods", "refund physical goods", 0.5},
	}
	for _, tt := range tests {
		if got := Similarity(tt.a, tt.b); got != tt.want {
			t.Errorf("Similarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Similarity(tt.b, tt.a); got != tt.want {
			t.Errorf("Similarity is not symmetric for %q, %q: %v", tt.b, tt.a, got)
		}
	}
}

// Paraphrase pairs that must and must not count as the same lesson.
func TestNearDuplicate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		// Must match: the same lesson reworded.
		{"Check that errors from deferred Close calls are handled",
			"Make sure errors returned by deferred Close calls are handled", true},
		{"Flag unchecked errors on deferred Close calls",
			"Always flag unchecked errors from deferred Close() calls", true},
		{"Refunds over $50 need a manager's approval",
			"refunds over 50 dollars need manager approval", true},
		{"Run database migrations before deploying the app",
			"Always run the database migration before you deploy the app", true},
		{"Ask before deleting any resource in prod",
			"Always ask before deleting resources in prod", true},
		{"Deploys go out Tuesdays after 14:00 ET", "deploys go out on Tuesdays after 14:00 ET.", true},
		// Must not match: different lessons sharing some words.
		{"Never refund digital goods", "Always refund damaged goods", false},
		{"Use tabs for indentation", "Use spaces for indentation", false},
		{"Check errors from deferred Close calls", "Check for nil pointer dereferences in handlers", false},
		// Known limit: one differing word in a short sentence still reads as a
		// near-duplicate; keyed (background) saves therefore demand identical
		// tokens before corroborating (see evolve).
		{"Deploys go out Tuesdays after 14:00 ET", "Deploys go out Thursdays after 14:00 ET", true},
		// Must not match: opposites are contradictions, not duplicates.
		{"Always refund within 30 days", "Never refund within 30 days", false},
		{"Run migrations before deploying", "Run migrations after deploying", false},
		{"", "Use tabs", false},
	}
	for _, tt := range tests {
		if got := NearDuplicate(tt.a, tt.b); got != tt.want {
			t.Errorf("NearDuplicate(%q, %q) = %v, want %v (similarity %.2f)", tt.a, tt.b, got, tt.want, Similarity(tt.a, tt.b))
		}
		if got := NearDuplicate(tt.b, tt.a); got != tt.want {
			t.Errorf("NearDuplicate is not symmetric for (%q, %q)", tt.b, tt.a)
		}
	}
}

func TestContradicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b   string
		want   bool
		whyHas string
	}{
		{"Always refund within 30 days", "Never refund within 30 days", true, `"never"`},
		{"Flag missing error checks on deferred Close calls",
			"Don't flag missing error checks on deferred Close calls", true, `"not"`},
		{"You must squash commits before merging", "You must not squash commits before merging", true, `"not"`},
		{"Run migrations before deploying", "Run migrations after deploying", true, `"after"`},
		{"Allow refunds without a receipt under $20", "Forbid refunds without a receipt under $20", true, `forbid`},
		{"Approve refunds for damaged items", "Deny refunds for damaged items", true, `"deny"`},
		{"Enable feature flags in staging", "Disable feature flags in staging", true, `"disable"`},
		{"Do not deploy on Fridays", "Never deploy on Fridays", false, ""},
		{"Never refund digital goods", "Always refund damaged goods", false, ""},
		{"Never deploy on Fridays", "Always page the on-call engineer on Fridays", false, ""},
		{"Use tabs", "Use tabs", false, ""},
		{"", "Never", false, ""},
		// Known limit: a double negative reads as affirmative.
		{"Never skip the tests", "Always run the tests", false, ""},
	}
	for _, tt := range tests {
		got, why := Contradicts(tt.a, tt.b)
		if got != tt.want {
			t.Errorf("Contradicts(%q, %q) = %v (%s), want %v", tt.a, tt.b, got, why, tt.want)
			continue
		}
		if got && !strings.Contains(why, tt.whyHas) {
			t.Errorf("Contradicts(%q, %q) why = %q, want it to mention %s", tt.a, tt.b, why, tt.whyHas)
		}
		if !got && why != "" {
			t.Errorf("Contradicts(%q, %q) = false with a reason %q", tt.a, tt.b, why)
		}
		if g2, _ := Contradicts(tt.b, tt.a); g2 != got {
			t.Errorf("Contradicts is not symmetric for (%q, %q)", tt.b, tt.a)
		}
	}
}

func FuzzLexical(f *testing.F) {
	f.Add("Don't refund digital goods", "Always refund within 30 days")
	f.Add("it’s a café's ''' n't", "cannot")
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Similarity(a, b)
		if s < 0 || s > 1 {
			t.Fatalf("Similarity out of range: %v", s)
		}
		if NearDuplicate(a, b) {
			if c, _ := Contradicts(a, b); c {
				t.Fatalf("near-duplicate and contradiction at once")
			}
		}
		ta, tb := Analyze(a), Analyze(b)
		// The sorted-slice core answers what the map core answers.
		ca, _ := analyze(a)
		cb, _ := analyze(b)
		if got, want := sortedJaccard(ta.str.core, tb.str.core), jaccard(keySet(ca), keySet(cb)); got != want {
			t.Fatalf("core similarity %v from the analyzed texts, %v from the maps", got, want)
		}
		if TextSimilarity(ta, tb) != s || !slices.Equal(ta.TokenList(), Tokens(a)) {
			t.Fatalf("analyzed text: similarity %v, tokens %q; strings: %v, %q", TextSimilarity(ta, tb), ta.TokenList(), s, Tokens(a))
		}
		// The compact form answers what the string form answers.
		var in Interner
		checkSameAnswers(t, []*Text{ta, tb}, []*Text{in.Analyze(a), in.Analyze(b)})
	})
}

func keySet(m map[string]int8) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// TestInterner: an Interner's Texts compare exactly as Analyze's, and a
// word two texts share is stored once.
func TestInterner(t *testing.T) {
	t.Parallel()
	texts := []string{
		"Never deploy on Fridays without a rollback plan",
		"Always deploy on Fridays with a rollback plan",
		"Don't skip the canary; it's cheap",
		"Check the deploy logs before paging anyone",
		"",
	}
	var in Interner
	got := make([]*Text, len(texts))
	for i, s := range texts {
		got[i] = in.Analyze(s)
		if g, want := got[i].form(), Analyze(s); !sameForm(g, want.str) || got[i].anyPos != want.anyPos || got[i].anyNeg != want.anyNeg {
			t.Errorf("Interner.Analyze(%q) = %+v, want %+v", s, g, want.str)
		}
	}
	for i := range texts {
		for j := range texts {
			if a, b := TextSimilarity(got[i], got[j]), TextSimilarity(Analyze(texts[i]), Analyze(texts[j])); a != b {
				t.Errorf("similarity %d/%d: %v, want %v", i, j, a, b)
			}
		}
	}
	// "deploy" is a token of texts 0, 1 and 3: one string.
	find := func(x *Text, w string) string {
		for _, s := range x.TokenList() {
			if s == w {
				return s
			}
		}
		t.Fatalf("no token %q in %v", w, x.TokenList())
		return ""
	}
	a, b, c := find(got[0], "deploy"), find(got[1], "deploy"), find(got[3], "deploy")
	if unsafe.StringData(a) != unsafe.StringData(b) || unsafe.StringData(a) != unsafe.StringData(c) {
		t.Error("the word deploy is stored more than once")
	}
	if set := got[0].TokenSet(); unsafe.StringData(find(got[0], "deploy")) != unsafe.StringData(set[slices.Index(set, "deploy")]) {
		t.Error("the token list and the token set hold different copies")
	}
}

// TestFoldsAsSearch (issue 21 item 8): similarity folds every character the
// way store search does (one text kernel): a word spelled with accents the
// search tokenizer folds is the same word here.
func TestFoldsAsSearch(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"Tȟe ǘpdate ḱeeps ṕods", "the update keeps pods"},
		{"Deploy ǰobs ẑero-downtime ǎt ṁidnight", "deploy jobs zero-downtime at midnight"},
		{"Straße ḉache", "strasse cache"},
	} {
		if s := Similarity(pair[0], pair[1]); s != 1 {
			t.Errorf("Similarity(%q, %q) = %.2f, want 1 (search folds them alike: %q, %q)", pair[0], pair[1], s,
				store.Tokenize(pair[0]), store.Tokenize(pair[1]))
		}
	}
}

// TestContradictionAcrossClauses (issue 30, reproduction 2): negation is
// scoped to its clause, so "Never page anyone, just disable alerts" is not
// read as a double negative of "page".
func TestContradictionAcrossClauses(t *testing.T) {
	t.Parallel()
	const p = " for the atlas billing worker service in region eu-west-1 during the quarterly release train"
	tests := []struct {
		a, b string
		want bool
	}{
		{"Always page the owner first" + p, "Never page anyone, just disable alerts" + p, true},
		{"Always refund within 30 days", "Never refund within 30 days", true},
		{"Deploy on Mondays, not on Fridays", "Deploy on Fridays", true},
		{"Deploy on Mondays, not on Fridays", "Deploy on Mondays", false},
		{"Do not deploy on Fridays, deploy on Mondays", "Deploy on Mondays", false},
		{"Always run the tests, never skip them", "Run the tests", false},
		{"Always run the tests, never skip them", "Skip the tests", true},
		{"Refunds are denied after 30 days", "Refunds are approved after 30 days", true},
	}
	for _, tt := range tests {
		for _, pair := range [][2]string{{tt.a, tt.b}, {tt.b, tt.a}} {
			if got, why := Contradicts(pair[0], pair[1]); got != tt.want {
				t.Errorf("Contradicts(%q, %q) = %v (%s), want %v", pair[0], pair[1], got, why, tt.want)
			}
			if tt.want && NearDuplicate(pair[0], pair[1]) {
				t.Errorf("NearDuplicate(%q, %q): a contradiction is never the same lesson", pair[0], pair[1])
			}
		}
	}
}

// TestInvisibleAndConfusable (issue 30 reproduction 3, issue 31 item 11):
// format characters and confusable letters do not change a comparison.
func TestInvisibleAndConfusable(t *testing.T) {
	t.Parallel()
	const authored = "Never deploy with failing health checks"
	for _, s := range []string{
		"Always deploy with failing health checks",
		"Al\u200bways deploy with failing health checks",
		"Alw\u0430ys d\u0435pl\u043ey with f\u0430iling h\u0435alth ch\u0435cks",
		"\u0410lways deploy\u2060 with failing health che\u200dcks",
		"\uff21lways deploy with failing health checks",
	} {
		if c, _ := Contradicts(s, authored); !c {
			t.Errorf("Contradicts(%q, %q) = false", s, authored)
		}
		if got, want := Tokens(s), Tokens("Always deploy with failing health checks"); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", s, got, want)
		}
	}
	if !NearDuplicate("N\u0435ver deploy with failing health checks", authored) {
		t.Error("a confusable spelling of a line is the same lesson")
	}
}
