// Package bolttest edits bbolt store files behind the store's back, as
// another program writing the file would, for tests of what the store and
// its surfaces then refuse.
package bolttest

import (
	"encoding/binary"
	"testing"

	"go.etcd.io/bbolt"
)

// EditLedgerEntry rewrites ledger entry seq of the bbolt store file at path
// with what edit returns for its stored bytes (a copy), in one bbolt
// transaction: the file stays a valid bbolt file, the entry no longer
// matches its hash. The test fails when the entry does not exist.
func EditLedgerEntry(t testing.TB, path string, seq uint64, edit func(entry []byte) []byte) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var missing bool
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("ledger"))
		if b == nil {
			missing = true
			return nil
		}
		k := binary.BigEndian.AppendUint64(nil, seq)
		v := b.Get(k)
		if v == nil {
			missing = true
			return nil
		}
		return b.Put(k, edit(append([]byte(nil), v...)))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if missing {
		t.Fatalf("%s: no ledger entry %d to edit", path, seq)
	}
}
