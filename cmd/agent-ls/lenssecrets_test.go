package main

import (
	"strings"
	"testing"
	"time"
)

// TestLensErrorPageHidesPassword: issue 31, reproduction 4 — when the
// database of a postgres:// store is down, the lens's error pages name the
// store without its password (userinfo or password= parameter).
func TestLensErrorPageHidesPassword(t *testing.T) {
	t.Parallel()
	f := newLensFixture(t, "")
	// Port 1 on loopback refuses at once: the database is "down".
	u := "postgres://agentls:LensPW9x@127.0.0.1:1/mem1?password=QueryPW8y&connect_timeout=1"
	ts, c, _ := lensOver(t, f.dir, storeFlags{path: u, lockTimeout: time.Second})
	for _, page := range []string{"/", "/agent?name=deploy-ops", "/record/01JYYYYYYYYYYYYYYYYYYYYYYY", "/timeline?name=deploy-ops"} {
		code, body := get(t, c, ts.URL+page)
		if code < 400 {
			t.Errorf("%s with the database down: %d, want an error page", page, code)
		}
		for _, secret := range []string{"LensPW9x", "QueryPW8y"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: the error page shows the password %s:\n%s", page, secret, body)
			}
		}
	}
}
