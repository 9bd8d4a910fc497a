// Package pgtest gives tests a PostgreSQL server: the URL scripts/pg.sh
// exports in AGENT_LS_TEST_PG_URL (make test starts a private cluster), and
// a fresh schema of it per test so tests run side by side without seeing
// each other's tables. Without the variable a test skips, except under
// CI=true, where it fails: CI must never skip the PostgreSQL tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the variable naming the test server.
const EnvURL = "AGENT_LS_TEST_PG_URL"

// URL returns the test server's URL, or skips t (fails it under CI=true)
// when there is none.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests through scripts/pg.sh (make test does)", EnvURL)
		}
		t.Skipf("%s is not set: no PostgreSQL server (make test starts one with scripts/pg.sh)", EnvURL)
	}
	return u
}

// Fresh creates an empty schema on the test server, dropped when t ends,
// and returns a URL whose search_path is that schema alone.
func Fresh(t testing.TB) string {
	t.Helper()
	base := URL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "agent_ls_test_" + hex.EncodeToString(b)
	exec(t, base, `CREATE SCHEMA `+name)
	t.Cleanup(func() { exec(t, base, `DROP SCHEMA `+name+` CASCADE`) })
	return WithSchema(t, base, name)
}

// WithSchema returns base with its search_path set to schema.
func WithSchema(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs one statement on the server at location.
func Exec(t testing.TB, location, sql string, args ...any) {
	t.Helper()
	exec(t, location, sql, args...)
}

func exec(t testing.TB, location, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, location)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// ExecErr runs one statement on the server at location and returns its
// error.
func ExecErr(location, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, location)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, args...)
	return err
}
