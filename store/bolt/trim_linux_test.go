//go:build linux

package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
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
// lasts (the timer re-arms), and none starts after stop returns (stop's own
// last trim aside).
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
		stop() // its own last trim runs before stop returns
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
