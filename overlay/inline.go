package overlay

import (
	"strings"
	"unicode/utf8"
)

// Content is untrusted text: a record renders inside its slot and never
// changes the prompt's structure. Every piece of record content the overlay
// and the recall block place in the prompt goes through Inline first, which
// folds it into one line and escapes a leading Markdown block marker; the
// stored record is left as it is (rendering is where structure is made, and
// imported or older records get the same treatment). See docs/TRUST.md.

// Inline is s as one line of prompt text: every line break (CR, LF, CRLF,
// VT, FF, NEL, U+2028, U+2029) and the white space around it folds into one
// space, surrounding white space is trimmed, and a start that Markdown
// would read as structure — a heading (#), list item (-, *, +, 1. or 1)),
// quote (>), table (|), fence (``` or ~~~), horizontal rule or setext
// underline (---, ***, ___, ===) — is escaped with a backslash. Text inside
// a line is left alone: it cannot start a line. HTML is not Markdown
// structure here; every HTML view escapes content itself.
func Inline(s string) string {
	if !needsInline(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for _, r := range s {
		if isBreak(r) || r == ' ' || r == '\t' {
			pendingSpace = true
			continue
		}
		if pendingSpace && b.Len() > 0 {
			b.WriteByte(' ')
		}
		pendingSpace = false
		b.WriteRune(r)
	}
	return escapeLead(b.String())
}

// needsInline reports whether s would change under Inline.
func needsInline(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsAny(s, "\r\n\v\f\t\u0085\u2028\u2029") || strings.Contains(s, "  ") {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	return escapeLead(s) != s
}

func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// escapeLead escapes a Markdown block marker at the start of a line.
func escapeLead(s string) string {
	if s == "" {
		return s
	}
	r, _ := utf8.DecodeRuneInString(s)
	switch r {
	case '#', '-', '*', '+', '>', '|', '`', '~', '_', '=', '\\':
		return `\` + s
	}
	// An ordered list item: digits, then '.' or ')'.
	i := 0
	for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + `\` + s[i:]
	}
	return s
}
