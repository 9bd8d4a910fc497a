package store

import "github.com/agent-ls/agent-ls/textkernel"

// Tokenize turns text into search tokens, the single tokenizer every backend
// uses for both records and queries: textkernel.Tokens (lowercase, accents
// folded, split on anything but letters, digits and spacing marks; no
// stopwords, no stemming). The PostgreSQL backend persists these tokens; the
// kernel keeps them the same for every character the store's earlier
// tokenizer folded (see package textkernel).
func Tokenize(s string) []string { return textkernel.Tokens(s) }

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
