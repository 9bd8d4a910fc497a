package lexical

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// checkSameAnswers: the texts of got (any forms) answer every question on
// Texts as the string-form texts of want, pair by pair, mixed pairs too.
func checkSameAnswers(t *testing.T, want, got []*Text) {
	t.Helper()
	for i := range want {
		if !slices.Equal(got[i].TokenList(), want[i].TokenList()) || !slices.Equal(got[i].TokenSet(), want[i].TokenSet()) {
			t.Fatalf("text %d: tokens %q set %q, want %q %q", i, got[i].TokenList(), got[i].TokenSet(), want[i].TokenList(), want[i].TokenSet())
		}
		if !sameForm(got[i].form(), want[i].form()) || got[i].anyPos != want[i].anyPos || got[i].anyNeg != want[i].anyNeg {
			t.Fatalf("text %d: form %+v, want %+v", i, got[i].form(), want[i].form())
		}
		if got[i].setLen() != want[i].setLen() || got[i].coreLen() != want[i].coreLen() ||
			!slices.Equal(got[i].setWords(), want[i].setWords()) || !slices.Equal(got[i].coreWords(), want[i].coreWords()) {
			t.Fatalf("text %d: set/core words differ", i)
		}
		for j := range want {
			for _, p := range [][2]*Text{{got[i], got[j]}, {got[i], want[j]}, {want[i], got[j]}} {
				if a, b := TextSimilarity(p[0], p[1]), TextSimilarity(want[i], want[j]); a != b {
					t.Fatalf("similarity %d/%d: %v, want %v", i, j, a, b)
				}
				c1, w1 := TextContradicts(p[0], p[1])
				c2, w2 := TextContradicts(want[i], want[j])
				if c1 != c2 || w1 != w2 {
					t.Fatalf("contradicts %d/%d: %v %q, want %v %q", i, j, c1, w1, c2, w2)
				}
				if a, b := TextNearDuplicate(p[0], p[1]), TextNearDuplicate(want[i], want[j]); a != b {
					t.Fatalf("near-duplicate %d/%d: %v, want %v", i, j, a, b)
				}
			}
		}
	}
}

// sameForm reports whether two string forms hold the same words (nil and
// empty alike).
func sameForm(a, b *strForm) bool {
	return slices.Equal(a.tokens, b.tokens) && slices.Equal(a.set, b.set) && slices.Equal(a.core, b.core) &&
		slices.Equal(a.pol, b.pol) && slices.Equal(a.markers, b.markers)
}

// randomTexts draws n texts from a small vocabulary with negators,
// antonyms, clause breaks, contractions and stopwords, so that pairs
// overlap, contradict and near-duplicate often.
func randomTexts(r *rand.Rand, n int) []string {
	vocab := strings.Fields("deploy deploys deployed canary rollback queue review tests staging prod cache never not no always don't cannot " +
		"allow forbid enable disable before after skip run approve deny the a of and it's ignore flag more less Café cafe")
	seps := []string{" ", " ", " ", ", ", "; ", ". ", " - "}
	out := make([]string, n)
	for i := range out {
		if i > 0 && r.IntN(6) == 0 {
			out[i] = out[r.IntN(i)]
			continue
		}
		var b strings.Builder
		for k := range r.IntN(12) {
			if k > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		out[i] = b.String()
	}
	return out
}

// TestCompactMatchesStringForm is the differential test of the compact
// form: over random texts, Texts of one Interner (and mixed with Analyze's
// and another Interner's) answer similarity, contradiction (and its why),
// near-duplicates, tokens and sets exactly as Analyze's Texts do, and the
// indexes offer the same candidates for both forms.
func TestCompactMatchesStringForm(t *testing.T) {
	t.Parallel()
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 35))
		src := randomTexts(r, 2+r.IntN(40))
		var in, other Interner
		want := make([]*Text, len(src))
		got := make([]*Text, len(src))
		for i, s := range src {
			want[i] = Analyze(s)
			if i%5 == 4 {
				got[i] = other.Analyze(s) // another table: compared by word
			} else {
				got[i] = in.Analyze(s)
			}
		}
		checkSameAnswers(t, want, got)
		wi, gi := NewContradictionIndex(want), NewContradictionIndex(got)
		ws, gs := NewSimIndex(want, NearDuplicateThreshold), NewSimIndex(got, NearDuplicateThreshold)
		for i := range want {
			var a, b []int
			wi.Candidates(want[i], func(k int) { a = append(a, k) })
			gi.Candidates(got[i], func(k int) { b = append(b, k) })
			if !slices.Equal(a, b) {
				t.Fatalf("seed %d: contradiction candidates of %d: %v, want %v", seed, i, b, a)
			}
			if a, b := ws.Probe(want[i], 0), gs.Probe(got[i], 0); !slices.Equal(a, b) {
				t.Fatalf("seed %d: similarity candidates of %d: %v, want %v", seed, i, b, a)
			}
		}
	}
}

// TestCompactReadWhileInterning: compact Texts are compared and read
// while their Interner analyzes more texts (the language server's lint
// runs share one); run with -race.
func TestCompactReadWhileInterning(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 35))
	src := randomTexts(r, 200)
	var in Interner
	var mu sync.Mutex
	first := make([]*Text, 20)
	for i := range first {
		first[i] = in.Analyze(src[i])
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, s := range src[20:] {
			mu.Lock()
			in.Analyze(s)
			mu.Unlock()
		}
	})
	for range 20 {
		for i := range first {
			_ = first[i].TokenList()
			_, _ = TextContradicts(first[i], first[(i+1)%len(first)])
			_ = NewSimIndex(first, NearDuplicateThreshold).Probe(first[i], 0)
		}
	}
	wg.Wait()
}
