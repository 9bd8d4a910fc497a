package engine

import (
	"fmt"

	"github.com/agent-ls/agent-ls/store"
)

// LimitWant is what every surface says of a limit parameter's values
// (the CLI's --limit, MCP's limit): Limit's rule.
const LimitWant = "want a count, 0 or -1 for no limit"

// LimitError is a limit that Limit refuses: a negative number other than
// -1. It names the parameter by the neutral "limit"; a surface that names
// it otherwise words it with LimitWant.
type LimitError struct{ N int }

func (e *LimitError) Error() string { return fmt.Sprintf("limit %d: %s", e.N, LimitWant) }

// Unwrap is store.ErrInvalid.
func (e *LimitError) Unwrap() error { return store.ErrInvalid }

// Limit is the one rule of a requested limit on every surface: N > 0 is
// at most N; 0 and -1 (the older spelling) are no limit, returned as 0;
// any other negative number is a *LimitError. A surface's default, when
// the parameter is not given, is the surface's own.
func Limit(n int) (int, error) {
	switch {
	case n > 0:
		return n, nil
	case n == 0 || n == -1:
		return 0, nil
	}
	return 0, &LimitError{N: n}
}

// QueryLimit is a limit as Limit returns it (0 no limit) in the form a
// store.Query takes.
func QueryLimit(n int) *int {
	if n <= 0 {
		return store.Limit(store.Unlimited)
	}
	return store.Limit(n)
}
