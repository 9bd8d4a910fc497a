package bolt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// downgradeToV3 rewrites the version-4 file at path as version 3 wrote it:
// every ledger entry sealed again with its record inline (the chain and
// its head recomputed), pscope copies for every scope pair of a promoted
// record, no versions bucket and no promoted index.
func downgradeToV3(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		s := &Store{path: path}
		entries, err := s.allLedger(tx)
		if err != nil {
			return err
		}
		ledger := tx.Bucket(bucketLedger)
		prev := ""
		for _, e := range entries {
			e.RecordRef = nil
			sealed, data, err := store.SealEntryJSON(e, e.Seq, prev)
			if err != nil {
				return err
			}
			if err := ledger.Put(u64(e.Seq), data); err != nil {
				return err
			}
			prev = sealed.Hash
		}
		if n := len(entries); n > 0 {
			if err := tx.Bucket(bucketMeta).Put(keyLedgerHead, append(u64(entries[n-1].Seq), prev...)); err != nil {
				return err
			}
		}
		pscope, err := tx.CreateBucket(bucketPScope)
		if err != nil {
			return err
		}
		records := tx.Bucket(bucketRecords)
		err = tx.Bucket(bucketPromotions).ForEach(func(k, _ []byte) error {
			v := records.Get(k)
			st, ok := decodeRecord(k, v)
			if !ok {
				return fmt.Errorf("record %s does not decode", k)
			}
			for _, sk := range scopeKeys(st.Rec) {
				if err := pscope.Put(sk, append([]byte(nil), v...)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bucketVersions, bucketPIndex} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyVersion, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scopeMix writes n records with random scopes over a few keys (agent,
// project, team, area; any subset, the empty one included), promotes about
// half of them and demotes a few, and returns the queries to compare: every
// scope of the mix, with and without each agent.
func scopeMix(t *testing.T, s *Store, n int, seed int64) []promotedQuery {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	vals := map[string][]string{store.AgentKey: {"a1", "a2"}, "project": {"p1", "p2"}, "team": {"t1", "t2"}, "area": {"x"}}
	randScope := func() map[string]string {
		sc := map[string]string{}
		for k, vs := range vals {
			if r.Intn(2) == 0 {
				sc[k] = vs[r.Intn(len(vs))]
			}
		}
		return sc
	}
	var reqs []store.WriteRequest
	for i := range n {
		reqs = append(reqs, fact(fmt.Sprintf("record %d", i), randScope()))
	}
	recs, err := s.Write(ctx, reqs, human)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if r.Intn(2) == 0 {
			continue
		}
		if _, err := s.Promote(ctx, rec.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
			t.Fatal(err)
		}
		if r.Intn(8) == 0 {
			if err := s.Demote(ctx, rec.ID, "test", human); err != nil {
				t.Fatal(err)
			}
		}
	}
	var qs []promotedQuery
	for range 40 {
		sc := randScope()
		for _, agent := range []string{"", "a1", "a2"} {
			qs = append(qs, promotedQuery{sc, agent})
		}
	}
	return qs
}

type promotedQuery struct {
	scope map[string]string
	agent string
}

// promotedAnswers runs every query through Promoted and returns the ids
// each answers, in order.
func promotedAnswers(t *testing.T, s *Store, qs []promotedQuery) [][]string {
	t.Helper()
	out := make([][]string, len(qs))
	for i, q := range qs {
		got, err := s.Promoted(context.Background(), q.scope, q.agent)
		if err != nil {
			t.Fatalf("Promoted(%v, %q): %v", q.scope, q.agent, err)
		}
		out[i] = ids(got)
	}
	return out
}

// TestPromotedV4MatchesV3: on random scope mixes, the promoted index of
// version 4 answers every Promoted query exactly as version 3's pscope
// copies do (the same file downgraded), and as a filter over every record.
func TestPromotedV4MatchesV3(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "m.db")
			clock := newClock()
			s := openTest(t, path, store.Options{Now: clock.Now})
			qs := scopeMix(t, s, 60, seed)
			v4 := promotedAnswers(t, s, qs)
			brute := bruteAnswers(t, s, qs)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			downgradeToV3(t, path)
			ro := openTest(t, path, store.Options{ReadOnly: true, Now: clock.Now})
			v3 := promotedAnswers(t, ro, qs)
			for i, q := range qs {
				if !slices.Equal(v4[i], v3[i]) || !slices.Equal(slices.Sorted(slices.Values(v4[i])), brute[i]) {
					t.Errorf("Promoted(%v, %q): v4 %v, v3 %v, every record filtered %v", q.scope, q.agent, v4[i], v3[i], brute[i])
				}
			}
		})
	}
}

// bruteAnswers answers the queries by filtering every promoted record
// (ids sorted).
func bruteAnswers(t *testing.T, s *Store, qs []promotedQuery) [][]string {
	t.Helper()
	ctx := context.Background()
	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(qs))
	for i, q := range qs {
		var hits []schema.MemoryRecord
		for _, r := range res.Records {
			if _, err := s.Promotion(ctx, r.ID); err != nil {
				continue
			}
			if store.InView(r.Scope, q.scope, q.agent) {
				hits = append(hits, r)
			}
		}
		out[i] = ids(hits)
		slices.Sort(out[i])
	}
	return out
}

// TestMigrateFromVersion3: a version-3 file is read as is read-only
// (Verify passes, Promoted and Vouch answer as before the downgrade);
// opened read-write it becomes version 4 in one step with its sealed
// ledger untouched, verifies, renders the same composition, and later
// writes reference versions.
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	before := openTest(t, fx.path, store.Options{ReadOnly: true, Now: newClock().Now})
	qs := []promotedQuery{{fx.scope, ""}, {fx.scope, "a1"}, {map[string]string{}, ""}}
	want := promotedAnswers(t, before, qs)
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}
	downgradeToV3(t, fx.path)
	ledgerV3 := bucketCopy(t, fx.path, bucketLedger)

	check := func(s *Store, stage string) {
		t.Helper()
		if err := s.Verify(ctx); err != nil {
			t.Fatalf("%s: Verify: %v", stage, err)
		}
		if got := promotedAnswers(t, s, qs); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Promoted = %v, want %v", stage, got, want)
		}
		got, err := s.Promoted(ctx, fx.scope, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := store.VouchFor(ctx, s, got); err != nil {
			t.Fatalf("%s: Vouch: %v", stage, err)
		}
	}
	ro := openTest(t, fx.path, store.Options{ReadOnly: true, Now: newClock().Now})
	check(ro, "read-only version 3")
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}

	s := openTest(t, fx.path, store.Options{Now: newClock().Now})
	check(s, "migrated")
	if v := fileVersion(t, s); v != Version {
		t.Fatalf("version after a read-write open = %d, want %d", v, Version)
	}
	after := bucketCopy(t, fx.path, bucketLedger)
	for k, v := range ledgerV3 {
		if !bytes.Equal(after[k], v) {
			t.Fatalf("migration rewrote sealed ledger entry %x", k)
		}
	}
	rec := writeOne(t, s, fact("written after the migration", fx.scope))
	if _, err := s.Promote(ctx, rec.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
		t.Fatal(err)
	}
	want[0] = append([]string{rec.ID}, want[0]...)
	want[1] = append([]string{rec.ID}, want[1]...)
	want[2] = append([]string{rec.ID}, want[2]...)
	check(s, "written after the migration")
	entries, err := s.Ledger(ctx, store.LedgerFilter{RecordID: rec.ID, Ops: []store.Op{store.OpWrite}})
	if err != nil || len(entries) != 1 || entries[0].RecordRef == nil || entries[0].Record == nil || entries[0].Record.Content != rec.Content {
		t.Fatalf("write entry after the migration = %+v, %v; want a version reference with the record filled in", entries, err)
	}
}

func fileVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	err := s.view(context.Background(), func(tx *bbolt.Tx) error {
		var err error
		v, err = readVersion(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bucketCopy returns a copy of every key and value of bucket name.
func bucketCopy(t *testing.T, path string, name []byte) map[string][]byte {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]byte{}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(name).ForEach(func(k, v []byte) error {
			out[string(k)] = append([]byte(nil), v...)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVersionBehindTheLedger: a record version edited or deleted behind
// the ledger fails Verify naming the entry and the record, is refused by
// the render naming the record, keeps writes out, and ledger reads
// (history) fail rather than return the edited record.
func TestVersionBehindTheLedger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		edit         func(b *bbolt.Bucket, k, v []byte) error
	}{
		{"edited", "does not match its hash", func(b *bbolt.Bucket, k, v []byte) error {
			return b.Put(k, bytes.Replace(v, []byte("the api is versioned"), []byte("the api is versioneD"), 1))
		}},
		{"deleted", "is missing", func(b *bbolt.Bucket, k, _ []byte) error { return b.Delete(k) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fx := newTamperFixture(t)
			cp := tamper(t, fx.path, func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucketVersions)
				var key, val []byte
				_ = b.ForEach(func(k, v []byte) error {
					if bytes.Contains(v, []byte("the api is versioned")) {
						key, val = append([]byte(nil), k...), append([]byte(nil), v...)
					}
					return nil
				})
				if key == nil {
					return errors.New("no version of the promoted record")
				}
				return tc.edit(b, key, val)
			})
			s := openTest(t, cp, store.Options{Now: newClock().Now})
			err := s.Verify(ctx)
			var le *store.LedgerError
			if !errors.As(err, &le) || le.Seq != 1 || !strings.Contains(err.Error(), fx.promoted) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Verify = %v; want ledger entry 1 naming %s (%s)", err, fx.promoted, tc.reason)
			}
			got, err := s.Promoted(ctx, fx.scope, "")
			if err != nil {
				t.Fatal(err)
			}
			var ue *store.UnvouchedError
			if err := store.VouchFor(ctx, s, got); !errors.As(err, &ue) || ue.ID != fx.promoted {
				t.Fatalf("Vouch = %v; want the record refused naming %s", err, fx.promoted)
			}
			if _, err := s.Ledger(ctx, store.LedgerFilter{RecordID: fx.promoted}); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), fx.promoted) {
				t.Fatalf("Ledger = %v; want store.ErrCorrupt naming %s", err, fx.promoted)
			}
			err = s.EachLedgerOf(ctx, func(id string) bool { return id == fx.promoted }, func(store.LedgerEntry) error { return nil })
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("EachLedgerOf = %v; want store.ErrCorrupt", err)
			}
			if _, err := s.Write(ctx, []store.WriteRequest{fact("one more", fx.scope)}, human); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Write after the version was %s = %v; want it refused", tc.name, err)
			}
		})
	}
}

// TestVersionsStoredOnce: a record version is stored once by its hash and
// a write entry's sealed bytes hold the reference, not the record.
func TestVersionsStoredOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{Now: newClock().Now})
	rec := writeOne(t, s, fact("stored once", map[string]string{"project": "web"}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	versions := bucketCopy(t, path, bucketVersions)
	ledger := bucketCopy(t, path, bucketLedger)
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 1 || !bytes.Equal(versions[string(mustHash(data))], data) {
		t.Fatalf("versions = %q; want the record's JSON under its sha256", versions)
	}
	entry := ledger[string(u64(1))]
	if bytes.Contains(entry, []byte(`"record":`)) || !bytes.Contains(entry, []byte(`"recordRef":{"id":"`+rec.ID+`","hash":"`+store.VersionHash(data)+`"}`)) {
		t.Fatalf("write entry = %s; want a version reference instead of the record", entry)
	}
}

func mustHash(data []byte) []byte {
	sum := sha256.Sum256(data)
	return sum[:]
}
