package bolt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

var human = store.Actor{Kind: store.ActorHuman, Name: "ana"}

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func openTest(t testing.TB, path string, opts store.Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func writeOne(t testing.TB, s store.Store, req store.WriteRequest) schema.MemoryRecord {
	t.Helper()
	recs, err := s.Write(context.Background(), []store.WriteRequest{req}, human)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return recs[0]
}

func fact(content string, scope map[string]string) store.WriteRequest {
	return store.WriteRequest{Kind: schema.KindFact, Content: content, Scope: scope}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

func TestOpenCreatesFileAndParents(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ws", ".agent-memory", "memory.db")
	s := openTest(t, path, store.Options{})
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("store file not created: %v", err)
	}
	rec := writeOne(t, s, fact("Deploys go out Tuesdays", nil))
	// A second Store on the same file (another process's view) sees it.
	s2 := openTest(t, path, store.Options{ReadOnly: true})
	got, err := s2.Get(context.Background(), rec.ID)
	if err != nil || got.Content != rec.Content {
		t.Fatalf("Get from a second store = %+v, %v", got, err)
	}
	if err := s2.Invalidate(context.Background(), rec.ID, "x", human); !errors.Is(err, store.ErrForbidden) {
		t.Errorf("Invalidate on a read-only store: err = %v, want ErrForbidden", err)
	}
	// Opening an existing current file read-write writes nothing.
	before := fileSum(t, path)
	openTest(t, path, store.Options{})
	if fileSum(t, path) != before {
		t.Error("Open of an existing store changed the file")
	}
}

func TestReadOnlyMissingFileReadsEmpty(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none", "memory.db")
	s := openTest(t, path, store.Options{ReadOnly: true})
	ctx := context.Background()
	res, err := s.Search(ctx, store.Query{})
	if err != nil || len(res.Records) != 0 {
		t.Errorf("Search = %+v, %v; want empty", res, err)
	}
	if _, err := s.Get(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get: err = %v, want ErrNotFound", err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify of an empty store: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open created %s (err %v)", filepath.Dir(path), err)
	}
}

func TestClosedStore(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{})
	s.Close()
	if _, err := s.Search(context.Background(), store.Query{}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Search after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.Write(context.Background(), []store.WriteRequest{fact("x", nil)}, human); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Write after Close: err = %v, want ErrClosed", err)
	}
}

// TestTamperedLedger edits the stored JSON of one ledger entry with raw bbolt
// and expects Verify to name that entry.
func TestTamperedLedger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(e map[string]any)
	}{
		{"reason", func(e map[string]any) { e["reason"] = "nothing to see here" }},
		{"actor", func(e map[string]any) { e["actor"] = map[string]any{"kind": "human", "name": "mallory"} }},
		{"at", func(e map[string]any) { e["at"] = "2020-01-01T00:00:00.000Z" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "m.db")
			s := openTest(t, path, store.Options{Now: newClock().Now})
			ctx := context.Background()
			var ids []string
			for i := range 4 {
				ids = append(ids, writeOne(t, s, fact(fmt.Sprintf("fact %d", i), nil)).ID)
			}
			if err := s.Invalidate(ctx, ids[1], "wrong", human); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatalf("Verify before tampering: %v", err)
			}
			const k = 3
			db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucketLedger)
				var e map[string]any
				if err := json.Unmarshal(b.Get(u64(k)), &e); err != nil {
					return err
				}
				tc.edit(e)
				data, _ := json.Marshal(e)
				return b.Put(u64(k), data)
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			err = s.Verify(ctx)
			var le *store.LedgerError
			if !errors.As(err, &le) || le.Seq != k || !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Verify after editing entry %d: err = %v, want a LedgerError naming entry %d", k, err, k)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("ledger entry %d", k)) || !strings.Contains(err.Error(), path) {
				t.Errorf("Verify error %q does not name entry %d and the file", err, k)
			}
		})
	}
}

func TestDeletedLedgerEntry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	for i := range 3 {
		writeOne(t, s, fact(fmt.Sprintf("fact %d", i), nil))
	}
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Delete(u64(2)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var le *store.LedgerError
	if err := s.Verify(context.Background()); !errors.As(err, &le) || le.Seq != 2 {
		t.Fatalf("Verify after deleting entry 2: err = %v, want LedgerError seq 2", err)
	}
}

// TestLedgerHeadCatchesTruncation: removing the newest entries, which leaves
// an intact chain, is caught by the head kept in meta; so is replacing the
// newest entry with a resealed one. A file without a head (written before it
// existed) verifies and gets one at its next append.
func TestLedgerHeadCatchesTruncation(t *testing.T) {
	t.Parallel()
	tamper := func(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
		t.Helper()
		db, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	setup := func(t *testing.T) (string, *Store) {
		path := filepath.Join(t.TempDir(), "m.db")
		s := openTest(t, path, store.Options{})
		for i := range 4 {
			writeOne(t, s, fact(fmt.Sprintf("fact %d", i), nil))
		}
		if err := s.Verify(context.Background()); err != nil {
			t.Fatalf("Verify of an untouched store: %v", err)
		}
		return path, s
	}
	tests := []struct {
		name    string
		fn      func(tx *bbolt.Tx) error
		wantSeq uint64
		want    string
	}{
		{"newest removed", func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Delete(u64(4)) }, 4, "removed from the end"},
		{"two newest removed", func(tx *bbolt.Tx) error {
			if err := tx.Bucket(bucketLedger).Delete(u64(4)); err != nil {
				return err
			}
			return tx.Bucket(bucketLedger).Delete(u64(3))
		}, 3, "removed from the end"},
		{"newest replaced and resealed", func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketLedger)
			var prev, last store.LedgerEntry
			if err := json.Unmarshal(b.Get(u64(3)), &prev); err != nil {
				return err
			}
			if err := json.Unmarshal(b.Get(u64(4)), &last); err != nil {
				return err
			}
			last.Reason = "rewritten"
			data, err := json.Marshal(store.SealEntry(last, 4, prev.Hash))
			if err != nil {
				return err
			}
			return b.Put(u64(4), data)
		}, 4, "does not match the ledger head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, s := setup(t)
			tamper(t, path, tt.fn)
			var le *store.LedgerError
			err := s.Verify(context.Background())
			if !errors.As(err, &le) || le.Seq != tt.wantSeq || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Verify: err = %v, want ErrCorrupt LedgerError seq %d containing %q", err, tt.wantSeq, tt.want)
			}
		})
	}
	t.Run("no head yet", func(t *testing.T) {
		t.Parallel()
		path, s := setup(t)
		tamper(t, path, func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyLedgerHead) })
		if err := s.Verify(context.Background()); err != nil {
			t.Fatalf("Verify of a file without a head: %v", err)
		}
		writeOne(t, s, fact("fact after", nil))
		tamper(t, path, func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Delete(u64(5)) })
		if err := s.Verify(context.Background()); err == nil {
			t.Fatal("Verify after the next append recorded a head and its entry was removed: nil error")
		}
	})
}

// writeV0 builds a version-0 file with raw bbolt: a records bucket of plain
// record JSON, nothing else.
func writeV0(t *testing.T, path string, recs []schema.MemoryRecord, garbage map[string][]byte) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("records"))
		if err != nil {
			return err
		}
		for _, r := range recs {
			data, _ := json.Marshal(r)
			if err := b.Put([]byte(r.ID), data); err != nil {
				return err
			}
		}
		for k, v := range garbage {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMigrateFromVersion0(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	target := schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: "projectContext", Key: "deploy_window"}
	old := []schema.MemoryRecord{
		{ID: "01JB0000000000000000000002", Scope: map[string]string{"project": "web"}, Kind: schema.KindFact,
			Content: "Deploys go out Tuesdays", CreatedAt: "2026-10-01T10:00:00.000Z", UpdatedAt: "2026-10-01T10:00:00.000Z", Target: &target},
		{ID: "01JB0000000000000000000001", Scope: map[string]string{"project": "web"}, Kind: schema.KindPreference,
			Content: "Dark mode in the editor", CreatedAt: "2026-10-02T10:00:00.000Z", UpdatedAt: "2026-10-02T10:00:00.000Z"},
		{ID: "01JB0000000000000000000003", Scope: map[string]string{}, Kind: schema.KindFact,
			Content: "Old and wrong", CreatedAt: "2026-09-01T10:00:00.000Z", UpdatedAt: "2026-09-03T10:00:00.000Z",
			InvalidAt: "2026-09-03T10:00:00.000Z", InvalidReason: "wrong"},
	}
	writeV0(t, path, old, map[string][]byte{"01JB0000000000000000000009": []byte("{not json")})

	// Read-only first: it refuses rather than misreading the old layout.
	if _, err := Open(path, store.Options{ReadOnly: true}); !errors.Is(err, ErrVersion) {
		t.Fatalf("read-only Open of a v0 file: err = %v, want ErrVersion", err)
	}
	s := openTest(t, path, store.Options{Now: newClock().Now})
	ctx := context.Background()
	for _, want := range old {
		got, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatalf("Get(%s) after migration: %v", want.ID, err)
		}
		if got.Content != want.Content || got.CreatedAt != want.CreatedAt || got.InvalidAt != want.InvalidAt || (got.Target == nil) != (want.Target == nil) {
			t.Errorf("migrated %s = %+v, want %+v", want.ID, got, want)
		}
	}
	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 2 || res.Records[0].ID != old[1].ID || res.Records[1].ID != old[0].ID || res.Skipped != 1 {
		t.Errorf("Search after migration = %v (skipped %d), want [%s %s] skipping 1", ids(res.Records), res.Skipped, old[1].ID, old[0].ID)
	}
	cands, err := s.Candidates(ctx, map[string]string{"project": "web"}, "")
	if err != nil || len(cands) != 1 || cands[0].ID != old[0].ID {
		t.Errorf("Candidates after migration = %v, %v; want the targeted record (index built)", ids(cands), err)
	}
	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("ledger after migration has %d entries, want 3 imports", len(entries))
	}
	for i, e := range entries {
		if e.Op != store.OpImport || e.Actor.Kind != store.ActorSystem {
			t.Errorf("entry %d = %s by %s, want import by system", i+1, e.Op, e.Actor)
		}
	}
	// Oldest createdAt first.
	if entries[0].RecordID != old[2].ID || entries[2].RecordID != old[1].ID {
		t.Errorf("import order = %s %s %s", entries[0].RecordID, entries[1].RecordID, entries[2].RecordID)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after migration: %v", err)
	}
	skipped, err := s.Export(ctx, func(schema.MemoryRecord) error { return nil })
	if err != nil || skipped != 1 {
		t.Errorf("Export after migration: skipped %d, err %v; want the garbage value kept and counted", skipped, err)
	}
	// Opening again does not migrate twice.
	openTest(t, path, store.Options{})
	if entries, _ := s.Ledger(ctx, store.LedgerFilter{}); len(entries) != 3 {
		t.Errorf("ledger after reopening has %d entries, want 3", len(entries))
	}
}

func TestNewerVersionRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.db")
	openTest(t, path, store.Options{})
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, u64(Version+1)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := fileSum(t, path)
	for _, ro := range []bool{false, true} {
		if _, err := Open(path, store.Options{ReadOnly: ro}); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "upgrade agent-ls") {
			t.Errorf("Open(ReadOnly=%v) of a newer file: err = %v, want ErrVersion advising an upgrade", ro, err)
		}
	}
	if fileSum(t, path) != before {
		t.Error("opening a newer file changed it")
	}
}

// goodDB writes n records (one promoted) and returns the file path.
func goodDB(t testing.TB, n int) (string, []schema.MemoryRecord) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	var recs []schema.MemoryRecord
	for i := range n {
		recs = append(recs, writeOne(t, s, fact(fmt.Sprintf("fact number %d %s", i, strings.Repeat("x", 200)), map[string]string{"project": "web"})))
	}
	return path, recs
}

func ids(recs []schema.MemoryRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func TestCorruptFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("agent-ls"), 4096), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"bad magic", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			// The magic sits at offset 16 of each meta page (pages 0 and 1).
			for _, off := range []int{16, os.Getpagesize() + 16} {
				copy(data[off:], []byte{0xde, 0xad, 0xbe, 0xef})
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"scrambled data pages", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			r := rand.New(rand.NewSource(1))
			ps := os.Getpagesize()
			for off := 2 * ps; off < len(data); off += ps {
				// Page headers: id, flags, count, overflow.
				for i := 0; i < 16; i++ {
					data[off+i] = byte(r.Intn(256))
				}
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tc.name, ro), func(t *testing.T) {
				t.Parallel()
				path, recs := goodDB(t, 60)
				tc.corrupt(t, path)
				before := fileSum(t, path)
				s, err := Open(path, store.Options{ReadOnly: ro})
				if err == nil {
					defer s.Close()
					var errs []error
					if !ro {
						_, werr := s.Write(ctx, []store.WriteRequest{fact("one more", nil)}, human)
						errs = append(errs, werr)
					}
					_, serr := s.Search(ctx, store.Query{})
					_, gerr := s.Get(ctx, recs[len(recs)-1].ID)
					_, perr := s.Promoted(ctx, map[string]string{"project": "web"}, "")
					verr := s.Verify(ctx)
					errs = append(errs, serr, verr, perr)
					for _, e := range errs {
						if e != nil && !errors.Is(e, store.ErrCorrupt) {
							t.Errorf("operation on a corrupt file: err = %v, want ErrCorrupt", e)
						}
					}
					err = errors.Join(append(errs, gerr)...)
				}
				t.Logf("error: %v", err)
				if !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("corrupt file: err = %v, want ErrCorrupt", err)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the file", err)
				}
				if fileSum(t, path) != before {
					t.Error("the corrupt file was written to")
				}
			})
		}
	}
}

// TestUndecodableRecordSkipped damages one record's JSON in place: listings
// skip and count it, Export salvages the others.
func TestUndecodableRecordSkipped(t *testing.T) {
	t.Parallel()
	path, recs := goodDB(t, 5)
	bad := recs[2].ID
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		v := append([]byte(nil), b.Get([]byte(bad))...)
		v[8+3] ^= 0xff // flip a byte of the JSON
		return b.Put([]byte(bad), v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := openTest(t, path, store.Options{ReadOnly: true})
	ctx := context.Background()
	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatalf("Search with a damaged record: %v", err)
	}
	if len(res.Records) != 4 || res.Skipped != 1 {
		t.Errorf("Search = %d records, %d skipped; want 4, 1", len(res.Records), res.Skipped)
	}
	var got []string
	skipped, err := s.Export(ctx, func(r schema.MemoryRecord) error { got = append(got, r.ID); return nil })
	if err != nil || skipped != 1 || len(got) != 4 {
		t.Errorf("Export = %v, skipped %d, err %v; want 4 records and 1 skipped", got, skipped, err)
	}
	if _, err := s.Get(ctx, bad); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), bad) {
		t.Errorf("Get of the damaged record: err = %v, want ErrCorrupt naming it", err)
	}
}

func TestSummaryRetention(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{SummaryRetention: 3})
	ctx := context.Background()
	for i := range 5 {
		if err := s.AppendOverlaySummary(ctx, store.OverlaySummary{Agent: "a", RecordCount: i}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.OverlaySummaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, g := range got {
		counts = append(counts, g.RecordCount)
	}
	if fmt.Sprint(counts) != "[4 3 2]" {
		t.Errorf("summaries kept = %v, want [4 3 2]", counts)
	}
	db, err := bbolt.Open(s.Path(), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	_ = db.View(func(tx *bbolt.Tx) error { n = tx.Bucket(bucketSummaries).Stats().KeyN; return nil })
	if n != 3 {
		t.Errorf("summaries bucket holds %d keys, want 3", n)
	}
}

// TestPromotedIndex checks the scope index stays in step with promote,
// demote, delete and approval, and that a filter pair picks the right
// prefix (no "a=b" vs "a=bc" bleed).
func TestPromotedIndex(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{Now: newClock().Now})
	ctx := context.Background()
	auto := store.PromoteRequest{Tier: schema.TierAuto, Actor: human}
	a := writeOne(t, s, fact("a", map[string]string{"project": "web", "team": "core"}))
	b := writeOne(t, s, fact("b", map[string]string{"project": "webapp"}))
	c := writeOne(t, s, fact("c", map[string]string{"project": "web", "agent": "other"}))
	for _, r := range []schema.MemoryRecord{a, b, c} {
		if _, err := s.Promote(ctx, r.ID, auto); err != nil {
			t.Fatal(err)
		}
	}
	check := func(scope map[string]string, me string, want ...string) {
		t.Helper()
		got, err := s.Promoted(ctx, scope, me)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
			t.Errorf("Promoted(%v, %q) = %v, want %v", scope, me, ids(got), want)
		}
	}
	check(map[string]string{"project": "web"}, "me", a.ID)
	check(map[string]string{"project": "web"}, "other", c.ID, a.ID)
	check(map[string]string{"project": "web", "team": "core"}, "", a.ID)
	check(map[string]string{"team": "core", "project": "webapp"}, "")
	check(nil, "me", b.ID, a.ID)
	// The index holds copies of promoted records: they follow updates.
	if _, err := s.Corroborate(ctx, a.ID, schema.Support{ConversationID: "c7"}, human); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Promoted(ctx, map[string]string{"team": "core"}, ""); err != nil || len(got) != 1 || len(got[0].Supports) != 1 {
		t.Errorf("Promoted after corroborating = %+v, %v; want the record with its new support", got, err)
	}
	if err := s.Invalidate(ctx, b.ID, "wrong", human); err != nil {
		t.Fatal(err)
	}
	check(map[string]string{"project": "webapp"}, "")
	check(nil, "me", a.ID)
	if err := s.Demote(ctx, a.ID, "stale", human); err != nil {
		t.Fatal(err)
	}
	check(map[string]string{"project": "web"}, "other", c.ID)
	if err := s.Delete(ctx, c.ID, human); err != nil {
		t.Fatal(err)
	}
	check(map[string]string{"project": "web"}, "other")
	check(nil, "")
}

// TestExportSalvagesTruncatedFile: a read-only Export of a file cut short
// hands over the records it can still read and reports the damage.
func TestExportSalvagesTruncatedFile(t *testing.T) {
	t.Parallel()
	path, recs := goodDB(t, 200)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()*3/4); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, path, store.Options{ReadOnly: true})
	if _, err := s.Search(context.Background(), store.Query{}); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Search of a truncated file: err = %v, want ErrCorrupt", err)
	}
	var got []schema.MemoryRecord
	_, err = s.Export(context.Background(), func(r schema.MemoryRecord) error { got = append(got, r); return nil })
	t.Logf("salvaged %d of %d records; err %v", len(got), len(recs), err)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "salvaged") {
		t.Fatalf("Export: err = %v, want ErrCorrupt saying it is a salvage", err)
	}
	if len(got) < len(recs)/2 {
		t.Fatalf("Export salvaged %d of %d records from a file cut at 3/4", len(got), len(recs))
	}
	want := map[string]schema.MemoryRecord{}
	for _, r := range recs {
		want[r.ID] = r
	}
	for i, r := range got {
		if w, ok := want[r.ID]; !ok || w.Content != r.Content || w.CreatedAt != r.CreatedAt {
			t.Errorf("salvaged %+v, want %+v", r, w)
		}
		if i > 0 && got[i-1].ID >= r.ID {
			t.Errorf("salvaged records not in id order at %d", i)
		}
	}
}

// TestSalvagePicksLatestVersion: copy-on-write leaves stale versions of a
// record in freed pages; a salvage returns the newest.
func TestSalvagePicksLatestVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	clock := newClock()
	s := openTest(t, path, store.Options{Now: clock.Now})
	ctx := context.Background()
	rec := writeOne(t, s, fact("versioned", nil))
	for i := range 5 {
		clock.Advance(time.Minute)
		if _, err := s.Corroborate(ctx, rec.ID, schema.Support{ConversationID: fmt.Sprintf("c%d", i)}, human); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	got := salvageRecords(f, fi.Size())
	if len(got) != 1 || len(got[0].Supports) != 5 {
		t.Fatalf("salvage = %+v, want the one record with its 5 supports", got)
	}
	if none := salvageRecords(bytes.NewReader(bytes.Repeat([]byte{0xff}, 3*4096)), 3*4096); len(none) != 0 {
		t.Errorf("salvage of garbage = %v", none)
	}
}

// TestSalvageFromLedgerCopies: when every stored value of a record is
// unreadable, salvage rebuilds it from the ledger entries (the write entry's
// copy, then the corroboration), exactly as the store held it, and does not
// bring back a record whose delete entry it found.
func TestSalvageFromLedgerCopies(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	clock := newClock()
	s := openTest(t, path, store.Options{Now: clock.Now})
	ctx := context.Background()
	kept := writeOne(t, s, fact("kept through the ledger", nil))
	clock.Advance(time.Minute)
	if _, err := s.Corroborate(ctx, kept.ID, schema.Support{ConversationID: "c2"}, human); err != nil {
		t.Fatal(err)
	}
	gone := writeOne(t, s, fact("deleted before the damage", nil))
	if err := s.Delete(ctx, gone.ID, human); err != nil {
		t.Fatal(err)
	}
	want, err := s.Get(ctx, kept.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Damage every record value (8-byte sequence, then the record's JSON);
	// ledger copies sit after `"record":` and stay intact.
	damaged := 0
	for _, id := range []string{kept.ID, gone.ID} {
		pat := []byte(`{"id":"` + id + `"`)
		for i := 0; ; {
			j := bytes.Index(data[i:], pat)
			if j < 0 {
				break
			}
			at := i + j
			if at == 0 || data[at-1] != ':' {
				data[at] = 'X'
				damaged++
			}
			i = at + 1
		}
	}
	if damaged == 0 {
		t.Fatal("found no record value to damage")
	}
	got := salvageRecords(bytes.NewReader(data), int64(len(data)))
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("salvage = %+v,\nwant only %+v (its write entry's copy with the corroboration applied)", got, want)
	}
}

// TestMigrateFromVersion1: a version-1 file (no tkey index) is read as is,
// target searches included, and opening it read-write builds the index
// and records version 2, after which target searches find the same records.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v1.db")
	ctx := context.Background()
	s := openTest(t, path, store.Options{Now: newClock().Now})
	deploy := schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: "projectContext", Key: "deploy_window"}
	heur := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "deploy", Slot: "heuristics"}
	var reqs []store.WriteRequest
	for i, tg := range []schema.MemoryTarget{deploy, heur, heur, deploy} {
		reqs = append(reqs, store.WriteRequest{Scope: map[string]string{"project": "web"}, Kind: schema.KindFact,
			Content: fmt.Sprintf("record %d", i), Target: &tg})
	}
	reqs = append(reqs, store.WriteRequest{Scope: map[string]string{"project": "web"}, Kind: schema.KindFact, Content: "untargeted"})
	if _, err := s.Write(ctx, reqs, human); err != nil {
		t.Fatal(err)
	}
	search := func(s *Store, tg schema.MemoryTarget) []string {
		t.Helper()
		res, err := s.Search(ctx, store.Query{Target: &tg, Limit: store.Limit(store.Unlimited)})
		if err != nil {
			t.Fatal(err)
		}
		return contentsOf(res.Records)
	}
	want := map[string][]string{"deploy": search(s, deploy), "heur": search(s, heur)}
	if len(want["deploy"]) != 2 || len(want["heur"]) != 2 {
		t.Fatalf("target searches before the downgrade: %v", want)
	}
	// Make it a version-1 file: drop the tkey bucket, record version 1.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bucketTKey); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyVersion, u64(1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a version-1 file: %v", err)
	}
	for name, tg := range map[string]schema.MemoryTarget{"deploy": deploy, "heur": heur} {
		if got := search(ro, tg); !reflect.DeepEqual(got, want[name]) {
			t.Errorf("version 1, read-only: search %s = %v, want %v", name, got, want[name])
		}
	}
	rw := openTest(t, path, store.Options{Now: newClock().Now})
	for name, tg := range map[string]schema.MemoryTarget{"deploy": deploy, "heur": heur} {
		if got := search(rw, tg); !reflect.DeepEqual(got, want[name]) {
			t.Errorf("migrated: search %s = %v, want %v", name, got, want[name])
		}
	}
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bbolt.Tx) error {
		if v, err := readVersion(tx); err != nil || v != Version {
			t.Errorf("version after migration = %d, %v; want %d", v, err, Version)
		}
		n := 0
		_ = tx.Bucket(bucketTKey).ForEach(func(k, v []byte) error { n++; return nil })
		if n != 4 {
			t.Errorf("tkey after migration holds %d keys, want the 4 targeted records", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func contentsOf(recs []schema.MemoryRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Content)
	}
	return out
}

// TestLedgerScansStopWhenCancelled: EachLedger and EachLedgerOf end a scan
// of a large ledger with the context's error soon after it is cancelled,
// instead of reading to the end.
func TestLedgerScansStopWhenCancelled(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	var reqs []store.WriteRequest
	for i := range 2000 {
		reqs = append(reqs, fact(fmt.Sprintf("fact number %d", i), nil))
	}
	if _, err := s.Write(context.Background(), reqs, human); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		scan func(ctx context.Context, fn func(store.LedgerEntry) error) error
	}{
		{"EachLedger", s.EachLedger},
		{"EachLedgerOf", func(ctx context.Context, fn func(store.LedgerEntry) error) error {
			return s.EachLedgerOf(ctx, func(string) bool { return true }, fn)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			seen := 0
			err := tt.scan(ctx, func(store.LedgerEntry) error {
				if seen++; seen == 10 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) || seen >= 2000 || seen > 10+ctxCheckEvery {
				t.Fatalf("err %v after %d of 2000 entries; want context.Canceled within %d entries of the cancel", err, seen, ctxCheckEvery)
			}
			seen = 0
			if err := tt.scan(context.Background(), func(store.LedgerEntry) error { seen++; return nil }); err != nil || seen != 2000 {
				t.Fatalf("uncancelled scan: %v, %d entries, want 2000", err, seen)
			}
		})
	}
}
