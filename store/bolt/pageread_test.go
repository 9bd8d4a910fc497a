package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// randomBoltFile writes a bbolt file of several transactions of puts and
// deletes over keys that share prefixes, values big enough for overflow
// pages, nested and inline buckets among the keys, and returns its path
// and the names of its top-level buckets.
func randomBoltFile(t *testing.T, r *rand.Rand) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.db")
	pageSize := []int{1024, 4096}[r.Intn(2)]
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names := [][]byte{[]byte("a"), []byte("big"), []byte("tiny")}
	key := func() []byte {
		n := 1 + r.Intn(12)
		k := make([]byte, n)
		for i := range k {
			k[i] = "abc\x00xyz"[r.Intn(7)]
		}
		return k
	}
	for range 1 + r.Intn(6) {
		err := db.Update(func(tx *bbolt.Tx) error {
			for _, name := range names {
				b, err := tx.CreateBucketIfNotExists(name)
				if err != nil {
					return err
				}
				n := r.Intn(400)
				if string(name) == "tiny" {
					n = r.Intn(3) // stays inline
				}
				for range n {
					k := key()
					if b.Bucket(k) != nil {
						continue
					}
					switch x := r.Intn(20); {
					case x < 3:
						if err := b.Delete(k); err != nil {
							return err
						}
					case x == 3:
						if v := b.Get(k); v == nil {
							nb, err := b.CreateBucket(k)
							if err != nil {
								return err
							}
							if err := nb.Put([]byte("in"), bytes.Repeat([]byte("n"), r.Intn(3000))); err != nil {
								return err
							}
						}
					default:
						size := 1 + r.Intn(64)
						if r.Intn(10) == 0 {
							size = 1 + r.Intn(3*pageSize)
						}
						v := make([]byte, size)
						r.Read(v)
						if err := b.Put(k, v); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return path, append(names, []byte("missing"))
}

// TestPageTreeMatchesBbolt: over random files, the pread reader's bucket
// lookup, get and prefix scan give what bbolt's cursor gives.
func TestPageTreeMatchesBbolt(t *testing.T) {
	t.Parallel()
	for seed := range int64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewSource(seed))
			path, names := randomBoltFile(t, r)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.View(func(tx *bbolt.Tx) error {
				for _, name := range names {
					pt, err := openPageTree(f, fi.Size(), 1<<30)
					if err != nil {
						t.Fatal(err)
					}
					root, found, err := pt.bucket(pt.root(), name)
					if err != nil {
						t.Fatalf("bucket %q: %v", name, err)
					}
					b := tx.Bucket(name)
					if found != (b != nil) {
						t.Fatalf("bucket %q: found %v, bbolt %v", name, found, b != nil)
					}
					if b == nil {
						continue
					}
					var want [][2][]byte
					prefixes := [][]byte{nil, []byte("a"), []byte("ab"), []byte("x"), []byte("\x00"), []byte("zzz")}
					for range 8 {
						p := make([]byte, r.Intn(4))
						for i := range p {
							p[i] = "abc\x00xyz"[r.Intn(7)]
						}
						prefixes = append(prefixes, p)
					}
					for _, prefix := range prefixes {
						want = want[:0]
						c := b.Cursor()
						for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
							if b.Bucket(k) == nil {
								want = append(want, [2][]byte{k, v})
							}
						}
						var got [][2][]byte
						if err := pt.scanPrefix(root, prefix, func(k, v []byte) { got = append(got, [2][]byte{k, v}) }); err != nil {
							t.Fatalf("scan %q/%q: %v", name, prefix, err)
						}
						if len(got) != len(want) {
							t.Fatalf("scan %q/%q: %d keys, bbolt %d", name, prefix, len(got), len(want))
						}
						for i := range got {
							if !bytes.Equal(got[i][0], want[i][0]) || !bytes.Equal(got[i][1], want[i][1]) {
								t.Fatalf("scan %q/%q: key %d is %q (%d bytes), bbolt %q (%d bytes)", name, prefix, i, got[i][0], len(got[i][1]), want[i][0], len(want[i][1]))
							}
						}
						for _, kv := range want {
							v, err := pt.get(root, kv[0])
							if err != nil || !bytes.Equal(v, kv[1]) {
								t.Fatalf("get %q/%q: %d bytes, %v; want %d bytes", name, kv[0], len(v), err, len(kv[1]))
							}
						}
						if v, err := pt.get(root, append(prefix, 'q')); err != nil || (v == nil) != (b.Get(append(prefix, 'q')) == nil) {
							t.Fatalf("get %q/%q: %q, %v; bbolt %q", name, append(prefix, 'q'), v, err, b.Get(append(prefix, 'q')))
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPageTreeHostileBytes: whatever the bytes, the reader answers or
// declines (errPageTree); it never panics or loops.
func TestPageTreeHostileBytes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(7))
	path, names := randomBoltFile(t, r)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	declined := 0
	for range 400 {
		data := bytes.Clone(orig)
		for range 1 + r.Intn(8) {
			data[2*4096/4+r.Intn(len(data)-2*4096/4)] = byte(r.Intn(256))
		}
		pt, err := openPageTree(bytes.NewReader(data), int64(len(data)), 1_000)
		if err != nil {
			declined++
			continue
		}
		for _, name := range names {
			root, found, err := pt.bucket(pt.root(), name)
			if err == nil && found {
				err = pt.scanPrefix(root, nil, func(k, v []byte) {})
			}
			if err != nil {
				if !errors.Is(err, errPageTree) {
					t.Fatalf("error %v is not errPageTree", err)
				}
				declined++
			}
		}
	}
	if declined == 0 {
		t.Fatal("no mutation was declined: the checks read nothing")
	}
}

// TestPromotedReadsPages: Promoted answers from pread on a store whose
// matches lie on a few pages, with the records bbolt's cursor reads; past
// the page budget, on a store of an older version, and on a damaged page it
// reads through bbolt.
func TestPromotedReadsPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := Open(path, store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "code-review", Slot: schema.SlotHeuristics}
	var ids []string
	for i := range 30 {
		scope := map[string]string{"project": "p"}
		if i%3 == 0 {
			scope = map[string]string{"project": "other"}
		}
		recs, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: fmt.Sprintf("lesson number %d about reviews", i), Scope: scope, Target: &target}}, store.SystemActor)
		if err != nil {
			t.Fatal(err)
		}
		rec := recs[0]
		if _, err := s.Promote(ctx, rec.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: store.SystemActor}); err != nil {
			t.Fatal(err)
		}
		if scope["project"] == "p" {
			ids = append(ids, rec.ID)
		}
	}
	prefix := scopePrefix("project", "p")
	var viaPages []string
	ok, err := s.scanPages(ctx, bucketPScope, prefix, func(k, v []byte) { viaPages = append(viaPages, string(k[len(prefix):])) })
	if err != nil || !ok {
		t.Fatalf("scanPages = %v, %v; want an answer", ok, err)
	}
	if fmt.Sprint(viaPages) != fmt.Sprint(ids) {
		t.Fatalf("scanPages read %v, want %v", viaPages, ids)
	}
	got, err := s.Promoted(ctx, map[string]string{"project": "p"}, "")
	if err != nil || len(got) != len(ids) {
		t.Fatalf("Promoted = %d records, %v; want %d", len(got), err, len(ids))
	}

	// Past the budget: declined, and Promoted still answers through bbolt.
	big := filepath.Join(t.TempDir(), "big.db")
	b, err := Open(big, store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 400 {
		recs, err := b.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: fmt.Sprintf("a longer lesson %d, %s", i, bytes.Repeat([]byte("word "), 80)), Scope: map[string]string{"project": "p"}, Target: &target}}, store.SystemActor)
		if err != nil {
			t.Fatal(err)
		}
		rec := recs[0]
		if _, err := b.Promote(ctx, rec.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: store.SystemActor}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := b.scanPages(ctx, bucketPScope, prefix, func(k, v []byte) {}); ok || err != nil {
		t.Fatalf("scanPages over %d matches = %v, %v; want declined past the budget", 400, ok, err)
	}
	if got, err := b.Promoted(ctx, map[string]string{"project": "p"}, ""); err != nil || len(got) != 400 {
		t.Fatalf("Promoted past the budget = %d records, %v; want 400", len(got), err)
	}

	// A version other than this one's: declined.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte{0, 0, 0, 0, 0, 0, 0, 2}) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.scanPages(ctx, bucketPScope, prefix, func(k, v []byte) {}); ok || err != nil {
		t.Fatalf("scanPages on a version 2 file = %v, %v; want declined", ok, err)
	}
}

// TestPageTreeSelfNamingBranch: a branch page whose children but the first
// name the page itself (an attack on the walk, not random damage) is
// declined (the depth bound and the budget): the walk never loops.
func TestPageTreeSelfNamingBranch(t *testing.T) {
	t.Parallel()
	var path string
	var branch uint64
	for seed := int64(0); branch == 0 && seed < 40; seed++ {
		path, _ = randomBoltFile(t, rand.New(rand.NewSource(seed)))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := openPageTree(bytes.NewReader(data), int64(len(data)), 1_000)
		if err != nil {
			t.Fatal(err)
		}
		root, found, err := pt.bucket(pt.root(), []byte("big"))
		if err != nil || !found {
			continue
		}
		if root.page != 0 {
			if p, err := pt.page(root.page); err == nil && p[8] == branchPageFlag {
				branch = root.page
			}
		}
	}
	if branch == 0 {
		t.Fatal("no random file has a branch page to attack")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int64(binary.LittleEndian.Uint32(data[pageHeaderSize+8:]))
	page := data[int64(branch)*ps:]
	count := int(binary.LittleEndian.Uint16(page[10:]))
	// The first child stays, so the walk reaches leaves before it meets
	// the cycle.
	for i := 1; i < count; i++ {
		binary.LittleEndian.PutUint64(page[pageHeaderSize+i*branchElementSize+8:], branch)
	}
	pt, err := openPageTree(bytes.NewReader(data), int64(len(data)), preadBudget)
	if err != nil {
		t.Fatal(err)
	}
	root, found, err := pt.bucket(pt.root(), []byte("big"))
	if err != nil || !found {
		t.Fatalf("bucket big: %v, %v", found, err)
	}
	n := 0
	err = pt.scanPrefix(root, nil, func(k, v []byte) { n++ })
	if !errors.Is(err, errPageTree) {
		t.Fatalf("scan of a self-naming branch = %v after %d keys; want declined", err, n)
	}
}
