package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// UnvouchedError names a record whose stored bytes its ledger entries do
// not vouch for: it is never rendered. It wraps ErrCorrupt.
type UnvouchedError struct {
	ID     string
	Detail string
}

func (e *UnvouchedError) Error() string {
	return fmt.Sprintf("record %s does not match the ledger (%s): refusing to render it; run agent-ls memory ledger --verify", e.ID, e.Detail)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *UnvouchedError) Unwrap() error { return ErrCorrupt }

// VouchFor runs s's Vouch on recs; no records is nothing to check.
func VouchFor(ctx context.Context, s Reader, recs []schema.MemoryRecord) error {
	if len(recs) == 0 {
		return nil
	}
	return s.Vouch(ctx, recs)
}

// VouchRecord checks rec, as a backend delivered it, and prom, its stored
// promotion row (nil when none), against entries: the ledger entries about
// rec (store.MatchLedger's rule), in sequence order. Each entry must match
// its own hash and be about rec; replaying them (ApplyEntry) must give rec
// field for field and the same promotion row. The error is an
// *UnvouchedError.
func VouchRecord(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry) error {
	for _, e := range entries {
		if e.Hash != HashEntry(e) {
			return &UnvouchedError{ID: rec.ID, Detail: fmt.Sprintf("ledger entry %d does not match its hash", e.Seq)}
		}
	}
	return VouchChecked(rec, prom, entries)
}

// VouchChecked is VouchRecord for entries whose hashes the caller already
// checked (EntryFromJSON, from their stored bytes).
func VouchChecked(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry) error {
	var v Voucher
	return v.Check(rec, prom, entries)
}

// Voucher is VouchChecked for many records one after another: it reuses
// its replay state (emptied for each record) instead of allocating one
// per record. Its zero value is ready; one goroutine uses it.
type Voucher struct {
	st State
	// The records and promotion rows compared, kept here so that
	// comparing them does not allocate copies.
	a, b   schema.MemoryRecord
	pa, pb Promotion
}

// Check is VouchChecked.
func (v *Voucher) Check(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry) error {
	return v.check(rec, prom, entries, false)
}

// CheckOwned is Check for entries the caller decoded for this check alone
// and gives away: the replay takes the records they carry as they are
// (scope maps, targets, slices) instead of copying each, and may change
// them; the caller must not use the entries afterwards. The check itself
// is Check's: the same replay of the same values, compared the same way.
func (v *Voucher) CheckOwned(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry) error {
	return v.check(rec, prom, entries, true)
}

func (v *Voucher) check(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry, owned bool) error {
	if v.st.Records == nil {
		v.st = NewState()
	} else {
		clear(v.st.Records)
		clear(v.st.Promotions)
		clear(v.st.Proposals)
		clear(v.st.Tokens)
	}
	st := &v.st
	for _, e := range entries {
		if e.RecordID != rec.ID && (e.Record == nil || e.Record.ID != rec.ID) {
			return &UnvouchedError{ID: rec.ID, Detail: fmt.Sprintf("ledger entry %d is about another record", e.Seq)}
		}
		applyEntry(st, e, owned)
	}
	want, ok := st.Records[rec.ID]
	if !ok {
		return &UnvouchedError{ID: rec.ID, Detail: "no ledger entry created it"}
	}
	v.a, v.b = want, rec
	if sameRecord(&v.a, &v.b) {
		// Equal: no field differs.
	} else if f := RecordFieldsDiffer(want, rec); len(f) > 0 {
		return &UnvouchedError{ID: rec.ID, Detail: "its " + strings.Join(f, ", ") + " differ(s) from the ledger's"}
	}
	wp, promoted := st.Promotions[rec.ID]
	switch {
	case prom != nil && !promoted:
		return &UnvouchedError{ID: rec.ID, Detail: "a promotion row no ledger entry made"}
	case prom == nil && promoted:
		return &UnvouchedError{ID: rec.ID, Detail: "the ledger promoted it, but its promotion row is missing"}
	case prom != nil && !v.samePromotion(wp, *prom):
		return &UnvouchedError{ID: rec.ID, Detail: "its promotion row differs from the ledger's"}
	}
	return nil
}

// samePromotion reports whether two promotion rows are equal: deeply
// equal, or else encoding alike.
func (v *Voucher) samePromotion(a, b Promotion) bool {
	v.pa, v.pb = a, b
	return reflect.DeepEqual(&v.pa, &v.pb) || sameJSON(a, b)
}

// sameRecord reports whether two records are equal (a nil and an empty
// scope are the same): deeply equal, or else encoding alike.
func sameRecord(a, b *schema.MemoryRecord) bool {
	if a.Scope == nil {
		a.Scope = map[string]string{}
	}
	if b.Scope == nil {
		b.Scope = map[string]string{}
	}
	return reflect.DeepEqual(a, b) || sameJSON(a, b)
}

// PromotedByLedger reports whether entries, the ledger entries about
// record id in sequence order (MatchLedger's rule), leave it promoted and,
// as their replay has it, valid at now and kept by the agent's view of the
// scope filter (AgentFilter's filter and keep): a record a render of that
// scope must deliver. A backend's Promoted checks with it the records the
// ledger promoted that have no promotion row (MissingPromotion).
func PromotedByLedger(id string, entries []LedgerEntry, now string, filter map[string]string, keep func(map[string]string) bool) bool {
	st := NewState()
	for _, e := range entries {
		ApplyEntry(&st, e)
	}
	rec, ok := st.Records[id]
	if _, promoted := st.Promotions[id]; !ok || !promoted {
		return false
	}
	return rec.Valid(now) && MatchScope(rec.Scope, filter) && keep(rec.Scope)
}

// MissingPromotion is the error of a render whose store lacks the
// promotion row of record id, which the ledger promoted (PromotedByLedger):
// an *UnvouchedError, never a line silently dropped.
func MissingPromotion(id string) error {
	return &UnvouchedError{ID: id, Detail: "the ledger promoted it, but its promotion row is missing"}
}
