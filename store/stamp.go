package store

import "time"

// ViewStamp describes the transaction behind an Update's Tx, for callers that
// keep state derived from the store across batches (evolve's reconciliation
// cache). Every commit to a store, by any handle or process, changes its
// stamp, so state derived from the store as stamp S is still the store's
// state when a later transaction starts at Base == S.
type ViewStamp struct {
	// Base is the stamp of the committed state the transaction started
	// from; Next is the stamp its commit leaves.
	Base, Next string
	// Now is the clock the view's reads judge validity and expiry with.
	Now func() time.Time
}

// Stamper is implemented by the Tx an Update hands to its function, on
// backends that can stamp their state. ViewStamp reports ok=false when it
// cannot tell, including on a store that is not such a Tx and on an Update
// nested in another (its commit is the outer one's).
type Stamper interface {
	ViewStamp() (ViewStamp, bool)
}

// StampOf returns s's ViewStamp when s implements Stamper and can tell.
func StampOf(s Tx) (ViewStamp, bool) {
	if st, ok := s.(Stamper); ok {
		return st.ViewStamp()
	}
	return ViewStamp{}, false
}

// ViewStamp forwards to the guarded Tx; ok is false when that is no
// Stamper or inside an Update on the guard.
func (g *TxGuard) ViewStamp() (ViewStamp, bool) {
	g.mu.Lock()
	nested := g.nested > 0
	g.mu.Unlock()
	if nested {
		return ViewStamp{}, false
	}
	return StampOf(g.Tx)
}
