package schema

import (
	"fmt"
	"strings"
	"unicode"
)

// ScopeSeparators are the characters a scope key or value may not hold:
// the separators of the scope's written form (k=v,... on the command line,
// k=v;k=v in logs and configs).
const ScopeSeparators = ",;="

// CheckScopePart refuses a scope key or value that is empty, has leading or
// trailing space, or holds a separator (ScopeSeparators) or a control
// character: "agent=support-bot;user=x" must not become the agent
// "support-bot;user=x".
func CheckScopePart(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("scope %s is empty", what)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("scope %s %q has leading or trailing space", what, s)
	}
	if i := strings.IndexAny(s, ScopeSeparators); i >= 0 {
		return fmt.Errorf("scope %s %q holds %q: keys and values may not contain %s", what, s, s[i], strings.Join(strings.Split(ScopeSeparators, ""), " "))
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("scope %s %q holds a control character", what, s)
		}
	}
	return nil
}
