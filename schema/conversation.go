package schema

import (
	"fmt"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// NormalizeConversationID is the one normalization of a conversation id,
// applied on every surface before distinct conversations are counted
// (recurrence across distinct conversations is the bar of the earned tier):
// Unicode NFC, surrounding white space trimmed, case-folded, NFC again. "c1",
// "C1" and "c1 " are one conversation. An id carrying a control character
// (a line break, U+2028 included, a tab, NUL, ...) or an invisible format character (a
// zero-width space or joiner, a byte order mark, a bidi override: each makes
// a visibly identical id a distinct conversation) is refused; "" stays ""
// (no conversation).
func NormalizeConversationID(id string) (string, error) {
	// The characters of the identifier rule (CheckIdentifier); surrounding
	// white space is trimmed rather than refused, and the length is the
	// id limit's (Limits.ID).
	n := 0
	for _, r := range id {
		n++
		if what := forbiddenInIdentifier(r); what != "" {
			return "", &ValueError{Name: "conversation id", Value: id, Why: fmt.Sprintf("contains %s (%U) at rune %d", what, r, n)}
		}
	}
	s := strings.TrimSpace(norm.NFC.String(id))
	return norm.NFC.String(cases.Fold().String(s)), nil
}

// conversationKey is the key distinct conversations are counted by: the
// normalized id, or the id itself when it does not normalize (a stored id
// from before normalization).
func conversationKey(id string) string {
	if k, err := NormalizeConversationID(id); err == nil {
		return k
	}
	return id
}
