package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// Voucher is implemented by stores that can check records they delivered
// against the ledger, at a cost proportional to the records checked (not to
// the store): what a render delivers is vouched for before it reaches an
// agent.
type Voucher interface {
	// Vouch checks each record as given (its content and every other
	// field) and its stored promotion row against the record's ledger
	// entries. The first record that does not match is an
	// *UnvouchedError.
	Vouch(ctx context.Context, recs []schema.MemoryRecord) error
}

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

// VouchFor runs s's Vouch when s is a Voucher; other stores (in memory,
// with no bytes to edit) pass.
func VouchFor(ctx context.Context, s Store, recs []schema.MemoryRecord) error {
	if v, ok := s.(Voucher); ok && len(recs) > 0 {
		return v.Vouch(ctx, recs)
	}
	return nil
}

// VouchRecord checks rec, as a backend delivered it, and prom, its stored
// promotion row (nil when none), against entries: the ledger entries about
// rec (store.MatchLedger's rule), in sequence order. Each entry must match
// its own hash and be about rec; replaying them (ApplyEntry) must give rec
// field for field and the same promotion row. The error is an
// *UnvouchedError.
func VouchRecord(rec schema.MemoryRecord, prom *Promotion, entries []LedgerEntry) error {
	st := NewState()
	for _, e := range entries {
		if e.Hash != HashEntry(e) {
			return &UnvouchedError{ID: rec.ID, Detail: fmt.Sprintf("ledger entry %d does not match its hash", e.Seq)}
		}
		if e.RecordID != rec.ID && (e.Record == nil || e.Record.ID != rec.ID) {
			return &UnvouchedError{ID: rec.ID, Detail: fmt.Sprintf("ledger entry %d is about another record", e.Seq)}
		}
		ApplyEntry(&st, e)
	}
	want, ok := st.Records[rec.ID]
	if !ok {
		return &UnvouchedError{ID: rec.ID, Detail: "no ledger entry created it"}
	}
	if f := RecordFieldsDiffer(want, rec); len(f) > 0 {
		return &UnvouchedError{ID: rec.ID, Detail: "its " + strings.Join(f, ", ") + " differ(s) from the ledger's"}
	}
	wp, promoted := st.Promotions[rec.ID]
	switch {
	case prom != nil && !promoted:
		return &UnvouchedError{ID: rec.ID, Detail: "a promotion row no ledger entry made"}
	case prom == nil && promoted:
		return &UnvouchedError{ID: rec.ID, Detail: "the ledger promoted it, but its promotion row is missing"}
	case prom != nil && !sameJSON(wp, *prom):
		return &UnvouchedError{ID: rec.ID, Detail: "its promotion row differs from the ledger's"}
	}
	return nil
}
