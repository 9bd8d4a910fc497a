package bolt

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/storetest"
)

// TestTamper runs the kit's cases of content edited behind the ledger
// against real files, edited with bbolt directly.
func TestTamper(t *testing.T) {
	edit := func(t *testing.T, s store.Store, fn func(tx *bbolt.Tx) error) {
		t.Helper()
		db, err := bbolt.Open(s.(*Store).Path(), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	storetest.RunTamper(t, func(t *testing.T, opts store.Options) store.Store {
		s, err := Open(filepath.Join(t.TempDir(), ".agent-memory", "memory.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.Tamper{
		DropPromotion: func(t *testing.T, s store.Store, id string) {
			edit(t, s, func(tx *bbolt.Tx) error { return tx.Bucket(bucketPromotions).Delete([]byte(id)) })
		},
		EditContent: func(t *testing.T, s store.Store, id, from, to string) {
			edit(t, s, func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucketRecords)
				v := b.Get([]byte(id))
				return b.Put([]byte(id), bytes.Replace(bytes.Clone(v), []byte(from), []byte(to), 1))
			})
		},
		EditProposalState: func(t *testing.T, s store.Store, id string, state store.ProposalState) {
			edit(t, s, func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucketProposals)
				var p store.Proposal
				if err := json.Unmarshal(b.Get([]byte(id)), &p); err != nil {
					return err
				}
				p.State = state
				return putJSON(b, []byte(id), p)
			})
		},
	})
}
