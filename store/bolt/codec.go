package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"sync"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// appendFill is the page fill of buckets whose keys mostly grow (ids are
// time-ordered, ledger and summary keys are sequences): bbolt's default of
// one half would leave append-only pages half empty.
const appendFill = 0.9

// decodeRecord decodes a records value (8-byte sequence + JSON) stored under
// key. ok is false when the value is damaged: too short, not JSON, or naming
// another id.
func decodeRecord(key, v []byte) (store.Stored, bool) {
	var st store.Stored
	var ok bool
	st.Seq, ok = decodeRecordTo(key, v, &st.Rec)
	if !ok {
		return store.Stored{}, false
	}
	return st, true
}

// decodeRecordTo is decodeRecord into *r, returning the write sequence:
// a caller decoding many records gives each its place in one array
// instead of a record on the heap for each (json.Unmarshal, the
// fallback, makes the record it decodes into escape). On !ok *r holds
// whatever was decoded.
func decodeRecordTo(key, v []byte, r *schema.MemoryRecord) (seq uint64, ok bool) {
	return decodeRecordShared(key, v, r, nil)
}

// decodeRecordShared is decodeRecordTo giving r the scope map of scopes
// decoded from the same bytes, when there is one (nil scopes: none).
func decodeRecordShared(key, v []byte, r *schema.MemoryRecord, scopes sharedScopes) (seq uint64, ok bool) {
	if len(v) < 8 {
		return 0, false
	}
	if err := unmarshalRecordShared(v[8:], r, scopes); err != nil || r.ID != string(key) {
		return 0, false
	}
	if r.Scope == nil {
		r.Scope = map[string]string{}
	}
	return binary.BigEndian.Uint64(v[:8]), true
}

// rawRecord is a records value and its key, as read in a transaction.
type rawRecord struct{ key, val []byte }

// decodeParallelMin is the number of records from which decodeAll spreads
// the work over the processors.
const decodeParallelMin = 256

// decodeAll decodes raw (decodeRecord) in order, on up to GOMAXPROCS
// goroutines for many records (a cold `agent-ls render` spends a third of
// its time here). The values must stay valid until it returns: the caller's
// transaction is still open. ok[i] is false for a damaged value.
func decodeAll(raw []rawRecord) (sts []store.Stored, ok []bool) {
	sts, ok = make([]store.Stored, len(raw)), make([]bool, len(raw))
	inParallel(len(raw), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sts[i].Seq, ok[i] = decodeRecordTo(raw[i].key, raw[i].val, &sts[i].Rec)
		}
	})
	return sts, ok
}

// decodeInto is decodeAll into the caller's arrays, each as long as raw:
// recs[i] and seqs[i] are raw[i]'s record and write sequence when ok[i].
// Records whose scope is stored as the same bytes get the same scope map
// (one per goroutine; a sharer makes them one): the caller's records are
// read, not modified (see sharer).
func decodeInto(raw []rawRecord, recs []schema.MemoryRecord, seqs []uint64, ok []bool) {
	inParallel(len(raw), func(lo, hi int) {
		scopes := sharedScopes{}
		for i := lo; i < hi; i++ {
			seqs[i], ok[i] = decodeRecordShared(raw[i].key, raw[i].val, &recs[i], scopes)
		}
	})
}

// inParallel runs decode on ranges of [0, n) that cover it, each on its
// goroutine, on up to GOMAXPROCS goroutines from decodeParallelMin.
func inParallel(n int, decode func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/(decodeParallelMin/2))
	if workers < 2 {
		decode(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := per; lo < n; lo += per {
		wg.Go(func() { decode(lo, min(lo+per, n)) })
	}
	decode(0, min(per, n))
	wg.Wait()
}

// putRecord stores rec with its write sequence. When rec is promoted, its
// copies in the promoted-scope index are refreshed in the same transaction.
func (s *Store) putRecord(tx *bbolt.Tx, rec schema.MemoryRecord, seq uint64) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode record %s: %w", rec.ID, err)
	}
	v := append(u64(seq), data...)
	b := tx.Bucket(bucketRecords)
	b.FillPercent = appendFill
	if err := b.Put([]byte(rec.ID), v); err != nil {
		return err
	}

	if p := tx.Bucket(bucketPromotions); p != nil && p.Get([]byte(rec.ID)) != nil {
		return putScopeValues(tx.Bucket(bucketPScope), rec, v)
	}
	return nil
}

// decodeCached is decodeRecord through the store's decode cache.
func (s *Store) decodeCached(key, v []byte) (store.Stored, bool) {
	if s.tx == nil || s.readTx {
		// Only Update transactions (repeated reconciliation reads) use the cache: a
		// long-lived reader such as the language server keeps no copies.
		return decodeRecord(key, v)
	}
	return s.cache.record(key, v)
}

// putScopeValues stores v (a records value) under every scope key of rec.
func putScopeValues(b *bbolt.Bucket, rec schema.MemoryRecord, v []byte) error {
	for _, k := range scopeKeys(rec) {
		if err := b.Put(k, v); err != nil {
			return err
		}
	}
	return nil
}

// getStored reads one record; found is false for a missing id, and a damaged
// value is a store.ErrCorrupt error naming the id.
func (s *Store) getStored(tx *bbolt.Tx, id string) (st store.Stored, found bool, err error) {
	b := tx.Bucket(bucketRecords)
	if b == nil || id == "" {
		return store.Stored{}, false, nil
	}
	v := b.Get([]byte(id))
	if v == nil {
		return store.Stored{}, false, nil
	}
	st, ok := s.decodeCached([]byte(id), v)
	if !ok {
		return store.Stored{}, false, s.corrupt("record %s does not decode", id)
	}
	return st, true, nil
}

// scopeKeys returns the index keys "k=v\x00id" of every scope pair.
func scopeKeys(rec schema.MemoryRecord) [][]byte {
	keys := make([][]byte, 0, len(rec.Scope))
	for k, v := range rec.Scope {
		keys = append(keys, scopeKey(k, v, rec.ID))
	}
	return keys
}

func scopePrefix(k, v string) []byte {
	p := make([]byte, 0, len(k)+len(v)+2)
	p = append(p, k...)
	p = append(p, '=')
	p = append(p, v...)
	return append(p, 0)
}

func scopeKey(k, v, id string) []byte { return append(scopePrefix(k, v), id...) }

// indexTargeted adds a targeted record to the target index.
func indexTargeted(tx *bbolt.Tx, rec schema.MemoryRecord) error {
	if rec.Target == nil {
		return nil
	}
	if err := tx.Bucket(bucketTKey).Put(targetKey(*rec.Target, rec.ID), nil); err != nil {
		return err
	}
	return addIndex(tx.Bucket(bucketTargeted), tx.Bucket(bucketTScope), rec)
}

// dropTargeted removes a record from the target indexes.
func dropTargeted(tx *bbolt.Tx, rec schema.MemoryRecord) error {
	if rec.Target != nil {
		if err := tx.Bucket(bucketTKey).Delete(targetKey(*rec.Target, rec.ID)); err != nil {
			return err
		}
	}
	return dropIndex(tx.Bucket(bucketTargeted), tx.Bucket(bucketTScope), rec)
}

// targetPrefix is the tkey prefix of target t: each field length-prefixed,
// so no target's prefix is another's.
func targetPrefix(t schema.MemoryTarget) []byte {
	var p []byte
	for _, f := range []string{string(t.Primitive), t.Section, t.Key, t.Domain, t.Slot, t.JudgmentDomain, t.Capability} {
		p = binary.AppendUvarint(p, uint64(len(f)))
		p = append(p, f...)
	}
	return p
}

// hasKey reports whether c's bucket holds key (moving c).
func hasKey(c *bbolt.Cursor, key []byte) bool {
	k, _ := c.Seek(key)
	return k != nil && bytes.Equal(k, key)
}

func targetKey(t schema.MemoryTarget, id string) []byte { return append(targetPrefix(t), id...) }

// targetIDs returns the ids tkey holds for target t, in id order.
func targetIDs(tkey *bbolt.Bucket, t schema.MemoryTarget) []string {
	prefix := targetPrefix(t)
	var ids []string
	c := tkey.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids
}

// addIndex adds rec's id to all (unless nil: the promotions bucket is its
// own list) and its scope pairs to byScope.
func addIndex(all, byScope *bbolt.Bucket, rec schema.MemoryRecord) error {
	if all != nil {
		if err := all.Put([]byte(rec.ID), nil); err != nil {
			return err
		}
	}
	for _, k := range scopeKeys(rec) {
		if err := byScope.Put(k, nil); err != nil {
			return err
		}
	}
	return nil
}

func dropIndex(all, byScope *bbolt.Bucket, rec schema.MemoryRecord) error {
	if err := all.Delete([]byte(rec.ID)); err != nil {
		return err
	}
	for _, k := range scopeKeys(rec) {
		if err := byScope.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// indexedIDs returns the ids an index holds for filter: every id of all when
// filter is empty, else the ids under the filter's first pair (in key
// order). Callers still check the full filter on each record.
func indexedIDs(all, byScope *bbolt.Bucket, filter map[string]string) []string {
	var ids []string
	eachIndexedID(all, byScope, filter, func(id []byte) { ids = append(ids, string(id)) })
	return ids
}

// eachIndexedID calls fn with each id indexedIDs returns, in id order,
// without collecting them: id is the index's key bytes, valid for the
// transaction (a million ids as strings were 165 MB at once).
func eachIndexedID(all, byScope *bbolt.Bucket, filter map[string]string, fn func(id []byte)) {
	if all == nil || byScope == nil {
		return
	}
	if len(filter) == 0 {
		c := all.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			fn(k)
		}
		return
	}
	keys := sortedKeys(filter)
	prefix := scopePrefix(keys[0], filter[keys[0]])
	c := byScope.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		fn(k[len(prefix):])
	}
}

// appendLedger chains e after the last entry and stores it, in tx.
func (s *Store) appendLedger(tx *bbolt.Tx, e store.LedgerEntry) error {
	b := tx.Bucket(bucketLedger)
	b.FillPercent = appendFill
	k, v := b.Cursor().Last()
	seq, prev := uint64(1), ""
	if h := s.head; h != nil && len(k) == 8 && be64(k) == h.seq {
		// The last entry is the one this batch appended: its hash is known.
		seq, prev = h.seq+1, h.hash
	} else if k != nil {
		hash, err := s.checkTail(tx, k, v)
		if err != nil {
			return err
		}
		seq, prev = binary.BigEndian.Uint64(k)+1, hash
	}
	e, data, err := store.SealEntryJSON(e, seq, prev)
	if err != nil {
		return err
	}
	if err := b.Put(u64(e.Seq), data); err != nil {
		return err
	}
	if idx := tx.Bucket(bucketLedgerOf); idx != nil {
		for _, id := range entryIDs(e) {
			if err := idx.Put(ledgerOfKey(id, e.Seq), nil); err != nil {
				return err
			}
		}
	}
	if s.tx != nil {
		s.head = &ledgerHead{seq: e.Seq, hash: e.Hash}
	}
	return tx.Bucket(bucketMeta).Put(keyLedgerHead, append(u64(e.Seq), e.Hash...))
}

// ledgerHead is the last entry a batch view appended.
type ledgerHead struct {
	seq  uint64
	hash string
}

// allLedger decodes every ledger entry in sequence order, on up to
// GOMAXPROCS goroutines for a long ledger; a damaged entry is a
// store.ErrCorrupt error naming its key (the first one in order).
func (s *Store) allLedger(tx *bbolt.Tx) ([]store.LedgerEntry, error) {
	b := tx.Bucket(bucketLedger)
	if b == nil {
		return nil, nil
	}
	var keys, vals [][]byte
	if err := b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return s.corrupt("ledger key %x is not a sequence", k)
		}
		keys, vals = append(keys, k), append(vals, v)
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]store.LedgerEntry, len(vals))
	errs := make([]error, len(vals))
	decode := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			errs[i] = unmarshalEntry(vals[i], &out[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(vals)/decodeParallelMin)
	if workers < 2 {
		decode(0, len(vals))
	} else {
		var wg sync.WaitGroup
		per := (len(vals) + workers - 1) / workers
		for lo := per; lo < len(vals); lo += per {
			wg.Go(func() { decode(lo, min(lo+per, len(vals))) })
		}
		decode(0, min(per, len(vals)))
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			return nil, s.corrupt("ledger entry %d does not decode: %v", binary.BigEndian.Uint64(keys[i]), err)
		}
	}
	return out, nil
}

// eachLedger decodes the ledger entries in order and passes each to fn,
// keeping none of them.
func (s *Store) eachLedger(tx *bbolt.Tx, fn func(store.LedgerEntry) error) error {
	b := tx.Bucket(bucketLedger)
	if b == nil {
		return nil
	}
	pg := newPager(tx)
	return b.ForEach(func(k, v []byte) error {
		pg.step()
		var e store.LedgerEntry
		if len(k) != 8 {
			return s.corrupt("ledger key %x is not a sequence", k)
		}
		if err := unmarshalEntry(v, &e); err != nil {
			return s.corrupt("ledger entry %d does not decode: %v", binary.BigEndian.Uint64(k), err)
		}
		return fn(e)
	})
}

// ledgerIDs is the part of a ledger entry that says whose it is: its record
// and the record it carries.
type ledgerIDs struct {
	RecordID string `json:"recordId"`
	Record   *struct {
		ID string `json:"id"`
	} `json:"record"`
}

// ids returns the record ids an entry is about (its record id and the id
// of the record it carries), without repeats.
func (l ledgerIDs) ids() []string {
	var out []string
	if l.RecordID != "" {
		out = append(out, l.RecordID)
	}
	if l.Record != nil && l.Record.ID != "" && l.Record.ID != l.RecordID {
		out = append(out, l.Record.ID)
	}
	return out
}

// entryIDs is ledgerIDs.ids of a decoded entry.
func entryIDs(e store.LedgerEntry) []string {
	l := ledgerIDs{RecordID: e.RecordID}
	if e.Record != nil {
		l.Record = &struct {
			ID string `json:"id"`
		}{e.Record.ID}
	}
	return l.ids()
}

// ledgerOfKey is the ledgerof key of entry seq about record id.
func ledgerOfKey(id string, seq uint64) []byte {
	k := make([]byte, 0, len(id)+9)
	k = append(k, id...)
	k = append(k, 0)
	return append(k, u64(seq)...)
}

// ledgerSeqsIn appends to seqs the seqs of record id, in order, with c a
// cursor of the ledgerof index.
func ledgerSeqsIn(c *bbolt.Cursor, id string, seqs []uint64) []uint64 {
	var buf [64]byte
	prefix := append(append(buf[:0], id...), 0)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			seqs = append(seqs, be64(k[len(prefix):]))
		}
	}
	return seqs
}

// aboutWanted reports whether an entry naming record recordID and carrying
// record carriedID ("" for none) is about a record want names: its own
// record or the one it carries (store.MatchLedger's rule).
func aboutWanted(recordID, carriedID string, want func(id string) bool) bool {
	return recordID != "" && want(recordID) || carriedID != "" && want(carriedID)
}

// eachLedgerOf is eachLedger for the entries whose record id, or carried
// record's id, satisfies want; the others are decoded only as far as those
// two ids (a value that is not JSON is still a store.ErrCorrupt error).
func (s *Store) eachLedgerOf(tx *bbolt.Tx, want func(id string) bool, fn func(store.LedgerEntry) error) error {
	b := tx.Bucket(bucketLedger)
	if b == nil {
		return nil
	}
	pg := newPager(tx)
	return b.ForEach(func(k, v []byte) error {
		pg.step()
		if len(k) != 8 {
			return s.corrupt("ledger key %x is not a sequence", k)
		}
		var ids ledgerIDs
		if err := json.Unmarshal(v, &ids); err != nil {
			return s.corrupt("ledger entry %d does not decode: %v", binary.BigEndian.Uint64(k), err)
		}
		carried := ""
		if ids.Record != nil {
			carried = ids.Record.ID
		}
		if !aboutWanted(ids.RecordID, carried, want) {
			return nil
		}
		var e store.LedgerEntry
		if err := unmarshalEntry(v, &e); err != nil {
			return s.corrupt("ledger entry %d does not decode: %v", binary.BigEndian.Uint64(k), err)
		}
		return fn(e)
	})
}

func getJSON(b *bbolt.Bucket, key string, v any) (bool, error) {
	if b == nil {
		return false, nil
	}
	data := b.Get([]byte(key))
	if data == nil {
		return false, nil
	}
	return true, json.Unmarshal(data, v)
}

func putJSON(b *bbolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

func be64(k []byte) uint64 { return binary.BigEndian.Uint64(k) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
