package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// pageFixture is an intact store file with enough records for the records
// bucket to be a tree of many leaves under a branch root, one record large
// enough to need overflow pages, a promoted record and a pending proposal.
type pageFixture struct {
	data     []byte
	recs     []schema.MemoryRecord
	proposal string
	ps       int      // page size
	root     uint64   // the records bucket's root (a branch page)
	leaves   []uint64 // its children
	overflow uint64   // a leaf with overflow pages
}

func newPageFixture(t *testing.T) pageFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	ctx := context.Background()
	reqs := []store.WriteRequest{fact("a large fact "+strings.Repeat("y", 20000), map[string]string{"project": "web"})}
	for i := range 250 {
		reqs = append(reqs, fact(fmt.Sprintf("fact number %d %s", i, strings.Repeat("x", 300)), map[string]string{"project": "web"}))
	}
	recs, err := s.Write(ctx, reqs, human)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[1].ID, Tier: schema.TierGuarded,
		RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "pages-test"}, Reason: "fixture"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fx := pageFixture{recs: recs, proposal: p.ID, ps: os.Getpagesize()}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bbolt.Tx) error { fx.root = uint64(tx.Bucket(bucketRecords).Root()); return nil })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fx.data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	page := fx.page(fx.root)
	if binary.LittleEndian.Uint16(page[8:]) != branchPageFlag {
		t.Fatalf("records root %d is not a branch page", fx.root)
	}
	for i := range int(binary.LittleEndian.Uint16(page[10:])) {
		child := binary.LittleEndian.Uint64(page[pageHeaderSize+i*branchElementSize+8:])
		fx.leaves = append(fx.leaves, child)
		if binary.LittleEndian.Uint32(fx.page(child)[12:]) > 0 {
			fx.overflow = child
		}
	}
	if len(fx.leaves) < 6 || fx.overflow == 0 {
		t.Fatalf("fixture has %d leaves under the records root, overflow leaf %d; want at least 6 and one", len(fx.leaves), fx.overflow)
	}
	return fx
}

// page returns the bytes of page id in fx.data (its first page only).
func (fx pageFixture) page(id uint64) []byte {
	return fx.data[int(id)*fx.ps : int(id+1)*fx.ps]
}

// pageDamages are damages to pages in use that a write to the end of the
// records bucket does not read; want is the page the error must name.
func pageDamages(fx pageFixture) []struct {
	name   string
	damage func(data []byte)
	want   uint64
} {
	at := func(data []byte, id uint64) []byte { return data[int(id)*fx.ps : int(id+1)*fx.ps] }
	leaf := fx.leaves[1]
	if leaf == fx.overflow {
		leaf = fx.leaves[2]
	}
	return []struct {
		name   string
		damage func(data []byte)
		want   uint64
	}{
		{"scrambled page header", func(data []byte) {
			r := rand.New(rand.NewSource(7))
			for i := range pageHeaderSize {
				at(data, leaf)[i] = byte(r.Intn(256))
			}
		}, leaf},
		{"flipped bytes in a leaf's element table", func(data []byte) {
			// The high byte of element 2's pos: its key moves out of the page.
			at(data, leaf)[pageHeaderSize+2*leafElementSize+5] ^= 0xff
		}, leaf},
		{"keys out of order in a leaf", func(data []byte) {
			p := at(data, leaf)
			e1, e2 := p[pageHeaderSize+leafElementSize:pageHeaderSize+2*leafElementSize], p[pageHeaderSize+2*leafElementSize:pageHeaderSize+3*leafElementSize]
			// Element 2 points at element 1's key and value (pos is relative).
			copy(e2[4:], binary.LittleEndian.AppendUint32(nil, binary.LittleEndian.Uint32(e1[4:])-leafElementSize))
			copy(e2[8:], e1[8:16])
		}, leaf},
		{"branch pointing past the file end", func(data []byte) {
			binary.LittleEndian.PutUint64(at(data, fx.root)[pageHeaderSize+3*branchElementSize+8:], 1<<40)
		}, 1 << 40},
		{"overflow count past the end", func(data []byte) {
			binary.LittleEndian.PutUint32(at(data, fx.overflow)[12:], 1<<30)
		}, fx.overflow},
		{"four scrambled data pages", func(data []byte) {
			r := rand.New(rand.NewSource(11))
			for _, id := range fx.leaves[1:5] {
				r.Read(at(data, id))
			}
		}, fx.leaves[1]},
	}
}

// TestCheckPages runs the checker on an intact file and on each damage:
// the error names the damaged page.
func TestCheckPages(t *testing.T) {
	t.Parallel()
	fx := newPageFixture(t)
	if err := checkPages(bytes.NewReader(fx.data), int64(len(fx.data))); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	for _, tc := range pageDamages(fx) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := bytes.Clone(fx.data)
			tc.damage(data)
			err := checkPages(bytes.NewReader(data), int64(len(data)))
			t.Logf("error: %v", err)
			if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("page %d ", tc.want)) {
				t.Errorf("checkPages = %v, want an error naming page %d", err, tc.want)
			}
		})
	}
}

// writeOps are the writing operations of a store, on the fixture's records.
func writeOps(fx pageFixture) []struct {
	name string
	run  func(ctx context.Context, s store.Store) error
} {
	recs := fx.recs
	return []struct {
		name string
		run  func(ctx context.Context, s store.Store) error
	}{
		{"Write", func(ctx context.Context, s store.Store) error {
			_, err := s.Write(ctx, []store.WriteRequest{fact("one more", nil)}, human)
			return err
		}},
		{"Promote", func(ctx context.Context, s store.Store) error {
			_, err := s.Promote(ctx, recs[2].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human})
			return err
		}},
		{"Corroborate", func(ctx context.Context, s store.Store) error {
			_, err := s.Corroborate(ctx, recs[3].ID, schema.Support{ConversationID: "c9"}, human)
			return err
		}},
		{"Propose", func(ctx context.Context, s store.Store) error {
			_, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[4].ID, Tier: schema.TierGuarded,
				RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "pages-test"}, Reason: "more"})
			return err
		}},
		{"Approve", func(ctx context.Context, s store.Store) error {
			_, err := s.Approve(ctx, fx.proposal, human, "fine")
			return err
		}},
		{"Invalidate", func(ctx context.Context, s store.Store) error {
			return s.Invalidate(ctx, recs[5].ID, "wrong", human)
		}},
		{"Demote", func(ctx context.Context, s store.Store) error {
			return s.Demote(ctx, recs[0].ID, "stale", human)
		}},
		{"Delete", func(ctx context.Context, s store.Store) error {
			return s.Delete(ctx, recs[6].ID, human)
		}},
		{"Batch", func(ctx context.Context, s store.Store) error {
			return s.Update(ctx, func(tx store.Tx) error {
				_, err := tx.Write(ctx, []store.WriteRequest{fact("in a batch", nil)}, human)
				return err
			})
		}},
	}
}

// damageLater writes data over the file at path and moves its
// modification time a second on: a later change by something other than
// bbolt (one within the file system's timestamp granularity that leaves
// the size and the meta pages alone goes unseen; see fileIdentity).
func damageLater(t *testing.T, path string, data []byte) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedPagesRefuseWrites damages pages no write reads: a read-write
// Open fails with ErrCorrupt naming the file and the page; through a handle
// opened before the damage, every writing operation does, and the file is
// not changed. On the intact file every operation succeeds.
func TestDamagedPagesRefuseWrites(t *testing.T) {
	t.Parallel()
	fx := newPageFixture(t)
	ctx := context.Background()
	t.Run("intact", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "m.db")
		if err := os.WriteFile(path, fx.data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := openTest(t, path, store.Options{})
		for _, op := range writeOps(fx) {
			if err := op.run(ctx, s); err != nil {
				t.Errorf("%s on an intact file: %v", op.name, err)
			}
		}
	})
	for _, tc := range pageDamages(fx) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "m.db")
			if err := os.WriteFile(path, fx.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s := openTest(t, path, store.Options{})
			data := bytes.Clone(fx.data)
			tc.damage(data)
			damageLater(t, path, data)
			before := fileSum(t, path)
			wantErr := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), path) ||
					!strings.Contains(err.Error(), fmt.Sprintf("page %d ", tc.want)) {
					t.Errorf("%s: err = %v, want ErrCorrupt naming %s and page %d", what, err, path, tc.want)
				}
				if fileSum(t, path) != before {
					t.Fatalf("%s wrote to the damaged file", what)
				}
			}
			s2, err := Open(path, store.Options{})
			if err == nil {
				s2.Close()
			}
			wantErr("Open", err)
			for _, op := range writeOps(fx) {
				wantErr(op.name, op.run(ctx, s))
			}
			// A read-only handle still opens (Export salvages from it).
			ro, err := Open(path, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only Open: %v", err)
			}
			ro.Close()
		})
	}
}

// TestCheckAfterOtherWriter: a handle that checked the file keeps its
// identity after its own commits, sees another handle's commit (even
// within the timestamp granularity: the meta pages change) and checks again
// once the file was changed later.
func TestCheckAfterOtherWriter(t *testing.T) {
	t.Parallel()
	fx := newPageFixture(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	if err := os.WriteFile(path, fx.data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, path, store.Options{})
	other := openTest(t, path, store.Options{})
	if _, err := s.Write(ctx, []store.WriteRequest{fact("first", nil)}, human); err != nil {
		t.Fatal(err)
	}
	if s.checked == nil {
		t.Fatal("no file identity kept after a checked write")
	}
	mine := *s.checked
	if _, err := other.Write(ctx, []store.WriteRequest{fact("other", nil)}, human); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now, err := identityOf(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if mine.same(now) {
		t.Error("another handle's commit left the file's identity as it was")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageDamages(fx)[0].damage(data)
	damageLater(t, path, data)
	before := fileSum(t, path)
	if _, err := s.Write(ctx, []store.WriteRequest{fact("second", nil)}, human); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("write after the file was damaged: err = %v, want ErrCorrupt", err)
	}
	if fileSum(t, path) != before {
		t.Error("the damaged file was written to")
	}
}

// FuzzCheckPages feeds arbitrary bytes to the checker as a file: it must
// return, never panic. Seeds: a small bbolt file, its half, random flips.
func FuzzCheckPages(f *testing.F) {
	// The fuzzer is slow on inputs of a store's size, so a small seed too:
	// a bbolt file of 512-byte pages cut to its high water mark, with a
	// branch root, an inline and a nested bucket and an overflow value.
	small := filepath.Join(f.TempDir(), "small.db")
	db, err := bbolt.Open(small, 0o600, &bbolt.Options{PageSize: 512})
	if err != nil {
		f.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range 40 {
			if err := b.Put(fmt.Appendf(nil, "key%03d", i), bytes.Repeat([]byte{'v'}, 20)); err != nil {
				return err
			}
		}
		if err := b.Put([]byte("large"), bytes.Repeat([]byte{'L'}, 1500)); err != nil {
			return err
		}
		in, err := b.CreateBucket([]byte("inline"))
		if err != nil {
			return err
		}
		return in.Put([]byte("k"), []byte("v"))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		f.Fatal(err, cerr)
	}
	sdata, err := os.ReadFile(small)
	if err != nil {
		f.Fatal(err)
	}
	if hw := int(binary.LittleEndian.Uint64(sdata[pageHeaderSize+40:])) * 512; hw < len(sdata) {
		// The high water mark of meta page 0; a later txid's may be higher.
		hw2 := int(binary.LittleEndian.Uint64(sdata[512+pageHeaderSize+40:])) * 512
		sdata = sdata[:max(hw, hw2)]
	}
	if err := checkPages(bytes.NewReader(sdata), int64(len(sdata))); err != nil {
		f.Fatalf("small seed: %v", err)
	}
	f.Add(sdata)
	f.Add(sdata[:len(sdata)/2])
	f.Add([]byte{})
	r := rand.New(rand.NewSource(3))
	for range 8 {
		d := bytes.Clone(sdata)
		for range 8 {
			d[r.Intn(len(d))] = byte(r.Intn(256))
		}
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = checkPages(bytes.NewReader(data), int64(len(data)))
		// Again with valid meta checksums, so that mutations reach the tree
		// (on a copy: the fuzzer's input is not ours to change).
		d := bytes.Clone(data)
		fixMetaChecksums(d)
		_ = checkPages(bytes.NewReader(d), int64(len(d)))
	})
}

// fixMetaChecksums reseals the meta pages at the offsets of 512-byte and
// of the machine's pages.
func fixMetaChecksums(data []byte) {
	for _, off := range []int{0, 512, os.Getpagesize()} {
		if m := off + pageHeaderSize; len(data) >= m+metaSize && binary.LittleEndian.Uint32(data[m:]) == boltMagic {
			h := fnv.New64a()
			_, _ = h.Write(data[m : m+metaChecksummed])
			binary.LittleEndian.PutUint64(data[m+metaChecksummed:], h.Sum64())
		}
	}
}

// TestCheckPagesMutations: 3,000 copies of a real store file, each with
// 1 to 60 random bytes changed and its meta pages resealed; the checker
// returns on every one (a panic fails the test) and finds damage in some.
func TestCheckPagesMutations(t *testing.T) {
	t.Parallel()
	path, _ := goodDB(t, 30)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	found := 0
	for i := range 3000 {
		d := bytes.Clone(data)
		for range 1 + i%60 {
			d[r.Intn(len(d))] = byte(r.Intn(256))
		}
		fixMetaChecksums(d)
		if checkPages(bytes.NewReader(d), int64(len(d))) != nil {
			found++
		}
	}
	t.Logf("damage found in %d of 3000 mutated files", found)
	if found == 0 {
		t.Error("no mutation was found")
	}
}
