package bolt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// readVersion returns the schema version of an open file: the meta bucket's
// version, 0 for the pre-release layout (records without meta) and Version
// for a file with no buckets at all (a new, empty store).
func readVersion(tx *bbolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if tx.Bucket(bucketRecords) != nil {
			return 0, nil
		}
		return Version, nil
	}
	v := meta.Get(keyVersion)
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: meta version has %d bytes, want 8", store.ErrCorrupt, len(v))
	}
	return int(binary.BigEndian.Uint64(v)), nil
}

// migrate brings the file in tx to Version: it creates missing buckets and
// runs each step from the stored version up. It refuses files newer than
// Version.
func (s *Store) migrate(tx *bbolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	v := Version
	if meta != nil {
		var err error
		if v, err = readVersion(tx); err != nil {
			return fmt.Errorf("store %s: %w", s.path, err)
		}
		if v == Version {
			return nil
		}
	} else if tx.Bucket(bucketRecords) != nil {
		v = 0
	}
	if v > Version {
		return fmt.Errorf("store %s: %w: schema version %d is newer than this agent-ls supports (%d); upgrade agent-ls", s.path, ErrVersion, v, Version)
	}
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("store %s: create bucket %s: %w", s.path, name, err)
		}
	}
	if v == 0 && meta == nil {
		if err := s.migrate0to1(tx); err != nil {
			return fmt.Errorf("store %s: migrate schema 0 to 1: %w", s.path, err)
		}
	}
	if v <= 1 {
		if err := s.migrate1to2(tx); err != nil {
			return fmt.Errorf("store %s: migrate schema 1 to 2: %w", s.path, err)
		}
	}
	if v <= 2 {
		if err := s.migrate2to3(tx); err != nil {
			return fmt.Errorf("store %s: migrate schema 2 to 3: %w", s.path, err)
		}
	}
	if err := tx.Bucket(bucketMeta).Put(keyVersion, u64(Version)); err != nil {
		return fmt.Errorf("store %s: write schema version: %w", s.path, err)
	}
	return nil
}

// migrate0to1 rewrites version-0 records (plain JSON values) with write
// sequences in (createdAt, id) order, builds the target index and ledgers
// one import entry per record so StateAt and Verify cover them. Values that
// do not decode are kept byte for byte (with a sequence prefix) so Export
// still counts them as skipped rather than losing them silently.
func (s *Store) migrate0to1(tx *bbolt.Tx) error {
	b := tx.Bucket(bucketRecords)
	type old struct {
		key []byte
		raw []byte
		rec *schema.MemoryRecord
	}
	var olds []old
	err := b.ForEach(func(k, v []byte) error {
		o := old{key: append([]byte(nil), k...), raw: append([]byte(nil), v...)}
		var r schema.MemoryRecord
		if json.Unmarshal(v, &r) == nil && r.ID == string(k) {
			o.rec = &r
		}
		olds = append(olds, o)
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(olds, func(i, j int) bool {
		a, c := olds[i], olds[j]
		if (a.rec == nil) != (c.rec == nil) {
			return a.rec != nil
		}
		if a.rec != nil && a.rec.CreatedAt != c.rec.CreatedAt {
			return a.rec.CreatedAt < c.rec.CreatedAt
		}
		return string(a.key) < string(c.key)
	})
	now := s.nowString()
	actor := store.Actor{Kind: store.ActorSystem, Name: "migrate"}
	for _, o := range olds {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		if o.rec == nil {
			if err := b.Put(o.key, append(u64(seq), o.raw...)); err != nil {
				return err
			}
			continue
		}
		if err := s.putRecord(tx, *o.rec, seq); err != nil {
			return err
		}
		if err := indexTargeted(tx, *o.rec); err != nil {
			return err
		}
		rec := *o.rec
		if err := s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpImport, RecordID: rec.ID,
			Actor: actor, Reason: "migrated from schema version 0", Record: &rec}); err != nil {
			return err
		}
	}
	return nil
}

// migrate1to2 builds the tkey index from the targeted records. A targeted
// record that does not decode has no readable target and is left out of it
// (Export still counts it as skipped).
func (s *Store) migrate1to2(tx *bbolt.Tx) error {
	records, tkey := tx.Bucket(bucketRecords), tx.Bucket(bucketTKey)
	c := tx.Bucket(bucketTargeted).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		v := records.Get(k)
		if v == nil {
			continue
		}
		st, ok := decodeRecord(k, v)
		if !ok || st.Rec.Target == nil {
			continue
		}
		if err := tkey.Put(targetKey(*st.Rec.Target, st.Rec.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// migrate2to3 builds the ledgerof index from the ledger.
func (s *Store) migrate2to3(tx *bbolt.Tx) error {
	b, idx := tx.Bucket(bucketLedger), tx.Bucket(bucketLedgerOf)
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return s.corrupt("ledger key %x is not a sequence", k)
		}
		var ids ledgerIDs
		if err := json.Unmarshal(v, &ids); err != nil {
			return s.corrupt("ledger entry %d does not decode: %v", be64(k), err)
		}
		for _, id := range ids.ids() {
			if err := idx.Put(ledgerOfKey(id, be64(k)), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}
