package storetest

import (
	"context"
	"slices"
	"sync"

	"github.com/agent-ls/agent-ls/store"
)

// LedgerReads is a store.Reader that records the filter of each Ledger
// call it passes on: for tests of what a caller (a follower, a page) reads
// of a ledger. Safe for concurrent use.
type LedgerReads struct {
	store.Reader
	mu   sync.Mutex
	seen []store.LedgerFilter
}

// Ledger records f and reads the wrapped Reader's ledger.
func (l *LedgerReads) Ledger(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	l.mu.Lock()
	l.seen = append(l.seen, f)
	l.mu.Unlock()
	return l.Reader.Ledger(ctx, f)
}

// Filters returns the filters of the Ledger calls so far, in order.
func (l *LedgerReads) Filters() []store.LedgerFilter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}
