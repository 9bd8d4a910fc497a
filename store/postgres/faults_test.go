package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestConnectionCutMidBatch: the server ends a batch's connection after
// the batch wrote a record and before it finished: Batch fails, nothing of
// it is committed, the ledger verifies, and the store works again.
func TestConnectionCutMidBatch(t *testing.T) {
	loc := pgtest.Fresh(t)
	ctx := context.Background()
	// The store's connections carry a name of this test's own, so the cut
	// below reaches them only, not the transactions of tests running beside
	// it on the same cluster.
	app := fmt.Sprintf("agent-ls-cut-%d", time.Now().UnixNano())
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	s, err := postgres.Open(ctx, loc+sep+"application_name="+app, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	fact := func(c string) []store.WriteRequest { return []store.WriteRequest{{Kind: schema.KindFact, Content: c}} }
	if _, err := s.Write(ctx, fact("before"), human); err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Write(ctx, fact("half"), human); err != nil {
			return err
		}
		// The batch's connection is the one idle in a transaction.
		pgtest.Exec(t, loc, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE state = 'idle in transaction' AND application_name = '`+app+`' AND pid <> pg_backend_pid()`)
		_, err := tx.Write(ctx, fact("after the cut"), human)
		return err
	})
	if err == nil {
		t.Fatal("a batch whose connection was cut succeeded")
	}
	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
	if err != nil {
		t.Fatalf("search after the cut: %v", err)
	}
	if len(res.Records) != 1 || res.Records[0].Content != "before" {
		t.Errorf("records after a cut batch: %+v, want only the one written before", res.Records)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("verify after a cut batch: %v", err)
	}
	if _, err := s.Write(ctx, fact("again"), human); err != nil {
		t.Errorf("write after a cut batch: %v", err)
	}
}

// TestUnreachableServer: a URL nothing answers fails within the connect
// timeout, and the error names the URL without its password.
func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := postgres.Open(context.Background(), "postgres://agent:s3cr3t-pw@127.0.0.1:1/agentls?sslmode=disable", store.Options{LockTimeout: time.Second})
	if err == nil {
		t.Fatal("opened a store on a closed port")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failed after %s, want within the 1 s connect timeout", d)
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") || !strings.Contains(err.Error(), "xxxxx") {
		t.Errorf("error %q shows the password or no redacted URL", err)
	}
}

// TestConnectTimeoutFromURL: a server that accepts the connection and
// never answers is given up on within the URL's connect_timeout (libpq's
// parameter) when there is one, else within the lock timeout; the error
// names the bound that applied.
func TestConnectTimeoutFromURL(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and hold the connections, never answer
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	base := "postgres://agent@" + ln.Addr().String() + "/agentls?sslmode=disable"
	for _, tt := range []struct {
		url  string
		lock time.Duration
		want string
	}{
		{base + "&connect_timeout=1", time.Minute, "within 1s"},
		{base, time.Second, "within 1s"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard
		_, err := postgres.Open(ctx, tt.url, store.Options{LockTimeout: tt.lock})
		cancel()
		if err == nil || !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) with lock timeout %s: %v; want unavailable %s", tt.url, tt.lock, err, tt.want)
		}
	}
}

// TestConcurrentFirstOpens: stores opened at once on an empty schema (each
// with its own connections, as separate processes) all succeed and the
// migrations are applied once.
func TestConcurrentFirstOpens(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	const n = 6
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := postgres.Open(context.Background(), loc, store.Options{})
			if err == nil {
				_, err = s.Write(context.Background(), []store.WriteRequest{{Kind: schema.KindFact, Content: "x"}}, store.Actor{Kind: store.ActorHuman, Name: "ana"})
				s.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("concurrent first open: %v", err)
		}
	}
	steps, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(steps) < 3 {
		t.Fatalf("migrations: %v %v", steps, err)
	}
	if err := pgtest.ExecErr(loc, `DO $$ BEGIN IF (SELECT count(*) FROM agent_ls_migrations) <> `+strconv.Itoa(len(steps))+` OR (SELECT count(*) FROM agent_ls_records) <> 6 THEN RAISE 'wrong counts'; END IF; END $$`); err != nil {
		t.Errorf("after concurrent first opens: %v", err)
	}
}

// TestVerifyFindsTampering: rows changed behind the store's back, by SQL
// with the owner's rights, fail Verify naming what differs: an edited
// record, a derived column that no longer matches its record, a promotion
// row no ledger entry made, the ledger's last entry removed or edited.
func TestVerifyFindsTampering(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		want      string
	}{
		{"record content edited", `UPDATE agent_ls_records SET body = replace(body, 'deploys', 'DEPLOYS')`, "record"},
		{"scope column edited", `UPDATE agent_ls_records SET scope = '{"project":"other"}'`, "scope column"},
		{"promotion row forged", `INSERT INTO agent_ls_promotions (record_id, scope, body) SELECT id, scope, '{"recordId":"' || id || '","tier":"auto"}' FROM agent_ls_records`, "promotion"},
		{"last ledger entry removed", `DELETE FROM agent_ls_ledger WHERE seq = (SELECT max(seq) FROM agent_ls_ledger)`, "entries removed"},
		{"ledger entry edited", `UPDATE agent_ls_ledger SET body = replace(body, '"op":"write"', '"op":"import"')`, "edited"},
		{"head row deleted", `DELETE FROM agent_ls_head`, "head row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc := pgtest.Fresh(t)
			s, err := postgres.Open(ctx, loc, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			recs, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "deploys on tuesdays", Scope: map[string]string{"project": "p"}}}, store.Actor{Kind: store.ActorHuman, Name: "ana"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Corroborate(ctx, recs[0].ID, schema.Support{ConversationID: "c2"}, store.Actor{Kind: store.ActorHuman, Name: "ana"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatalf("verify before tampering: %v", err)
			}
			pgtest.Exec(t, loc, tc.sql)
			err = s.Verify(ctx)
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("verify after %s: %v, want ErrCorrupt mentioning %q", tc.name, err, tc.want)
			}
		})
	}
}
