//go:build linux

package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// TestTrimMappingKeepsReads: dropping a read transaction's mapped pages
// (MADV_DONTNEED, constantly, while the transaction reads) changes nothing
// a read sees: the records and ledger entries read with the trimmer
// running, and bytes held across a trim, are those read without it.
func TestTrimMappingKeepsReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	for i := 0; i < 200; i++ {
		writeOne(t, s, fact(fmt.Sprintf("fact %d %s", i, bytes.Repeat([]byte("x"), 900)), map[string]string{store.AgentKey: "bot"}))
	}
	read := func(tx *bbolt.Tx) map[string]string {
		out := map[string]string{}
		for _, name := range [][]byte{bucketRecords, bucketLedger} {
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = string(v)
				return nil
			})
		}
		return out
	}
	var want map[string]string
	if err := s.view(ctx, func(tx *bbolt.Tx) error { want = read(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(want) < 400 {
		t.Fatalf("read %d keys, want at least 400", len(want))
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		stop := trimMappingEvery(tx, time.Microsecond, 0, dontNeed)
		defer stop()
		// Bytes of the mapping held across an explicit trim.
		var first [8]byte
		binary.BigEndian.PutUint64(first[:], 1)
		held := tx.Bucket(bucketLedger).Get(first[:])
		before := string(held)
		if before == "" {
			t.Fatal("no ledger entry 1")
		}
		dontNeed(tx.DB().Info().Data, tx.Size())
		if string(held) != before {
			t.Error("bytes held across a trim changed")
		}
		for round := 0; round < 5; round++ {
			got := read(tx)
			if len(got) != len(want) {
				t.Fatalf("round %d: read %d keys, want %d", round, len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("round %d: %s differs", round, k)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTrimMappingRearms: the trim runs again and again while the read
// lasts (the timer re-arms), and none starts after stop returns.
func TestTrimMappingRearms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{})
	writeOne(t, s, fact("one fact", map[string]string{store.AgentKey: "bot"}))
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var mu sync.Mutex
		stopped, after := false, 0
		ticks := make(chan struct{}, 16)
		stop := trimMappingEvery(tx, time.Millisecond, 0, func(uintptr, int64) {
			mu.Lock()
			if stopped {
				after++
			}
			mu.Unlock()
			select {
			case ticks <- struct{}{}:
			default:
			}
		})
		deadline := time.After(10 * time.Second)
		for range 3 {
			select {
			case <-ticks:
			case <-deadline:
				t.Fatal("fewer than 3 trims in 10 s: the timer does not re-arm")
			}
		}
		stop()
		mu.Lock()
		stopped = true
		mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		if after != 0 {
			t.Errorf("%d trims ran after stop returned", after)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mappedRSS is the resident size in KiB of the mapping starting at addr,
// from /proc/self/smaps.
func mappedRSS(t *testing.T, addr uintptr) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	start := fmt.Sprintf("%x-", addr)
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(f[0], start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// TestPagerBoundsALoop: a loop over a large file's ledger that steps a
// pager keeps about pageGrowth plus pageEvery entries' pages of the
// mapping resident, where the same loop without one leaves the whole
// ledger resident; the entries read are the same; and a loop that stays on
// a few pages does not trim at all (each trim is a madvise over the whole
// mapping). Not parallel: the pager reads the process's file-backed
// resident size, which other tests' reads would move.
func TestPagerBoundsALoop(t *testing.T) {
	ctx := context.Background()
	path, s := largeStore(t)
	// bbolt's own read, without the store's timer trimming the mapping.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		if tx.Size() < trimMinSize {
			t.Fatalf("store is %d bytes, want at least %d", tx.Size(), trimMinSize)
		}
		addr := tx.DB().Info().Data
		scan := func(paged bool) (n int, sum int, rss int64) {
			dontNeed(addr, tx.Size())
			pg := pager{}
			if paged {
				pg = newPager(tx)
			}
			_ = tx.Bucket(bucketLedger).ForEach(func(_, v []byte) error {
				pg.step()
				n++
				sum += int(v[len(v)/2])
				return nil
			})
			return n, sum, mappedRSS(t, addr)
		}
		n0, sum0, whole := scan(false)
		n1, sum1, paged := scan(true)
		if n0 != 10000 || n1 != n0 || sum1 != sum0 {
			t.Fatalf("paged scan read %d entries (sum %d), unpaged %d (sum %d)", n1, sum1, n0, sum0)
		}
		t.Logf("mapping resident after the scan: %d KiB unpaged, %d KiB paged", whole, paged)
		if whole < 20<<10 {
			t.Fatalf("unpaged scan left %d KiB resident: the measurement does not see the mapping", whole)
		}
		if limit := int64(pageGrowth>>10) + 2<<10; paged > limit {
			t.Errorf("paged scan left %d KiB resident, want at most %d KiB (pageGrowth and about %d entries' pages)", paged, limit, pageEvery)
		}
		// One entry read over and over: its pages stay resident, nothing
		// grows, nothing is trimmed.
		dontNeed(addr, tx.Size())
		pg := newPager(tx)
		b := tx.Bucket(bucketLedger)
		for range 20 * pageEvery {
			pg.step()
			if b.Get(u64(1)) == nil {
				t.Fatal("no first ledger entry")
			}
		}
		if pg.trims != 0 {
			t.Errorf("a loop on one entry's pages trimmed %d times, want none", pg.trims)
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		if p := newPager(tx); p.addr != 0 {
			t.Error("a write transaction has a pager that trims")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// largeStore is a store file of about 40 MB: 10,000 facts of 2.5 KB.
func largeStore(t *testing.T) (string, *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{})
	var reqs []store.WriteRequest
	for i := range 10000 {
		reqs = append(reqs, fact(fmt.Sprintf("fact %d %s", i, strings.Repeat("y", 2500)), nil))
	}
	if _, err := s.Write(context.Background(), reqs, human); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// TestPageCheckBoundsItsMapping: the page check before a write reads every
// page of the file through its own mapping, paged: a check of a 40 MB file
// leaves a few MB of it resident, where the same check without the pager
// leaves the file. Not parallel: it reads the process's resident memory.
func TestPageCheckBoundsItsMapping(t *testing.T) {
	path, _ := largeStore(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, unmap := mapFile(f, fi.Size())
	defer unmap()
	pr, ok := r.(*pagedReader)
	if !ok || pr.pg.addr == 0 {
		t.Fatalf("the page check's reader of a %d-byte file is %T without a pager", fi.Size(), r)
	}
	addr := pr.pg.addr
	if err := checkPages(pr.r, fi.Size()); err != nil { // unpaged
		t.Fatal(err)
	}
	whole := mappedRSS(t, addr)
	dontNeed(addr, fi.Size())
	pr.pg.base = fileResident()
	if err := checkPages(r, fi.Size()); err != nil {
		t.Fatal(err)
	}
	paged := mappedRSS(t, addr)
	t.Logf("mapping resident after the page check: %d KiB unpaged, %d KiB paged (%d trims)", whole, paged, pr.pg.trims)
	if whole < 20<<10 {
		t.Fatalf("unpaged check left %d KiB resident: the measurement does not see the mapping", whole)
	}
	if limit := int64(pageGrowth>>10) + 2<<10; paged > limit {
		t.Errorf("paged check left %d KiB resident, want at most %d KiB", paged, limit)
	}
}

// TestChainCheckIsPaged: the chain check (before every write, and `memory
// ledger --verify`) reads every ledger entry of a read transaction through
// a pager: checking the chain of a 40 MB file leaves a few MB of the
// mapping resident, not the ledger. Not parallel: it reads the process's
// resident memory.
func TestChainCheckIsPaged(t *testing.T) {
	path, s := largeStore(t)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		addr := tx.DB().Info().Data
		dontNeed(addr, tx.Size())
		if err := s.checkChain(tx); err != nil {
			return err
		}
		if kb, limit := mappedRSS(t, addr), int64(pageGrowth>>10)+2<<10; kb > limit {
			t.Errorf("the chain check left %d KiB of the mapping resident, want at most %d KiB", kb, limit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
