package schema

import (
	"fmt"
	"strings"
)

// Count is n with word, plural unless n is 1: "1 record", "2 records",
// "3 ledger entries". Every surface's messages use it.
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") && len(word) > 1 && !strings.ContainsRune("aeiou", rune(word[len(word)-2])) {
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Article is "an" before a vowel sound's letter, else "a": "an example",
// "an awareness", "a judgment".
func Article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

// Conversations is the one phrase every surface (CLI, inlay hints, hover,
// code lenses, the lens, evolve's guidance) gives a count of distinct
// conversations in: "1 conversation", "2 conversations".
func Conversations(n int) string { return Count(n, "conversation") }

// ConversationsOf is progress toward a recurrence bar in the same words:
// "1 of 2 conversations".
func ConversationsOf(have, need int) string {
	return fmt.Sprintf("%d of %s", have, Conversations(need))
}
