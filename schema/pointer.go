package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// EscapePointer escapes one JSON Pointer reference token (RFC 6901): "~"
// becomes "~0" and "/" becomes "~1".
func EscapePointer(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}

// UnescapePointer undoes EscapePointer.
func UnescapePointer(token string) string {
	if !strings.Contains(token, "~") {
		return token
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
}

// JoinPointer appends unescaped tokens to a pointer: JoinPointer("/a", "b/c", 0)
// is "/a/b~1c/0". Tokens may be strings or ints.
func JoinPointer(ptr string, tokens ...any) string {
	var b strings.Builder
	b.WriteString(ptr)
	for _, t := range tokens {
		b.WriteByte('/')
		switch t := t.(type) {
		case int:
			b.WriteString(strconv.Itoa(t))
		case string:
			b.WriteString(EscapePointer(t))
		default:
			b.WriteString(EscapePointer(fmt.Sprint(t)))
		}
	}
	return b.String()
}

// SplitPointer returns the unescaped tokens of a pointer; "" (the root) has
// none.
func SplitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = UnescapePointer(p)
	}
	return parts
}

// ParentPointer returns the pointer one level up ("" for the root).
func ParentPointer(ptr string) string {
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return ""
	}
	return ptr[:i]
}
