package schema

import (
	"fmt"
	"strings"
)

// ScopeSeparators are the characters a scope key or value may not hold:
// the separators of the scope's written form (k=v,... on the command line,
// k=v;k=v in logs and configs).
const ScopeSeparators = ",;="

// CheckScopePart refuses a scope key or value that is empty, has leading or
// trailing space, holds a separator (ScopeSeparators: "agent=support-bot;user=x"
// must not become the agent "support-bot;user=x") or breaks the identifier
// rule (CheckIdentifier). what is the part's noun as the caller words it
// ("scope key"; the CLI's --scope says "key": "--scope: key ...").
func CheckScopePart(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%s %s has leading or trailing space", what, quoteShort(s))
	}
	if i := strings.IndexAny(s, ScopeSeparators); i >= 0 {
		return fmt.Errorf("%s %s holds %q: keys and values may not contain %s", what, quoteShort(s), s[i], strings.Join(strings.Split(ScopeSeparators, ""), " "))
	}
	return CheckIdentifier(what+" "+quoteShort(s), s)
}
