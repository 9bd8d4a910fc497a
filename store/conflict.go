package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// ConflictKey is the identity of a conflict: its distinct record ids,
// sorted and joined, so one pair is one conflict whichever renders. It
// returns ErrInvalid for fewer than two distinct ids.
func ConflictKey(c ConflictInfo) (string, error) {
	ids := slices.Clone(c.Records)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) < 2 || ids[0] == "" {
		return "", fmt.Errorf("record conflict: %w: want two or more distinct record ids, got %q", ErrInvalid, c.Records)
	}
	return strings.Join(ids, "\x00"), nil
}

// ConflictEntry is the ledger entry RecordConflict appends at now.
func ConflictEntry(c ConflictInfo, actor Actor, now string) LedgerEntry {
	return LedgerEntry{At: now, Op: OpConflict, RecordID: c.Records[0], Actor: actor,
		Conflict: &ConflictInfo{Records: slices.Clone(c.Records), Target: c.Target}}
}

// CheckExpired returns nil when rec has expired at now, else ErrConflict.
func CheckExpired(rec *schema.MemoryRecord, now string) error {
	if rec.ExpiresAt == "" || rec.ExpiresAt > now {
		return fmt.Errorf("record expiry %s: %w: the record has not expired (expiresAt %q)", rec.ID, ErrConflict, rec.ExpiresAt)
	}
	return nil
}

// ExpiryEntry is the ledger entry RecordExpiry appends at now.
func ExpiryEntry(rec *schema.MemoryRecord, actor Actor, now string) LedgerEntry {
	return LedgerEntry{At: now, Op: OpExpire, RecordID: rec.ID, Actor: actor, Reason: "expired at " + rec.ExpiresAt}
}

// IsRecordExpiry reports whether e is a record's expire entry (not a
// proposal's: those carry the proposal).
func IsRecordExpiry(e LedgerEntry) bool {
	return e.Op == OpExpire && e.Proposal == nil && e.ProposalID == ""
}
