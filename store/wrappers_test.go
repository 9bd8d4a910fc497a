package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// checkedReader is a Reader with its own chain check and agent list, which
// the wrappers must reach; its other methods are not called.
type checkedReader struct {
	Reader
	chainAt []string
	agents  int
}

var errChain = errors.New("chain checked by the backend")

func (c *checkedReader) VerifyChainAt(_ context.Context, at string) error {
	c.chainAt = append(c.chainAt, at)
	return errChain
}

func (c *checkedReader) Agents(context.Context, map[string]string) ([]string, error) {
	c.agents++
	return []string{"b", "a"}, nil
}

// TestWrappersKeepTheBackendsOwnReads: a read-only view and a batch's
// guard answer CheckChain and Agents with the wrapped backend's own
// ChainVerifier and AgentLister, not with a listing of the whole ledger or
// a search of every record (which the fake's nil Reader would panic on).
func TestWrappersKeepTheBackendsOwnReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, wrap := range map[string]func(Reader) Reader{
		"ReadOnly":          func(r Reader) Reader { return ReadOnly(r) },
		"TxGuard":           func(r Reader) Reader { return &TxGuard{Tx: ReadOnly(r)} },
		"ReadOnly(TxGuard)": func(r Reader) Reader { return ReadOnly(&TxGuard{Tx: ReadOnly(r)}) },
	} {
		c := &checkedReader{}
		w := wrap(c)
		if err := CheckChain(ctx, w, "2026-01-01T00:00:00.000Z"); !errors.Is(err, errChain) {
			t.Errorf("%s: CheckChain = %v, want the backend's check", name, err)
		}
		if !slices.Equal(c.chainAt, []string{"2026-01-01T00:00:00.000Z"}) {
			t.Errorf("%s: backend checked at %q", name, c.chainAt)
		}
		names, err := Agents(ctx, w, nil)
		if err != nil || !slices.Equal(names, []string{"a", "b"}) || c.agents != 1 {
			t.Errorf("%s: Agents = %q, %v (backend asked %d times)", name, names, err, c.agents)
		}
	}
}
