package backend_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// A database store is connected once: every request borrows the same
// connections, a request's Close leaves them to the others, and the pool's
// Close ends them.
func TestPoolLendsOneDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.Fresh(t)
	app := fmt.Sprintf("agent_ls_pool_%d", time.Now().UnixNano())
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	loc = u.String()

	var pool backend.Pool
	first, err := pool.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		st, err := pool.Open(ctx, loc, store.Options{})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if _, err := st.Search(ctx, store.Query{}); err != nil {
			t.Fatalf("search %d: %v", i, err)
		}
		if err := st.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	// The first handle still works after the others closed.
	if _, err := first.Search(ctx, store.Query{}); err != nil {
		t.Fatalf("a borrowed handle stopped working when another closed: %v", err)
	}
	if n := connections(t, app); n == 0 || n > 4 {
		t.Fatalf("21 opens through the pool hold %d connections, want 1 to 4 (one pool)", n)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Search(ctx, store.Query{}); err == nil {
		t.Fatal("a handle still reads after the pool closed")
	}
	if _, err := pool.Open(ctx, loc, store.Options{}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("open after Close: %v, want ErrUnavailable", err)
	}
}

// connections counts the server's sessions with application name app.
func connections(t *testing.T, app string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A file store is opened per call and closed with its handle: the file is
// free for another writer as soon as the request ends.
func TestPoolOpensFilesPerCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	var pool backend.Pool
	defer pool.Close()
	st, err := pool.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := bolt.Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("the file stayed locked after its handle closed: %v", err)
	}
	if _, err := other.Search(ctx, store.Query{}); err != nil {
		t.Fatal(err)
	}
	_ = other.Close()
}
