package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultPoll is how often a Listener also reads the store's change counter,
// the fallback that finds commits whose NOTIFY it did not get (behind a
// pooler in transaction mode, which does not deliver notifications, or
// while it reconnected).
const DefaultPoll = time.Second

// ListenOptions configure a Listener.
type ListenOptions struct {
	// Poll is the polling interval: 0 is DefaultPoll, a negative value
	// turns polling off (notifications only).
	Poll time.Duration
	// NoListen turns LISTEN off (polling only), for poolers in transaction
	// mode.
	NoListen bool
	// ConnectTimeout bounds each connection attempt (default 5 s).
	ConnectTimeout time.Duration
	// MaxBackoff bounds the wait between reconnection attempts (default 5 s).
	MaxBackoff time.Duration
}

// Listener tells a follower when the store at a URL may have changed: it
// LISTENs on a dedicated connection for the NOTIFY every commit sends,
// reconnects with exponential backoff when the connection drops (waking
// its follower once reconnected, since commits may have been missed), and
// polls the store's change counter as a fallback. It implements
// events.Source.
type Listener struct {
	location string
	opts     ListenOptions

	mu  sync.Mutex
	err error
}

// NewListener returns a Listener for the store at location.
func NewListener(location string, opts ListenOptions) *Listener {
	if opts.Poll == 0 {
		opts.Poll = DefaultPoll
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	return &Listener{location: location, opts: opts}
}

// Err returns nil: a Listener keeps reconnecting until its context ends.
func (l *Listener) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// listenConn is one connection of the listener with what it knows.
type listenConn struct {
	conn    *pgx.Conn
	schema  string
	changes int64
}

// Watch connects (failing when the server is unreachable within the
// connect timeout) and returns a channel that receives a value after each
// change; it is closed when ctx ends.
func (l *Listener) Watch(ctx context.Context) (<-chan struct{}, error) {
	lc, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	wake := func() {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending; it covers this change
		}
	}
	go func() {
		defer close(ch)
		backoff := 100 * time.Millisecond
		for {
			if lc == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				if backoff *= 2; backoff > l.opts.MaxBackoff {
					backoff = l.opts.MaxBackoff
				}
				var err error
				if lc, err = l.connect(ctx); err != nil {
					lc = nil
					continue
				}
				backoff = 100 * time.Millisecond
				wake() // commits may have happened while disconnected
			}
			changed, err := l.wait(ctx, lc)
			if ctx.Err() != nil {
				_ = lc.conn.Close(context.Background())
				return
			}
			if err != nil {
				_ = lc.conn.Close(context.Background())
				lc = nil
				continue
			}
			if changed {
				wake()
			}
		}
	}()
	return ch, nil
}

func (l *Listener) connect(ctx context.Context) (*listenConn, error) {
	red := Redact(l.location)
	cfg, err := pgx.ParseConfig(l.location)
	if err != nil {
		return nil, fmt.Errorf("listen to store %s: %w", red, scrub(err, l.location, ""))
	}
	cfg.ConnectTimeout = l.opts.ConnectTimeout
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "agent-ls listen"
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("listen to store %s: %w", red, scrub(err, l.location, cfg.Password))
	}
	lc := &listenConn{conn: conn}
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&lc.schema); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("listen to store %s: %w", red, scrub(err, l.location, cfg.Password))
	}
	if !l.opts.NoListen {
		if _, err := conn.Exec(ctx, `LISTEN `+Channel); err != nil {
			_ = conn.Close(context.Background())
			return nil, fmt.Errorf("listen to store %s: %w", red, scrub(err, l.location, cfg.Password))
		}
	}
	lc.changes, _ = readChanges(ctx, conn)
	return lc, nil
}

// readChanges reads the store's change counter; a store without tables
// yet reads as -1.
func readChanges(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var n int64
	err := conn.QueryRow(ctx, `SELECT changes FROM agent_ls_head WHERE id = 1`).Scan(&n)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" || errors.Is(err, pgx.ErrNoRows) {
		return -1, nil
	}
	return n, err
}

// wait returns after a notification for this store (changed), after a poll
// (changed when the counter moved), or with the connection's error.
func (l *Listener) wait(ctx context.Context, lc *listenConn) (bool, error) {
	if l.opts.NoListen {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(l.opts.Poll):
		}
		return l.poll(ctx, lc)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if l.opts.Poll > 0 {
		wctx, cancel = context.WithTimeout(ctx, l.opts.Poll)
	}
	n, err := lc.conn.WaitForNotification(wctx)
	cancel()
	if err == nil {
		if n.Channel == Channel && strings.HasPrefix(n.Payload, lc.schema+" ") {
			// Keep the poll from reporting this change again.
			_, _ = l.poll(ctx, lc)
			return true, nil
		}
		return false, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if wctx.Err() != nil && !lc.conn.IsClosed() {
		return l.poll(ctx, lc)
	}
	return false, err
}

func (l *Listener) poll(ctx context.Context, lc *listenConn) (bool, error) {
	n, err := readChanges(ctx, lc.conn)
	if err != nil {
		return false, err
	}
	changed := n != lc.changes
	lc.changes = n
	return changed, nil
}
