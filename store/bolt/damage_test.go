package bolt

import (
	"context"
	"errors"
	"fmt"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// fullRead is what a store without CheckDamage is put through before a
// write (engine.RefuseDamaged): every record, the ledger, proposals and
// promotions read through the Reader API.
func fullRead(ctx context.Context, s *Store) error {
	if _, err := s.Search(ctx, store.Query{IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)}); err != nil {
		return err
	}
	if _, err := s.Ledger(ctx, store.LedgerFilter{}); err != nil {
		return err
	}
	if _, err := s.Proposals(ctx, store.ProposalFilter{}); err != nil {
		return err
	}
	_, err := s.Promoted(ctx, nil, "")
	return err
}

// TestCheckDamageAgreesWithFullRead: for every value of every bucket
// edited by a byte, replaced by bytes that are not JSON, or deleted, and
// for a ledger entry whose bytes no longer decode, CheckDamage refuses
// exactly when reading the whole store fails, with an error wrapping
// ErrCorrupt — it answers the full read's question without the full read.
// It also checks that an intact store passes, and that a damaged ledger
// entry is refused (the case that makes the answer non-trivial).
func TestCheckDamageAgreesWithFullRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	type edit struct {
		name string
		fn   func(tx *bbolt.Tx) error
	}
	var edits []edit
	db, err := bbolt.Open(fx.path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		for _, name := range allBuckets {
			err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				k = append([]byte(nil), k...)
				label := fmt.Sprintf("%s/%q", name, printableKey(k))
				edits = append(edits, edit{label + " deleted", func(tx *bbolt.Tx) error { return tx.Bucket(name).Delete(k) }})
				if len(v) > 0 {
					nv := editByte(v)
					edits = append(edits,
						edit{label + " edited", func(tx *bbolt.Tx) error { return tx.Bucket(name).Put(k, nv) }},
						edit{label + " not JSON", func(tx *bbolt.Tx) error { return tx.Bucket(name).Put(k, []byte("\x00\xffgarbage{")) }})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	edits = append(edits, edit{"intact", func(*bbolt.Tx) error { return nil }})
	refused := 0
	for _, e := range edits {
		cp := tamper(t, fx.path, e.fn)
		// A read-write open checks the page tree and the schema version:
		// an edit it refuses never reaches the check.
		s, err := OpenContext(ctx, cp, store.Options{Now: newClock().Now})
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Errorf("%s: open: %v; want ErrCorrupt or ErrVersion", e.name, err)
			}
			continue
		}
		want := fullRead(ctx, s)
		got := s.CheckDamage(ctx)
		if (got == nil) != (want == nil) {
			t.Errorf("%s: CheckDamage = %v, a full read = %v; want both nil or both errors", e.name, got, want)
		}
		if got != nil {
			refused++
			if !errors.Is(got, store.ErrCorrupt) {
				t.Errorf("%s: CheckDamage = %v; want it to wrap ErrCorrupt", e.name, got)
			}
		}
		if e.name == "intact" && got != nil {
			t.Errorf("intact store: CheckDamage = %v", got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if refused == 0 {
		t.Fatal("no edit was refused: the ledger's not-JSON edits must be")
	}
}

// TestCheckDamageThenWrite: after CheckDamage passed, the
// handle's write does not check the chain again (it keeps the file's
// identity), and a write by another handle in between makes the next
// CheckDamage check again and still pass.
func TestCheckDamageThenWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	s := openTest(t, fx.path, store.Options{Now: newClock().Now})
	if err := s.CheckDamage(ctx); err != nil {
		t.Fatal(err)
	}
	if s.chainOK == nil || s.checked == nil || !s.chainOK.same(*s.checked) {
		t.Fatal("CheckDamage left no verified chain for the write to reuse")
	}
	if _, err := s.Write(ctx, []store.WriteRequest{fact("after the check", fx.scope)}, human); err != nil {
		t.Fatal(err)
	}
	other := openTest(t, fx.path, store.Options{Now: newClock().Now})
	if _, err := other.Write(ctx, []store.WriteRequest{fact("from another handle", fx.scope)}, human); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckDamage(ctx); err != nil {
		t.Fatalf("CheckDamage after another handle's write: %v", err)
	}
	// A ledger entry that no longer decodes, written behind both handles'
	// backs, is found on the next check.
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(fx.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Put(u64(2), []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	s2 := openTest(t, fx.path, store.Options{Now: newClock().Now})
	if err := s2.CheckDamage(ctx); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("CheckDamage with an undecodable ledger entry: %v; want ErrCorrupt", err)
	}
}
