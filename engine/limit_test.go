package engine

import (
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

// TestLimit: the one limit rule of every surface: N > 0 at most N, 0 and
// -1 no limit (0), another negative number a *LimitError (store.ErrInvalid)
// worded without a surface's parameter name.
func TestLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want int }{{1, 1}, {50, 50}, {0, 0}, {-1, 0}} {
		if got, err := Limit(tc.in); err != nil || got != tc.want {
			t.Errorf("Limit(%d) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	_, err := Limit(-2)
	var le *LimitError
	if !errors.As(err, &le) || le.N != -2 || !errors.Is(err, store.ErrInvalid) || err.Error() != "limit -2: "+LimitWant {
		t.Errorf("Limit(-2) error %v", err)
	}
	if l := QueryLimit(0); *l != store.Unlimited {
		t.Errorf("QueryLimit(0) = %d", *l)
	}
	if l := QueryLimit(7); *l != 7 {
		t.Errorf("QueryLimit(7) = %d", *l)
	}
}
