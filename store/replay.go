package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// State is a store's content: every record, promotion row and proposal, by
// id. Replay builds the one the ledger describes; a backend reads the one
// it stores, and CompareState says where they part.
type State struct {
	Records    map[string]schema.MemoryRecord
	Promotions map[string]Promotion
	Proposals  map[string]Proposal
	// Tokens are the service tokens, by id (with their secrets' hashes).
	Tokens map[string]StoredToken
}

// NewState returns an empty State.
func NewState() State {
	return State{Records: map[string]schema.MemoryRecord{}, Promotions: map[string]Promotion{}, Proposals: map[string]Proposal{}, Tokens: map[string]StoredToken{}}
}

// ReplayAll rebuilds the whole state the ledger describes, applying every
// entry in sequence order (whatever its At) with the rules of ReplayState,
// and also the promotion rows (a promote entry's row, ApprovedPromotion for
// an approved promote proposal) and the proposals (the snapshot each
// propose, approve, reject or expire entry carries). Its cost is linear in
// the entries.
func ReplayAll(entries []LedgerEntry) State {
	st := NewState()
	for _, e := range entries {
		ApplyEntry(&st, e)
	}
	return st
}

// PromotionOf is the promotion row a promote entry records. Entries written
// before the ledger carried the approver name it in their evidence (the
// evolve gates set both).
func PromotionOf(e LedgerEntry) Promotion {
	p := Promotion{RecordID: e.RecordID, Tier: e.Tier, PromotedAt: e.At, Actor: e.Actor, Approver: e.Approver}
	if e.Evidence != nil {
		p.Evidence = CloneEvidence(*e.Evidence)
	}
	if p.Approver == "" {
		p.Approver = p.Evidence.ApprovedBy
	}
	return p
}

// ApplyEntry applies one ledger entry to st (see ReplayAll).
func ApplyEntry(st *State, e LedgerEntry) { applyEntry(st, e, false) }

// applyEntry is ApplyEntry; owned says e is the caller's to give away: the
// record it carries goes into st as it is (its scope map, target and
// slices shared with e, which the replay may then change) instead of a
// copy.
func applyEntry(st *State, e LedgerEntry, owned bool) {
	switch e.Op {
	case OpWrite, OpImport:
		if e.Record != nil {
			st.Records[e.Record.ID] = recordOf(e.Record, owned)
		}
	case OpSupersede:
		if e.Record != nil {
			st.Records[e.Record.ID] = recordOf(e.Record, owned)
			if old, ok := st.Records[e.RecordID]; ok {
				ApplySupersede(&old, e.Record.ID, e.At)
				st.Records[e.RecordID] = old
			}
		}
	case OpInvalidate:
		if r, ok := st.Records[e.RecordID]; ok {
			ApplyInvalidate(&r, e.At, e.Reason)
			st.Records[e.RecordID] = r
		}
	case OpDelete:
		delete(st.Records, e.RecordID)
		delete(st.Promotions, e.RecordID)
	case OpCorroborate:
		if r, ok := st.Records[e.RecordID]; ok && e.Support != nil {
			ApplySupport(&r, *e.Support, e.At)
			st.Records[e.RecordID] = r
		}
	case OpPromote:
		st.Promotions[e.RecordID] = PromotionOf(e)
	case OpDemote:
		delete(st.Promotions, e.RecordID)
	case OpTokenCreate, OpTokenRevoke:
		if e.Token != nil {
			if st.Tokens == nil {
				st.Tokens = map[string]StoredToken{}
			}
			st.Tokens[e.Token.ID] = CloneStoredToken(*e.Token)
		}
	}
	if e.Proposal != nil {
		st.Proposals[e.Proposal.ID] = CloneProposal(*e.Proposal)
	}
	if e.Op == OpApprove && e.Proposal != nil {
		if r, ok := st.Records[e.RecordID]; ok {
			if ApplyApproval(&r, *e.Proposal, e.At) {
				st.Promotions[e.RecordID] = ApprovedPromotion(*e.Proposal, e.Actor, e.At)
			} else {
				delete(st.Promotions, e.RecordID)
			}
			st.Records[e.RecordID] = r
		}
	}
}

// recordOf is the record an entry carries, as the replay takes it: a copy
// unless owned.
func recordOf(r *schema.MemoryRecord, owned bool) schema.MemoryRecord {
	if owned {
		return *r
	}
	return CloneRecord(*r)
}

// Difference is one way a store's content departs from what its ledger
// says: Kind is "record", "promotion", "proposal", "token", "index" or "ledger", ID
// the record or proposal (for an index, the id its key names).
type Difference struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Detail string `json:"detail"`
}

func (d Difference) String() string { return d.Kind + " " + d.ID + ": " + d.Detail }

// StateError is verification finding stored content the ledger does not
// vouch for, one Difference each. It wraps ErrCorrupt.
type StateError struct {
	Diffs []Difference
}

func (e *StateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d difference(s) between the stored state and the ledger's replay", len(e.Diffs))
	for i, d := range e.Diffs {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Diffs)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(d.String())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *StateError) Unwrap() error { return ErrCorrupt }

// CompareState lists every difference between want (the ledger's replay)
// and got (what the store holds), by kind and then id: records field by
// field, promotion rows and proposals as wholes.
func CompareState(want, got State) []Difference {
	var out []Difference
	for _, id := range unionKeys(want.Records, got.Records) {
		w, wok := want.Records[id]
		g, gok := got.Records[id]
		switch {
		case !wok:
			out = append(out, Difference{"record", id, "stored, but no ledger entry created it"})
		case !gok:
			out = append(out, Difference{"record", id, "the ledger has it, but it is not stored"})
		default:
			if f := RecordFieldsDiffer(w, g); len(f) > 0 {
				out = append(out, Difference{"record", id, "stored " + strings.Join(f, ", ") + " differ(s) from the ledger's"})
			}
		}
	}
	out = append(out, rowDifferences("promotion", want.Promotions, got.Promotions,
		"a promotion row no ledger entry made", "the ledger promoted it, but no promotion row is stored", "the stored promotion row differs from the ledger's")...)
	out = append(out, rowDifferences("proposal", want.Proposals, got.Proposals,
		"stored, but no ledger entry made it", "the ledger has it, but it is not stored", "the stored proposal differs from the ledger's")...)
	out = append(out, rowDifferences("token", want.Tokens, got.Tokens,
		"stored, but no ledger entry created it", "the ledger has it, but it is not stored", "the stored token differs from the ledger's")...)
	return out
}

// rowDifferences compares the rows of one kind the ledger rebuilt (want)
// with the stored ones (got), by id: a row only stored, a row only rebuilt,
// a row that differs, each with its message.
func rowDifferences[T any](kind string, want, got map[string]T, onlyStored, onlyLedger, differs string) []Difference {
	var out []Difference
	for _, id := range unionKeys(want, got) {
		w, wok := want[id]
		g, gok := got[id]
		switch {
		case !wok:
			out = append(out, Difference{kind, id, onlyStored})
		case !gok:
			out = append(out, Difference{kind, id, onlyLedger})
		case !sameJSON(w, g):
			out = append(out, Difference{kind, id, differs})
		}
	}
	return out
}

// CompareRecordJSON compares the record want (the ledger's) with data, the
// JSON a backend stored for record id (json.Marshal of the record): equal
// bytes cost one encoding; otherwise data is decoded and the differing
// fields named. A nil want is a record the ledger never created. The
// result is nil when they match.
func CompareRecordJSON(id string, want *schema.MemoryRecord, data []byte) *Difference {
	if want == nil {
		return &Difference{"record", id, "stored, but no ledger entry created it"}
	}
	w := *want
	if w.Scope == nil {
		w.Scope = map[string]string{}
	}
	if enc, err := json.Marshal(w); err == nil && bytes.Equal(enc, data) {
		return nil
	}
	var got schema.MemoryRecord
	if err := json.Unmarshal(data, &got); err != nil || got.ID != id {
		return &Difference{"record", id, "the ledger has it, but its stored value does not decode"}
	}
	if f := RecordFieldsDiffer(w, got); len(f) > 0 {
		return &Difference{"record", id, "stored " + strings.Join(f, ", ") + " differ(s) from the ledger's"}
	}
	return nil
}

// RecordFieldsDiffer names the JSON fields in which two records differ (a
// nil and an empty scope are the same).
func RecordFieldsDiffer(a, b schema.MemoryRecord) []string {
	fa, fb := recordFields(a), recordFields(b)
	var out []string
	for _, k := range unionKeys(fa, fb) {
		if !bytes.Equal(fa[k], fb[k]) {
			out = append(out, k)
		}
	}
	return out
}

func recordFields(r schema.MemoryRecord) map[string]json.RawMessage {
	if r.Scope == nil {
		r.Scope = map[string]string{}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return map[string]json.RawMessage{"payload": json.RawMessage(fmt.Sprintf("%q", err.Error()))}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	return m
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	da, erra := json.Marshal(a)
	db, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(da, db)
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
