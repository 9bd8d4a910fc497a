package textkernel

import (
	"strings"
	"unicode/utf8"
)

// Clip is the one truncation for showing text in a line (a hint, a code
// action's title, a listing, an error quoting input): white space runs
// collapse to one space, and text longer than n characters (runes) keeps
// its first n-1 and ends in "…". It never splits a UTF-8 character.
func Clip(s string, n int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), n)
}

// Truncate is Clip without collapsing white space (for text quoted with its
// control characters escaped): at most n characters, ending in "…" when
// cut, never splitting a UTF-8 character.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, i := 0, 0
	for i = range s {
		if cut == n-1 {
			break
		}
		cut++
	}
	return s[:i] + "…"
}
