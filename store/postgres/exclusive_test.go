package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestTryLock: the store-wide lock is held by one session at a time: a
// second handle (another process's) gets no lock and is told who holds it
// (this host and pid); after Release it takes it; a lock of another name,
// or of the same name in another schema, is independent; Held says false
// once released.
func TestTryLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Fresh(t)
	open := func(u string) *postgres.Store {
		s, err := postgres.Open(ctx, u, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(url), open(url)
	la, holder, err := a.TryLock(ctx, "garden")
	if err != nil || la == nil || holder != "" {
		t.Fatalf("first TryLock: %v %v %q", la, err, holder)
	}
	if !la.Held(ctx) {
		t.Error("a taken lock is not Held")
	}
	lb, holder, err := b.TryLock(ctx, "garden")
	host, _ := os.Hostname()
	if err != nil || lb != nil || !strings.Contains(holder, fmt.Sprintf("%s pid %d", host, os.Getpid())) {
		t.Fatalf("second TryLock: %v %v, holder %q", lb, err, holder)
	}
	other, _, err := b.TryLock(ctx, "other")
	if err != nil || other == nil {
		t.Fatalf("a lock of another name: %v %v", other, err)
	}
	other.Release()
	c := open(pgtest.Fresh(t))
	lc, _, err := c.TryLock(ctx, "garden")
	if err != nil || lc == nil {
		t.Fatalf("the lock of another store: %v %v", lc, err)
	}
	lc.Release()

	la.Release()
	la.Release() // twice is harmless
	if la.Held(ctx) {
		t.Error("a released lock is Held")
	}
	lb, _, err = b.TryLock(ctx, "garden")
	if err != nil || lb == nil {
		t.Fatalf("TryLock after the release: %v %v", lb, err)
	}
	lb.Release()
}
