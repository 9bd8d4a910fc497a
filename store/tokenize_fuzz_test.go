package store

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzTokenize checks the tokenizer's invariants: tokens are non-empty,
// hold no separators and no rune that lowercases further, and tokenizing the joined tokens gives
// them back (folding is idempotent).
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Café user's dark-mode.", "Ærø Straße", "e\u0301", "हिन्दी भाषा", "ǅungla", "x86_64 v2.1", "\xff\xfe bad utf8", "0ϓ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("bad token %q from %q", tok, s)
			}
			for _, r := range tok {
				if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r)) {
					t.Fatalf("token %q from %q holds separator %U", tok, s, r)
				}
				if unicode.ToLower(r) != r {
					t.Fatalf("token %q from %q holds %U, which has a lowercase form", tok, s, r)
				}
			}
		}
		if again := Tokenize(strings.Join(toks, " ")); !slices.Equal(again, toks) {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, toks, again)
		}
	})
}

// FuzzLedger decodes arbitrary JSON as a ledger and checks that
// verification and replay never panic, and that a resealed chain verifies.
func FuzzLedger(f *testing.F) {
	f.Add(`[{"seq":1,"op":"write","at":"2026-01-01T00:00:00.000Z","record":{"id":"A","kind":"fact","content":"x"}},{"seq":2,"op":"promote","recordId":"A","at":"2026-01-01T00:00:00.000Z"}]`)
	f.Add(`[{"op":"approve","recordId":"A"},{"op":"corroborate","recordId":"A","support":null},{"op":"supersede","recordId":"B","record":{"id":"B"}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		var entries []LedgerEntry
		if json.Unmarshal([]byte(s), &entries) != nil {
			return
		}
		_ = VerifyChain(entries)
		ReplayState(entries, "9999-12-31T23:59:59.999Z")
		prev := ""
		for i := range entries {
			entries[i] = SealEntry(entries[i], uint64(i+1), prev)
			prev = entries[i].Hash
		}
		if err := VerifyChain(entries); err != nil {
			t.Fatalf("resealed chain does not verify: %v", err)
		}
	})
}
