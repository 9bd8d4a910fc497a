package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// TestStoreQueue: reads of one process run together, a write waits for
// them and runs alone, 40 concurrent writes through one queue all land
// (no store-locked error), and a ctx that ends while waiting opens
// nothing.
func TestStoreQueue(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	var opens atomic.Int32
	open := func(ctx context.Context, readOnly bool) (store.Store, error) {
		opens.Add(1)
		return bolt.OpenContext(ctx, path, store.Options{ReadOnly: readOnly, LockTimeout: 50 * time.Millisecond})
	}
	q := NewStoreQueue()
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	ctx := context.Background()
	if QueueFor(path) != QueueFor(filepath.Join(filepath.Dir(path), ".", "memory.db")) || QueueFor(path) == QueueFor(path+"2") {
		t.Error("QueueFor: want one queue per location")
	}

	// Two reads inside at once: each waits for the other to enter.
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	var reads sync.WaitGroup
	for range 2 {
		reads.Go(func() {
			err := q.WithStore(ctx, open, false, func(store.Tx) error {
				entered <- struct{}{}
				<-release
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	<-entered
	<-entered
	// A write started now waits until the reads are done.
	var readsDone atomic.Bool
	wrote := make(chan error, 1)
	go func() {
		wrote <- q.WithStore(ctx, open, true, func(st store.Tx) error {
			if !readsDone.Load() {
				return errors.New("the write ran beside the reads")
			}
			_, err := st.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"project": "q"}, Kind: "fact", Content: "after the reads"}}, ana)
			return err
		})
	}()
	readsDone.Store(true)
	close(release)
	reads.Wait()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}

	// 40 writes at once, each holding the store lock briefly: none is told
	// another process holds it, and no two run at once.
	var inside, overlap atomic.Int32
	var writes sync.WaitGroup
	for i := range 40 {
		writes.Go(func() {
			err := q.WithStore(ctx, open, true, func(st store.Tx) error {
				if inside.Add(1) > 1 {
					overlap.Add(1)
				}
				defer inside.Add(-1)
				_, err := st.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"project": "q"}, Kind: "fact",
					Content: "write " + string(rune('a'+i%26)) + string(rune('a'+i/26))}}, ana)
				return err
			})
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		})
	}
	writes.Wait()
	if overlap.Load() != 0 {
		t.Errorf("%d writes ran beside another", overlap.Load())
	}
	st, err := bolt.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
	if err != nil || len(recs.Records) != 41 {
		t.Errorf("store holds %d records (%v), want 41", len(recs.Records), err)
	}

	// A ctx that ends while waiting opens nothing.
	hold := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = q.WithStore(ctx, open, true, func(store.Tx) error {
			close(held)
			<-hold
			return nil
		})
	}()
	<-held
	before := opens.Load()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := q.WithStore(cctx, open, false, func(store.Tx) error { return nil }); !errors.Is(err, context.Canceled) || opens.Load() != before {
		t.Errorf("a cancelled wait: %v, %d opens", err, opens.Load()-before)
	}
	close(hold)
}

// heldOpener is boltOpener that counts the opens for writing made while
// held is set (a read of the same process holds the store).
type heldOpener struct {
	boltOpener
	held    atomic.Bool
	overlap atomic.Int32
}

func (h *heldOpener) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	if !opts.ReadOnly && h.held.Load() {
		h.overlap.Add(1)
	}
	return h.boltOpener.Open(ctx, loc, opts)
}

// TestVerbsWriteWaitsForReads: a decision taken while a read of the same
// process holds the store (the lens's landing over a large store) waits
// in the store's queue and then lands; it was opened beside the read and
// told, after the lock timeout, that another process held the store.
func TestVerbsWriteWaitsForReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opener := &heldOpener{}
	s, _, p := proposalWorkspace(t, opener, time.Now)
	opts := store.Options{LockTimeout: 50 * time.Millisecond}
	v := s.Verbs(opts)

	entered, release := make(chan struct{}), make(chan struct{})
	read := make(chan error, 1)
	go func() {
		read <- QueueFor(s.Location).WithStore(ctx, s.Opens(opts), false, func(store.Tx) error {
			opener.held.Store(true)
			close(entered)
			<-release
			opener.held.Store(false)
			return nil
		})
	}()
	<-entered
	approved := make(chan error, 1)
	go func() {
		_, err := v.Approve(ctx, p.ID, "")
		approved <- err
	}()
	// The read holds the store until the approve returns or has had the
	// time to open it beside the read; either way, it is released then.
	var err error
	returned := false
	select {
	case err = <-approved:
		returned = true
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	if !returned {
		err = <-approved
	}
	if n := opener.overlap.Load(); n != 0 || err != nil {
		t.Fatalf("approve: %v, %d opens for writing while the read held the store; want it to wait for the read and land", err, n)
	}
	ov, err := v.Overview(ctx)
	if err != nil || len(ov.Proposals) != 0 {
		t.Fatalf("landing after the approve: %d reviews, %v; want the proposal decided", len(ov.Proposals), err)
	}
}
