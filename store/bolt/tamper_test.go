package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// tamperFixture is a small store with every kind of content: a directly
// promoted record (with an approver), one promoted by an approved
// proposal, a corroborated targeted candidate, a superseded and an
// invalidated record, a pending proposal.
type tamperFixture struct {
	path                               string
	promoted, approved, candidate, old string
	scope                              map[string]string
}

func newTamperFixture(t *testing.T) tamperFixture {
	t.Helper()
	clock := newClock()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{Now: clock.Now})
	ctx := context.Background()
	scope := map[string]string{"project": "web"}
	target := schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: "projectContext", Key: "deploy_window"}
	tg := fact("deploys happen on tuesdays", scope)
	tg.Target = &target
	p := writeOne(t, s, fact("the api is versioned", scope))
	a := writeOne(t, s, fact("use the staging cluster", scope))
	c := writeOne(t, s, tg)
	old := writeOne(t, s, fact("an old belief", scope))
	gone := writeOne(t, s, fact("a wrong belief", scope))
	clock.Advance(time.Minute)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Promote(ctx, p.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human, Approver: "human:ana", Evidence: store.Evidence{ApprovedBy: "human:ana"}})
	must(err)
	prop, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: a.ID, Tier: schema.TierGuarded, RequestedBy: human, TTL: time.Hour})
	must(err)
	_, err = s.Approve(ctx, prop.ID, human, "ok")
	must(err)
	_, err = s.Corroborate(ctx, c.ID, schema.Support{ConversationID: "conv-2"}, human)
	must(err)
	_, err = s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: c.ID, Tier: schema.TierEarned, RequestedBy: human, TTL: time.Hour})
	must(err)
	repl := fact("a newer belief", scope)
	repl.Supersedes = old.ID
	_, err = s.Write(ctx, []store.WriteRequest{repl}, human)
	must(err)
	must(s.Invalidate(ctx, gone.ID, "wrong", human))
	must(s.Verify(ctx))
	return tamperFixture{path: path, promoted: p.ID, approved: a.ID, candidate: c.ID, old: old.ID, scope: scope}
}

// editByte changes one character of v in place, keeping its length and
// (mostly) its JSON valid: the first character of a content string when v
// has one, else the character after the middle `":"`, else the last byte.
func editByte(v []byte) []byte {
	v = append([]byte(nil), v...)
	pos := -1
	if i := bytes.Index(v, []byte(`"content":"`)); i >= 0 {
		pos = i + len(`"content":"`)
	} else if n := bytes.Count(v, []byte(`":"`)); n > 0 {
		i, off := 0, 0
		for k := 0; k <= n/2; k++ {
			j := bytes.Index(v[off:], []byte(`":"`))
			i = off + j
			off = i + 3
		}
		pos = i + 3
	}
	if pos < 0 || pos >= len(v) || v[pos] == '"' {
		pos = len(v) - 1
	}
	switch c := v[pos]; {
	case c == 'z' || c == 'Z' || c == '9':
		v[pos] = c - 1
	default:
		v[pos] = c + 1
	}
	return v
}

// tamper applies fn to a copy of path in one bbolt transaction and returns
// the copy.
func tamper(t *testing.T, path string, fn func(tx *bbolt.Tx) error) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "tampered.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(cp, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	return cp
}

// keyID is the record or proposal id a key of bucket names ("" for the
// ledger and meta).
func keyID(bucket string, k []byte) string {
	switch bucket {
	case "tscope", "pscope":
		return scopeKeyID(k)
	case "tkey":
		return targetKeyID(k)
	case "ledgerof":
		return string(k[:len(k)-9])
	case "ledger", "meta", "summaries":
		return ""
	}
	return string(k)
}

// TestTamperEveryBucket edits, one at a time, every key of every bucket of
// a store — a same-length edit of its value, or, for an index whose values
// are empty, removing the key; and it forges a key in every index. Each
// time, Verify fails naming the record (or the ledger entry), and what a
// render reads (Promoted and Candidates, vouched for) either fails naming
// a record or is exactly what the untouched store renders.
func TestTamperEveryBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	orig := openTest(t, fx.path, store.Options{ReadOnly: true, Now: newClock().Now})
	wantProm, err := orig.Promoted(ctx, fx.scope, "")
	if err != nil {
		t.Fatal(err)
	}
	wantCands, err := orig.Candidates(ctx, fx.scope, "")
	if err != nil {
		t.Fatal(err)
	}
	type edit struct {
		bucket, name, id string
		fn               func(tx *bbolt.Tx) error
	}
	var edits []edit
	db, err := bbolt.Open(fx.path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		for _, name := range allBuckets {
			bucket := string(name)
			var first []byte
			err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				k = append([]byte(nil), k...)
				if first == nil {
					first = k
				}
				e := edit{bucket: bucket, id: keyID(bucket, k)}
				if len(v) == 0 {
					e.name = fmt.Sprintf("%s/drop %q", bucket, printableKey(k))
					e.fn = func(tx *bbolt.Tx) error { return tx.Bucket(name).Delete(k) }
				} else {
					nv := editByte(v)
					e.name = fmt.Sprintf("%s/edit %q", bucket, printableKey(k))
					e.fn = func(tx *bbolt.Tx) error { return tx.Bucket(name).Put(k, nv) }
				}
				edits = append(edits, e)
				return nil
			})
			if err != nil {
				return err
			}
			// A forged key naming another record.
			if first != nil && bucket != "ledger" && bucket != "meta" && bucket != "summaries" {
				id := keyID(bucket, first)
				other := fx.promoted
				if id == other {
					other = fx.candidate
				}
				var fk []byte
				switch bucket {
				case "ledgerof":
					fk = ledgerOfKey(other, 1)
				default:
					fk = bytes.Replace(first, []byte(id), []byte(other), 1)
				}
				v := append([]byte(nil), tx.Bucket(name).Get(first)...) // bbolt memory is not valid after the View
				edits = append(edits, edit{bucket: bucket, id: other, name: fmt.Sprintf("%s/forge %q", bucket, printableKey(fk)),
					fn: func(tx *bbolt.Tx) error { return tx.Bucket(name).Put(fk, v) }})
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) < 40 {
		t.Fatalf("only %d edits", len(edits))
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			cp := tamper(t, fx.path, e.fn)
			s, err := Open(cp, store.Options{ReadOnly: true, Now: newClock().Now})
			if err == nil {
				defer s.Close()
				err = s.Verify(ctx)
			}
			if err == nil {
				t.Fatal("Verify passes")
			}
			if e.id != "" && !namesID(err, e.id) {
				t.Errorf("Verify: %v; want a difference naming %s", err, e.id)
			}
			if e.bucket == "ledger" && !strings.Contains(err.Error(), "ledger entry") {
				t.Errorf("Verify: %v; want the ledger entry named", err)
			}
			if s == nil {
				return
			}
			// What a render reads is vouched for, or the edit does not show.
			got, err := s.Promoted(ctx, fx.scope, "")
			if err == nil {
				err = store.VouchFor(ctx, s, got)
			}
			if err == nil && !subsetOf(got, wantProm) {
				t.Errorf("Promoted renders the edit: %v", got)
			}
			cands, err := s.Candidates(ctx, fx.scope, "")
			if err == nil {
				err = store.VouchFor(ctx, s, cands)
			}
			if err == nil && !subsetOf(cands, wantCands) {
				t.Errorf("Candidates render the edit: %v", cands)
			}
		})
	}
}

func namesID(err error, id string) bool {
	var se *store.StateError
	if errors.As(err, &se) {
		for _, d := range se.Diffs {
			if d.ID == id {
				return true
			}
		}
		return false
	}
	return strings.Contains(err.Error(), id)
}

// subsetOf reports whether every record of got is one of want, field for
// field: an edit may hide a record from a render (Verify names it), never
// change what one shows.
func subsetOf(got, want []schema.MemoryRecord) bool {
	byID := map[string]schema.MemoryRecord{}
	for _, r := range want {
		byID[r.ID] = r
	}
	for _, r := range got {
		w, ok := byID[r.ID]
		if !ok || len(store.RecordFieldsDiffer(w, r)) > 0 {
			return false
		}
	}
	return true
}

// TestForgedPromotion adds a promotion row and its scope index entries for
// the earned candidate, with no ledger entry: Verify names it, and a render
// refuses it (the reproduction 2).
func TestForgedPromotion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	cp := tamper(t, fx.path, func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get([]byte(fx.candidate))
		st, _ := decodeRecord([]byte(fx.candidate), v)
		row := store.Promotion{RecordID: fx.candidate, Tier: schema.TierEarned, PromotedAt: st.Rec.CreatedAt,
			Actor: human, Approver: "human:ana", Evidence: store.Evidence{ApprovedBy: "human:ana"}}
		if err := putJSON(tx.Bucket(bucketPromotions), []byte(fx.candidate), row); err != nil {
			return err
		}
		return putScopeValues(tx.Bucket(bucketPScope), st.Rec, append([]byte(nil), v...))
	})
	s := openTest(t, cp, store.Options{Now: newClock().Now})
	err := s.Verify(ctx)
	if !namesID(err, fx.candidate) {
		t.Fatalf("Verify = %v; want a difference naming %s", err, fx.candidate)
	}
	got, err := s.Promoted(ctx, fx.scope, "")
	if err != nil {
		t.Fatal(err)
	}
	var ue *store.UnvouchedError
	if err := store.VouchFor(ctx, s, got); !errors.As(err, &ue) || ue.ID != fx.candidate {
		t.Fatalf("Vouch of the forged promotion = %v; want it refused naming %s", err, fx.candidate)
	}
}

// TestEditedContentRendersNothing is the reproduction 1: the same
// content edit in the records bucket and the promoted-scope index (not the
// ledger) is refused by Verify and by the render.
func TestEditedContentRendersNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	cp := tamper(t, fx.path, func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketRecords, bucketPScope} {
			b := tx.Bucket(name)
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if bytes.Contains(v, []byte("the api is versioned")) {
					nv := bytes.Replace(v, []byte("the api is versioned"), []byte("the api is versioneD"), 1)
					if err := b.Put(append([]byte(nil), k...), nv); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	s := openTest(t, cp, store.Options{Now: newClock().Now})
	if err := s.Verify(ctx); !namesID(err, fx.promoted) {
		t.Fatalf("Verify = %v; want a difference naming %s", err, fx.promoted)
	}
	got, err := s.Promoted(ctx, fx.scope, "")
	if err != nil {
		t.Fatal(err)
	}
	var ue *store.UnvouchedError
	if err := store.VouchFor(ctx, s, got); !errors.As(err, &ue) || ue.ID != fx.promoted || !strings.Contains(err.Error(), "content") {
		t.Fatalf("Vouch = %v; want the edited content refused naming %s", err, fx.promoted)
	}
}

// TestNoWritesOnABrokenChain edits a ledger entry in the middle of the
// chain (the reproduction 3): every write is refused with
// "ledger does not verify at entry N", the file is left as it was, and a
// replay at a time after the edit is refused too.
func TestNoWritesOnABrokenChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	const bad = 6
	cp := tamper(t, fx.path, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		return b.Put(u64(bad), editByte(b.Get(u64(bad))))
	})
	before := fileSum(t, cp)
	s := openTest(t, cp, store.Options{Now: newClock().Now})
	want := fmt.Sprintf("ledger does not verify at entry %d: run agent-ls memory ledger --verify", bad)
	writes := map[string]error{}
	_, writes["write"] = s.Write(ctx, []store.WriteRequest{fact("more", fx.scope)}, human)
	_, writes["promote"] = s.Promote(ctx, fx.candidate, store.PromoteRequest{Tier: schema.TierAuto, Actor: human})
	writes["invalidate"] = s.Invalidate(ctx, fx.promoted, "x", human)
	_, writes["corroborate"] = s.Corroborate(ctx, fx.candidate, schema.Support{ConversationID: "c9"}, human)
	writes["batch"] = s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.Write(ctx, []store.WriteRequest{fact("more", fx.scope)}, human)
		return err
	})
	for name, err := range writes {
		var ce *store.ChainError
		if !errors.As(err, &ce) || ce.Seq != bad || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on a broken chain: %v; want %q", name, err, want)
		}
	}
	if fileSum(t, cp) != before {
		t.Error("the file was written")
	}
	var ce *store.ChainError
	if _, err := s.StateAt(ctx, schema.FormatTime(newClock().Now().Add(time.Hour))); !errors.As(err, &ce) {
		t.Errorf("StateAt after the edited entry: %v; want a ChainError", err)
	}
	if _, err := s.StateAt(ctx, "2000-01-01T00:00:00Z"); err != nil {
		t.Errorf("StateAt before any entry rests on no edited entry: %v", err)
	}
	if err := store.CheckChain(ctx, s, ""); !errors.As(err, &ce) {
		t.Errorf("CheckChain: %v; want a ChainError", err)
	}
}

// TestTailCheckedOnEveryAppend: a handle that verified the chain earlier
// still refuses to append when the last entry was replaced behind its back
// with the file keeping its identity as far as the handle can tell (the
// tail check, not the cached whole-chain check, finds it).
func TestTailCheckedOnEveryAppend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	s := openTest(t, fx.path, store.Options{Now: newClock().Now})
	if _, err := s.Write(ctx, []store.WriteRequest{fact("warm", fx.scope)}, human); err != nil {
		t.Fatal(err)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		k, v := b.Cursor().Last()
		return b.Put(append([]byte(nil), k...), editByte(v))
	})
	if err != nil {
		t.Fatal(err)
	}
	var ce *store.ChainError
	if _, err := s.Write(ctx, []store.WriteRequest{fact("more", fx.scope)}, human); !errors.As(err, &ce) {
		t.Fatalf("append after the tail was edited: %v; want a ChainError", err)
	}
}

// TestPinnedHead: a chain cut at its end (with the meta head moved along)
// and a chain rewritten from an entry on (re-sealed, so it verifies link by
// link) both fail against a head pinned before.
func TestPinnedHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	s := openTest(t, fx.path, store.Options{ReadOnly: true})
	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	pin := store.HeadOf(entries)
	if p, err := store.ParseHead(pin.String()); err != nil || p != pin {
		t.Fatalf("ParseHead(%s) = %v, %v", pin, p, err)
	}
	if err := store.CheckPin(entries, pin); err != nil {
		t.Fatalf("the chain does not extend its own head: %v", err)
	}
	n := uint64(len(entries))
	cut := tamper(t, fx.path, func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketLedger).Delete(u64(n)); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyLedgerHead, append(u64(n-1), entries[n-2].Hash...))
	})
	rewritten := tamper(t, fx.path, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		prev := entries[n-3].Hash
		var last store.LedgerEntry
		for _, e := range entries[n-2:] {
			e.Reason += " (rewritten)"
			var data []byte
			var err error
			last, data, err = store.SealEntryJSON(e, e.Seq, prev)
			if err != nil {
				return err
			}
			if err := b.Put(u64(e.Seq), data); err != nil {
				return err
			}
			prev = last.Hash
		}
		return tx.Bucket(bucketMeta).Put(keyLedgerHead, append(u64(last.Seq), last.Hash...))
	})
	for name, path := range map[string]string{"truncated": cut, "rewritten": rewritten} {
		s := openTest(t, path, store.Options{ReadOnly: true})
		got, err := s.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.VerifyChain(got); err != nil {
			t.Fatalf("%s: the chain itself does not verify (%v): not the case this test is about", name, err)
		}
		var le *store.LedgerError
		if err := store.CheckPin(got, pin); !errors.As(err, &le) {
			t.Errorf("%s chain against the pinned head %s: %v; want a LedgerError", name, pin, err)
		}
	}
}
