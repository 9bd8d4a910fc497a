package store

import "time"

// ViewStamp describes the transaction behind a Batch view, for callers that
// keep state derived from the store across batches (evolve's reconciliation
// cache). Every commit to a store, by any handle or process, changes its
// stamp, so state derived from the store as stamp S is still the store's
// state when a later batch starts at Base == S.
type ViewStamp struct {
	// Base is the stamp of the committed state the transaction started
	// from; Next is the stamp its commit leaves.
	Base, Next string
	// Now is the clock the view's reads judge validity and expiry with.
	Now func() time.Time
}

// Stamper is implemented by Batch views of backends that can stamp their
// state. ViewStamp reports ok=false when it cannot tell, including on a
// store that is not a Batch view and on a batch nested in another (its
// commit is the outer batch's).
type Stamper interface {
	ViewStamp() (ViewStamp, bool)
}

// StampOf returns s's ViewStamp when s implements Stamper and can tell.
func StampOf(s Store) (ViewStamp, bool) {
	if st, ok := s.(Stamper); ok {
		return st.ViewStamp()
	}
	return ViewStamp{}, false
}

// ViewStamp forwards to the guarded view; ok is false when that is no
// Stamper or inside a Batch on the guard.
func (g *BatchGuard) ViewStamp() (ViewStamp, bool) {
	g.mu.Lock()
	nested := g.nested > 0
	g.mu.Unlock()
	if nested {
		return ViewStamp{}, false
	}
	return StampOf(g.Store)
}
