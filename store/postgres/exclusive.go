package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agent-ls/agent-ls/store"
)

var _ store.Exclusive = (*Store)(nil)

// lockKey is the advisory lock key of the store-wide lock name: derived
// from the store's schema and the name, so two stores (schemas) of one
// database do not exclude each other.
func (s *Store) lockKey(name string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "agent-ls\x00%s\x00%s", s.shared.schema, name)
	return int64(h.Sum64())
}

// holderPrefix starts the application_name of a session holding a lock:
// the others read it in pg_stat_activity to say who holds it.
const holderPrefix = "agent-ls lock "

// TryLock takes the store-wide lock name without waiting: a session-level
// advisory lock (pg_try_advisory_lock) on a key derived from the store's
// schema and name, held on one connection of the pool until Release (or
// until that session ends: the server then releases it). While it holds
// the lock the session's application_name says who it is (host and process
// id), which another's TryLock reports as holder. Release before Close.
func (s *Store) TryLock(ctx context.Context, name string) (store.Lock, string, error) {
	key := s.lockKey(name)
	conn, err := s.shared.pool.Acquire(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("lock %s: %w", name, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, "", fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		holder := lockHolder(ctx, conn, key)
		conn.Release()
		return nil, holder, nil
	}
	host, _ := os.Hostname()
	who := fmt.Sprintf("%s%s by %s pid %d", holderPrefix, name, host, os.Getpid())
	if len(who) > 63 { // NAMEDATALEN-1: the server truncates longer names
		who = who[:63]
	}
	// Best effort: without it the others cannot say who holds the lock.
	_, _ = conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, who)
	return &advisoryLock{conn: conn, key: key}, "", nil
}

// lockHolder says which session holds the advisory lock key: what its
// application_name says after holderPrefix, else its backend pid and client
// address; "" when it cannot tell (the session's row is not visible).
func lockHolder(ctx context.Context, conn *pgxpool.Conn, key int64) string {
	u := uint64(key)
	var pid int32
	var app, addr string
	err := conn.QueryRow(ctx, `SELECT a.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), '')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid::bigint = $1 AND l.objid::bigint = $2
		LIMIT 1`, int64(u>>32), int64(u&0xffffffff)).Scan(&pid, &app, &addr)
	if err != nil {
		return ""
	}
	if rest, ok := strings.CutPrefix(app, holderPrefix); ok {
		if _, by, ok := strings.Cut(rest, " by "); ok {
			return by
		}
	}
	if addr != "" {
		return fmt.Sprintf("server pid %d from %s", pid, addr)
	}
	return fmt.Sprintf("server pid %d", pid)
}

// advisoryLock is a held session-level advisory lock and its connection.
type advisoryLock struct {
	mu   sync.Mutex
	conn *pgxpool.Conn
	key  int64
}

func (l *advisoryLock) Held(ctx context.Context) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return false
	}
	u := uint64(l.key)
	var n int
	err := l.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = pg_backend_pid()
		  AND classid::bigint = $1 AND objid::bigint = $2`, int64(u>>32), int64(u&0xffffffff)).Scan(&n)
	return err == nil && n > 0
}

func (l *advisoryLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.key)
	if err == nil {
		_, err = l.conn.Exec(ctx, `RESET application_name`)
	}
	if err != nil {
		// The session may still hold the lock: end it rather than hand it
		// back to the pool.
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
	l.conn = nil
}
