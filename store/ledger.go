package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/agent-ls/agent-ls/schema"
)

// SystemActor is the actor of mutations the store performs itself, such as
// expiring proposals.
var SystemActor = Actor{Kind: ActorSystem, Name: "agent-ls"}

// HashEntry returns the hex sha256 of e's canonical encoding: encoding/json
// of the entry with Hash cleared (field order fixed by the struct, map keys
// sorted, raw payloads compacted), so it covers every field including Seq
// and PrevHash. Decoding and re-encoding a stored entry yields the same hash.
func HashEntry(e LedgerEntry) string {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		// Only an invalid raw payload can fail; such an entry cannot verify.
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SealEntry sets e's Seq and PrevHash and computes its Hash: the last step
// before a backend stores an entry. The first entry has seq 1 and an empty
// PrevHash.
func SealEntry(e LedgerEntry, seq uint64, prevHash string) LedgerEntry {
	e.Seq = seq
	e.PrevHash = prevHash
	e.Hash = HashEntry(e)
	return e
}

// SealEntryJSON is SealEntry that also returns the sealed entry's
// encoding/json bytes, derived from the bytes it hashed (the entry with an
// empty Hash, which is its last field) instead of encoding the entry a
// second time: a backend storing entries as JSON stores exactly
// json.Marshal of the sealed entry.
func SealEntryJSON(e LedgerEntry, seq uint64, prevHash string) (LedgerEntry, []byte, error) {
	e.Seq, e.PrevHash, e.Hash = seq, prevHash, ""
	b, err := json.Marshal(e)
	if err != nil {
		return e, nil, fmt.Errorf("encode ledger entry: %w", err)
	}
	sum := sha256.Sum256(b)
	e.Hash = hex.EncodeToString(sum[:])
	const empty = `"hash":""}`
	if !bytes.HasSuffix(b, []byte(empty)) {
		// Not the layout this relies on: encode the sealed entry.
		b, err = json.Marshal(e)
		if err != nil {
			return e, nil, fmt.Errorf("encode ledger entry: %w", err)
		}
		return e, b, nil
	}
	out := make([]byte, 0, len(b)+len(e.Hash))
	out = append(out, b[:len(b)-2]...)
	out = append(out, e.Hash...)
	out = append(out, `"}`...)
	return e, out, nil
}

// LedgerError names the first ledger entry that fails verification. It
// wraps ErrCorrupt.
type LedgerError struct {
	// Seq is the sequence number the bad entry has or, for a missing
	// entry, should have had.
	Seq    uint64
	Reason string
}

func (e *LedgerError) Error() string {
	return fmt.Sprintf("ledger entry %d: %s", e.Seq, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *LedgerError) Unwrap() error { return ErrCorrupt }

// VerifyChain checks entries, given in stored order: seqs must run 1, 2, 3,
// ... without gaps, each PrevHash must equal the previous entry's Hash (the
// first's is empty) and each Hash must match the entry's content. The error
// is a *LedgerError naming the first bad entry: an edited entry by its own
// seq, a removed or reordered one by the seq expected at that position.
func VerifyChain(entries []LedgerEntry) error {
	prev := ""
	for i, e := range entries {
		want := uint64(i + 1)
		switch {
		case e.Seq != want:
			return &LedgerError{Seq: want, Reason: fmt.Sprintf("found seq %d at position %d (entries removed or reordered)", e.Seq, want)}
		case e.Hash != HashEntry(e):
			return &LedgerError{Seq: e.Seq, Reason: "hash does not match its content (entry edited)"}
		case e.PrevHash != prev:
			return &LedgerError{Seq: e.Seq, Reason: "prevHash does not match the previous entry (history edited)"}
		}
		prev = e.Hash
	}
	return nil
}

// MatchLedger reports whether e passes f (ignoring f.Limit). RecordID
// matches the entry's RecordID or the id of the record it carries (a
// supersede entry names the old record and carries the new one).
func MatchLedger(e LedgerEntry, f LedgerFilter) bool {
	if e.Seq <= f.After && f.After > 0 || e.Seq >= f.Before && f.Before > 0 {
		return false
	}
	if f.Since != "" && e.At < f.Since {
		return false
	}
	if f.Until != "" && e.At > f.Until {
		return false
	}
	if f.RecordID != "" && e.RecordID != f.RecordID && (e.Record == nil || e.Record.ID != f.RecordID) {
		return false
	}
	if len(f.Ops) > 0 && !slices.Contains(f.Ops, e.Op) {
		return false
	}
	return true
}

// FilterLedger applies f to entries in sequence order. A positive Limit
// keeps the last (newest) Limit matches, still in sequence order.
func FilterLedger(entries []LedgerEntry, f LedgerFilter) []LedgerEntry {
	var out []LedgerEntry
	for _, e := range entries {
		if MatchLedger(e, f) {
			out = append(out, e)
		}
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out
}

// ApplyApproval carries out an approved proposal on its record at now and
// reports whether the record is promoted afterwards. A promote proposal
// promotes. A demote proposal demotes and, with Invalidate or SupersededBy
// set, also invalidates the record (superseded by SupersededBy when set;
// else with the proposal's reason, or "demoted by proposal ID"). An already
// invalid record is left as it is.
func ApplyApproval(rec *schema.MemoryRecord, p Proposal, now string) (promoted bool) {
	if p.Kind == ProposePromote {
		return true
	}
	if rec.InvalidAt == "" {
		switch {
		case p.SupersededBy != "":
			ApplySupersede(rec, p.SupersededBy, now)
		case p.Invalidate:
			reason := p.Reason
			if reason == "" {
				reason = "demoted by proposal " + p.ID
			}
			ApplyInvalidate(rec, now, reason)
		}
	}
	return false
}

// ReplayState rebuilds, from ledger entries alone (in sequence order), the
// records valid and promoted at time at, with the supports they had then,
// ordered by id. Only entries with At <= at are applied:
//
//   - write and import entries add their record snapshot;
//   - a supersede entry adds the new record it carries and supersedes the
//     one it names (ApplySupersede);
//   - invalidate applies ApplyInvalidate with the entry's reason; delete
//     forgets the record;
//   - corroborate applies ApplySupport with the entry's support;
//   - promote starts promotion, demote ends it; approve applies
//     ApplyApproval with the proposal the entry carries;
//   - a record is returned when promoted and schema.MemoryRecord.Valid(at)
//     (so expiry by ExpiresAt ends validity too).
func ReplayState(entries []LedgerEntry, at string) []schema.MemoryRecord {
	recs, promoted := replay(entries, at)
	var out []schema.MemoryRecord
	for id := range promoted {
		if r := recs[id]; r != nil && r.Valid(at) {
			out = append(out, *r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ReplayRecords rebuilds, from ledger entries alone (in sequence order),
// every record that exists at time at — valid or not, promoted or not —
// as ReplayState's rules leave it, ordered by id.
func ReplayRecords(entries []LedgerEntry, at string) []schema.MemoryRecord {
	recs, _ := replay(entries, at)
	out := make([]schema.MemoryRecord, 0, len(recs))
	for _, r := range recs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// replay applies the entries with At <= at (see ReplayState) and returns the
// records that exist and the ids promoted.
func replay(entries []LedgerEntry, at string) (map[string]*schema.MemoryRecord, map[string]bool) {
	recs := map[string]*schema.MemoryRecord{}
	promoted := map[string]bool{}
	for _, e := range entries {
		if e.At > at {
			continue
		}
		switch e.Op {
		case OpWrite, OpImport:
			if e.Record != nil {
				r := CloneRecord(*e.Record)
				recs[r.ID] = &r
			}
		case OpSupersede:
			if e.Record != nil {
				r := CloneRecord(*e.Record)
				recs[r.ID] = &r
				if old := recs[e.RecordID]; old != nil {
					ApplySupersede(old, r.ID, e.At)
				}
			}
		case OpInvalidate:
			if r := recs[e.RecordID]; r != nil {
				ApplyInvalidate(r, e.At, e.Reason)
			}
		case OpDelete:
			delete(recs, e.RecordID)
			delete(promoted, e.RecordID)
		case OpCorroborate:
			if r := recs[e.RecordID]; r != nil && e.Support != nil {
				ApplySupport(r, *e.Support, e.At)
			}
		case OpPromote:
			promoted[e.RecordID] = true
		case OpDemote:
			delete(promoted, e.RecordID)
		case OpApprove:
			if r := recs[e.RecordID]; r != nil && e.Proposal != nil {
				if ApplyApproval(r, *e.Proposal, e.At) {
					promoted[e.RecordID] = true
				} else {
					delete(promoted, e.RecordID)
				}
			}
		}
	}
	return recs, promoted
}
