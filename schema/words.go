package schema

import (
	"fmt"
	"strings"
)

// Count is n with word, plural unless n is 1: "1 distinct conversation",
// "2 distinct conversations". Every surface's messages use it.
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
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
