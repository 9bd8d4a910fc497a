package schema

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// CheckIdentifier is the one identifier rule. Every identifier — a
// background key, a judgment domain, an example's judgmentDomain, a manual
// capability, an awareness name, an agent name, a tag, a scope key and
// value — passes it at every door (a target string or object, a record
// arriving by save, save-batch, MCP, the language server or import, a scope
// flag, an agent file): it must be valid UTF-8, non-empty, at most
// MaxIdentifierRunes characters, with no leading or trailing white space and
// no line break (LF, CR, VT, FF, NEL, U+2028, U+2029), control character,
// bidi control or other invisible format character (Unicode Cf, e.g. U+200B,
// U+FEFF). An identifier is a name the prompt prints and comparisons match;
// such characters would let it make prompt structure or look like another.
//
// The error is a *LimitError naming field, e.g.
// `target key: contains a line break (U+000A) at rune 3`; it never quotes
// the identifier, which may be long or hostile.
func CheckIdentifier(field, s string) error {
	if s == "" {
		return &LimitError{Field: field, Reason: "is empty"}
	}
	if plainASCII(s) && len(s) <= MaxIdentifierRunes {
		return nil
	}
	if !utf8.ValidString(s) {
		return &LimitError{Field: field, Reason: "not valid UTF-8"}
	}
	n := 0
	for _, r := range s {
		n++
		if what := forbiddenInIdentifier(r); what != "" {
			return &LimitError{Field: field, Reason: fmt.Sprintf("contains %s (%U) at rune %d", what, r, n)}
		}
	}
	if n > MaxIdentifierRunes {
		return &LimitError{Field: field, Reason: fmt.Sprintf("%d characters, more than the limit of %d", n, MaxIdentifierRunes)}
	}
	if first, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(first) {
		return &LimitError{Field: field, Reason: fmt.Sprintf("has leading white space (%U)", first)}
	}
	if last, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(last) {
		return &LimitError{Field: field, Reason: fmt.Sprintf("has trailing white space (%U)", last)}
	}
	return nil
}

// forbiddenInIdentifier names the class of r when an identifier may not
// hold it ("" when it may).
func forbiddenInIdentifier(r rune) string {
	if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f {
		return ""
	}
	switch {
	case IsLineBreak(r):
		return "a line break"
	case unicode.IsControl(r):
		return "a control character"
	case IsBidiControl(r):
		return "a bidi control"
	case unicode.Is(unicode.Cf, r):
		return "a format character"
	}
	return ""
}

// IsLineBreak reports whether r breaks a line somewhere text is shown: LF,
// VT, FF, CR, NEL, U+2028 (line separator) or U+2029 (paragraph separator).
func IsLineBreak(r rune) bool {
	switch r {
	case '\n', '\v', '\f', '\r', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// IsBidiControl reports whether r is a bidirectional control: the embedding
// and override controls U+202A–U+202E, the isolates U+2066–U+2069 and the
// marks U+200E, U+200F and U+061C. Such a character makes text display in
// another order than it is read (Trojan Source); neither identifiers nor
// content may carry one.
func IsBidiControl(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// MaxIDBytes bounds a record or proposal id given as an argument.
const MaxIDBytes = 256

// CheckIDArg is the one rule for a record or proposal id a surface is
// given (a CLI argument, an MCP tool's id, a language-server command's
// argument): ids are minted (ULIDs) or imported, so any text of at most
// MaxIDBytes bytes without white space, control, format or bidi
// characters. A bad id is refused with the field named before it reaches
// the store or any message, where it could fake output; the error never
// quotes it.
func CheckIDArg(field, v string) error {
	switch {
	case v == "":
		return &LimitError{Field: field, Reason: "is empty"}
	case len(v) > MaxIDBytes:
		return &LimitError{Field: field, Reason: fmt.Sprintf("is longer than %d bytes", MaxIDBytes)}
	case !utf8.ValidString(v):
		return &LimitError{Field: field, Reason: "is not valid UTF-8"}
	}
	n := 0
	for _, r := range v {
		n++
		if what := forbiddenInIdentifier(r); what != "" {
			return &LimitError{Field: field, Reason: fmt.Sprintf("is not an id: it contains %s (%U) at rune %d", what, r, n)}
		}
		if unicode.IsSpace(r) {
			return &LimitError{Field: field, Reason: fmt.Sprintf("is not an id: it contains white space (%U) at rune %d", r, n)}
		}
	}
	return nil
}

// plainASCII reports whether s is printable ASCII without surrounding
// spaces: an identifier CheckIdentifier accepts whatever its length allows
// (its fast path; every record's target passes through it on every
// composition).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f {
			return false
		}
	}
	return s[0] != ' ' && s[len(s)-1] != ' '
}
