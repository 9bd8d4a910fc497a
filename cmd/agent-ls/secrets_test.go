package main

import (
	"strings"
	"testing"
)

// TestStoreURLSecretsNeverPrinted: issue 31, reproductions 4 and 5 — a
// password in a postgres:// store URL (userinfo, password=, sslpassword=)
// or anywhere in one that does not parse is never printed, whichever
// command takes --store, and lint opens a URL through the one opener
// instead of reading it as a file path.
func TestStoreURLSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	// Port 1 on loopback refuses at once: nothing listens there.
	urls := map[string]string{
		"query password":    "postgres://agentls@127.0.0.1:1/mem1?password=WrongQPass1&connect_timeout=2",
		"sslpassword":       "postgres://agentls@127.0.0.1:1/mem1?sslpassword=SslQPass2&connect_timeout=2",
		"userinfo password": "postgres://agentls:UserPass3@127.0.0.1:1/mem1?connect_timeout=2",
		"malformed":         "postgres://agentls:S3cretPWxyz@[::1:55432/mem1",
	}
	secrets := []string{"WrongQPass1", "SslQPass2", "UserPass3", "S3cretPWxyz"}
	for name, u := range urls {
		for _, args := range [][]string{
			{"memory", "list", "--store", u},
			{"memory", "save", "--store", u, "--content", "x"},
			{"lint", "--store", u, "deploy.agent.yaml"},
			{"render", "--store", u, "deploy.agent.yaml"},
			{"memory", "ledger", "--verify", "--store", u},
		} {
			r := w.cli(args...)
			out := r.stdout + r.stderr
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("%s: %v printed the secret %s:\n%s", name, args[:2], s, out)
				}
			}
			if strings.Contains(out, "postgres:/") && !strings.Contains(out, "postgres://") {
				t.Errorf("%s: %v read the URL as a file path:\n%s", name, args[:2], out)
			}
			if args[0] == "lint" && r.code == exitOK {
				t.Errorf("%s: lint with an unreachable --store exited 0:\n%s", name, out)
			}
		}
	}
}

// TestPostgresConnectErrorOneLine: an unreachable PostgreSQL server is one
// line on stderr (pgx's connect error is several: a header, then one
// indented line per address and attempt), naming the cause and never the
// password (issue 32, small things).
func TestPostgresConnectErrorOneLine(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, args := range [][]string{
		{"memory", "list", "--store", "postgres://u:OneLinePW7@127.0.0.1:1/db?connect_timeout=2"},
		{"memory", "list", "--store", "postgres://u@127.0.0.1:1/db?connect_timeout=2"},
		{"memory", "save", "--store", "postgres://u:OneLinePW7@localhost:1/db?connect_timeout=2", "--actor", "human:ana", "x"},
		{"render", "--store", "postgres://u:OneLinePW7@127.0.0.1:1/db?connect_timeout=2", "deploy.agent.yaml"},
	} {
		r := w.cli(args...)
		if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "\t") ||
			!strings.Contains(r.stderr, "connection refused") || strings.Contains(r.stdout+r.stderr, "OneLinePW7") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming the refusal, without the password", args[:2], r.code, r.stderr)
		}
	}
}
