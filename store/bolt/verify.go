package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// storedState compares every stored record with want's (the ledger's
// replay) from its stored bytes (store.CompareRecordJSON: one encoding per
// record when they match), and reads every promotion row and proposal. A
// value that does not decode is a Difference naming its key. Records the
// ledger never created whose value does not decode (kept as they were by
// the version-0 migration) are skipped by every read and are no
// difference.
func (s *Store) storedState(tx *bbolt.Tx, want store.State) (store.State, []store.Difference) {
	st := store.NewState()
	var diffs []store.Difference
	seen := make(map[string]bool, len(want.Records))
	if b := tx.Bucket(bucketRecords); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			id := string(k)
			w, ok := want.Records[id]
			if !ok {
				if _, decodes := decodeRecord(k, v); decodes {
					diffs = append(diffs, store.Difference{Kind: "record", ID: id, Detail: "stored, but no ledger entry created it"})
				}
				return nil
			}
			seen[id] = true
			if len(v) < 8 {
				diffs = append(diffs, store.Difference{Kind: "record", ID: id, Detail: "the ledger has it, but its stored value does not decode"})
				return nil
			}
			if d := store.CompareRecordJSON(id, &w, v[8:]); d != nil {
				diffs = append(diffs, *d)
			}
			return nil
		})
	}
	var missing []string
	for id := range want.Records {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	for _, id := range missing {
		diffs = append(diffs, store.Difference{Kind: "record", ID: id, Detail: "the ledger has it, but it is not stored"})
	}
	if b := tx.Bucket(bucketPromotions); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			var p store.Promotion
			if json.Unmarshal(v, &p) != nil {
				diffs = append(diffs, store.Difference{Kind: "promotion", ID: string(k), Detail: "the stored row does not decode"})
				return nil
			}
			if p.RecordID != string(k) {
				diffs = append(diffs, store.Difference{Kind: "promotion", ID: string(k), Detail: fmt.Sprintf("the row stored under it names record %s", p.RecordID)})
			}
			st.Promotions[string(k)] = p
			return nil
		})
	}
	var rows []store.ProposalRow
	if b := tx.Bucket(bucketProposals); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			var p store.Proposal
			if json.Unmarshal(v, &p) != nil {
				diffs = append(diffs, store.Difference{Kind: "proposal", ID: string(k), Detail: "the stored proposal does not decode"})
				return nil
			}
			// The file keeps no columns beside the body: the row is its
			// key and the body's own fields.
			rows = append(rows, store.ProposalRow{Key: string(k), RecordID: p.RecordID, Kind: string(p.Kind), State: string(p.State), ExpiresAt: p.ExpiresAt, Body: p})
			st.Proposals[string(k)] = p
			return nil
		})
	}
	diffs = append(diffs, storedTokenState(tx, &st)...)
	return st, append(diffs, store.CompareProposalRows(want, rows)...)
}

// indexDiffs compares every index bucket with the one the replayed state
// want and the ledger entries call for: targeted, tscope, tkey, pscope
// (keys, and values equal to the record), ledgerof.
func (s *Store) indexDiffs(tx *bbolt.Tx, want store.State, entries []store.LedgerEntry) []store.Difference {
	targeted, tscope, tkey, pscope := map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	for id, r := range want.Records {
		if r.Target != nil {
			targeted[id] = id
			tkey[string(targetKey(*r.Target, id))] = id
			for _, k := range scopeKeys(r) {
				tscope[string(k)] = id
			}
		}
		if _, ok := want.Promotions[id]; ok {
			for _, k := range scopeKeys(r) {
				pscope[string(k)] = id
			}
		}
	}
	ledgerOf := map[string]string{}
	for _, e := range entries {
		for _, id := range entryIDs(e) {
			ledgerOf[string(ledgerOfKey(id, e.Seq))] = id
		}
	}
	var diffs []store.Difference
	diffs = append(diffs, keyDiffs(tx, bucketTargeted, targeted, func(k []byte) string { return string(k) })...)
	diffs = append(diffs, keyDiffs(tx, bucketTScope, tscope, scopeKeyID)...)
	diffs = append(diffs, keyDiffs(tx, bucketTKey, tkey, targetKeyID)...)
	diffs = append(diffs, keyDiffs(tx, bucketPScope, pscope, scopeKeyID)...)
	if tx.Bucket(bucketLedgerOf) != nil {
		diffs = append(diffs, keyDiffs(tx, bucketLedgerOf, ledgerOf, func(k []byte) string {
			if len(k) < 9 {
				return string(k)
			}
			return string(k[:len(k)-9])
		})...)
	}
	// Each pscope value is a copy of its record: the record the ledger says.
	if b := tx.Bucket(bucketPScope); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			id, ok := pscope[string(k)]
			if !ok {
				return nil
			}
			if rv := tx.Bucket(bucketRecords).Get([]byte(id)); rv != nil && bytes.Equal(rv[min(8, len(rv)):], v[min(8, len(v)):]) {
				// The copy is the record's own value, which was compared
				// with the ledger's record above.
				return nil
			}
			st, ok := decodeRecord([]byte(id), v)
			if !ok {
				diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: fmt.Sprintf("pscope copy under %q does not decode", printableKey(k))})
				return nil
			}
			if f := store.RecordFieldsDiffer(want.Records[id], st.Rec); len(f) > 0 {
				diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: fmt.Sprintf("pscope copy under %q: %v differ(s) from the ledger's record", printableKey(k), f)})
			}
			return nil
		})
	}
	return diffs
}

// keyDiffs compares the keys of bucket name with want (key -> the id it
// names): a key too many or missing is a Difference naming the id.
func keyDiffs(tx *bbolt.Tx, name []byte, want map[string]string, idOf func([]byte) string) []store.Difference {
	var diffs []store.Difference
	seen := make(map[string]bool, len(want))
	if b := tx.Bucket(name); b != nil {
		_ = b.ForEach(func(k, _ []byte) error {
			if _, ok := want[string(k)]; ok {
				seen[string(k)] = true
				return nil
			}
			diffs = append(diffs, store.Difference{Kind: "index", ID: idOf(k), Detail: fmt.Sprintf("%s holds key %q the ledger does not call for", name, printableKey(k))})
			return nil
		})
	}
	var missing []string
	for k := range want {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		diffs = append(diffs, store.Difference{Kind: "index", ID: want[k], Detail: fmt.Sprintf("%s lacks key %q", name, printableKey([]byte(k)))})
	}
	return diffs
}

// scopeKeyID is the id of a "k=v\x00id" key.
func scopeKeyID(k []byte) string {
	if i := bytes.LastIndexByte(k, 0); i >= 0 {
		return string(k[i+1:])
	}
	return string(k)
}

// targetKeyID is the id of a tkey key: what follows its seven
// length-prefixed fields.
func targetKeyID(k []byte) string {
	rest := k
	for range 7 {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return string(k)
		}
		rest = rest[w+int(n):]
	}
	return string(rest)
}

// printableKey shows a key with its NUL separators and binary parts
// quoted.
func printableKey(k []byte) string {
	var b bytes.Buffer
	for _, c := range k {
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	return b.String()
}

// verifyState replays entries and compares the result with everything tx
// holds: records (storedState), promotion rows and proposals
// (store.CompareState) and the indexes.
func (s *Store) verifyState(tx *bbolt.Tx, entries []store.LedgerEntry) []store.Difference {
	want := store.ReplayAll(entries)
	got, diffs := s.storedState(tx, want)
	rest := want
	rest.Records = nil
	diffs = append(diffs, store.CompareState(rest, got)...)
	return append(diffs, s.indexDiffs(tx, want, entries)...)
}
