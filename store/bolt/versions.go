package bolt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// bucketVersions holds record versions by content hash (schema version 4):
// the 32-byte sha256 of a record's JSON -> that JSON, stored once. A ledger
// entry that carries a record seals a store.RecordRef naming its version.
var bucketVersions = []byte("versions")

// putVersion stores data, the JSON of record id, as a version (once: an
// existing key holds the same bytes) and returns its reference.
func putVersion(tx *bbolt.Tx, id string, data []byte) (*store.RecordRef, error) {
	sum := sha256.Sum256(data)
	b := tx.Bucket(bucketVersions)
	if b.Get(sum[:]) == nil {
		if err := b.Put(sum[:], data); err != nil {
			return nil, fmt.Errorf("store version of record %s: %w", id, err)
		}
	}
	return &store.RecordRef{ID: id, Hash: hex.EncodeToString(sum[:])}, nil
}

// versionOf reads the version ref names and checks it: it must be stored,
// hash to its key and decode as record ref.ID. The error is a
// *store.LedgerError naming entry seq and the record.
func versionOf(versions *bbolt.Bucket, seq uint64, ref *store.RecordRef) (schema.MemoryRecord, error) {
	data, err := versionBytes(versions, seq, ref)
	if err != nil {
		return schema.MemoryRecord{}, err
	}
	var r schema.MemoryRecord
	if err := json.Unmarshal(data, &r); err != nil || r.ID != ref.ID {
		return r, &store.LedgerError{Seq: seq, Reason: fmt.Sprintf("version %s of record %s does not decode as that record", ref.Hash, ref.ID)}
	}
	return r, nil
}

// versionBytes returns the stored bytes of the version ref names, checked
// against its hash (the error is a *store.LedgerError naming entry seq).
func versionBytes(versions *bbolt.Bucket, seq uint64, ref *store.RecordRef) ([]byte, error) {
	data, err := storedVersion(versions, seq, ref)
	if err != nil {
		return nil, err
	}
	if store.VersionHash(data) != ref.Hash {
		return nil, &store.LedgerError{Seq: seq, Reason: fmt.Sprintf("version %s of record %s does not match its hash (version edited)", ref.Hash, ref.ID)}
	}
	return data, nil
}

// storedVersion returns the stored bytes of the version ref names, not yet
// checked against its hash.
func storedVersion(versions *bbolt.Bucket, seq uint64, ref *store.RecordRef) ([]byte, error) {
	key, err := hex.DecodeString(ref.Hash)
	if err != nil || len(key) != sha256.Size {
		return nil, &store.LedgerError{Seq: seq, Reason: fmt.Sprintf("record %s's version reference %q is not a sha256", ref.ID, ref.Hash)}
	}
	var data []byte
	if versions != nil {
		data = versions.Get(key)
	}
	if data == nil {
		return nil, &store.LedgerError{Seq: seq, Reason: fmt.Sprintf("version %s of record %s is missing", ref.Hash, ref.ID)}
	}
	return data, nil
}

// resolveEntry fills in the Record of an entry sealed by reference from
// its version (versionOf); other entries are left as they are.
func resolveEntry(versions *bbolt.Bucket, e *store.LedgerEntry) error {
	if e.RecordRef == nil || e.Record != nil {
		return nil
	}
	r, err := versionOf(versions, e.Seq, e.RecordRef)
	if err != nil {
		return err
	}
	if r.Scope == nil {
		r.Scope = map[string]string{}
	}
	e.Record = &r
	return nil
}

// sealedRef finds the record reference in a sealed entry's stored bytes
// without decoding them: the entries this package writes hold it as
// "recordRef":{"id":ID,"hash":HASH}. ok is false when there is none.
func sealedRef(data []byte) (ref store.RecordRef, ok bool) {
	const marker = `"recordRef":`
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		return ref, false
	}
	rest := data[i+len(marker):]
	const idHead, hashHead = `{"id":"`, `","hash":"`
	if bytes.HasPrefix(rest, []byte(idHead)) {
		rest = rest[len(idHead):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && bytes.HasPrefix(rest[j:], []byte(hashHead)) {
			id, h := rest[:j], rest[j+len(hashHead):]
			if k := bytes.IndexByte(h, '"'); k >= 0 && bytes.IndexByte(id, '\\') < 0 {
				return store.RecordRef{ID: string(id), Hash: string(h[:k])}, true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data[i+len(marker):]))
	if dec.Decode(&ref) != nil || ref.Hash == "" {
		return ref, false
	}
	return ref, true
}
