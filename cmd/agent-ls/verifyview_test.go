package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// TestVerifyConfinedToTheActor: `memory ledger --verify` by an agent actor
// tells the store's verdict (a store that does not verify is exit 1 for
// everyone) but not what another agent's records are: no differences
// naming them, no count of the whole ledger's entries. Another agent's
// records do not exist for an agent (trust model). A human sees each
// difference.
func TestVerifyConfinedToTheActor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	saveJSON(t, dir, db, "--scope", "agent=alpha", "--content", "alpha's fact")
	beta := saveJSON(t, dir, db, "--scope", "agent=beta", "--content", "beta's secret fact")
	for _, args := range [][]string{{"ledger", "--actor", "agent:alpha", "--verify"}, {"--format", "json", "ledger", "--actor", "agent:alpha", "--verify"}} {
		r := mem(t, dir, db, args...)
		if r.code != 0 || strings.Contains(r.stdout, " entries,") || strings.Contains(r.stdout, `"entries"`) {
			t.Errorf("agent %v on a sound store: exit %d, stdout %q; want exit 0 and no count of the whole ledger", args, r.code, r.stdout)
		}
	}
	raw, err := bbolt.Open(db, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("records"))
		k := []byte(beta.ID)
		return b.Put(k, []byte(strings.Replace(string(b.Get(k)), "beta's secret fact", "beta's edited fact", 1)))
	})
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ledger", "--actor", "agent:alpha", "--verify"}, {"--format", "json", "ledger", "--actor", "agent:alpha", "--verify"}} {
		r := mem(t, dir, db, args...)
		if r.code != 1 || strings.Contains(r.stdout+r.stderr, beta.ID) || !strings.Contains(r.stdout+r.stderr, "does not verify") {
			t.Errorf("agent %v after another agent's record was edited: exit %d\nstdout %q\nstderr %q\nwant exit 1, 'does not verify', and never %s", args, r.code, r.stdout, r.stderr, beta.ID)
		}
	}
	h := mem(t, dir, db, "ledger", "--actor", "human:ana", "--verify")
	if h.code != 1 || !strings.Contains(h.stdout+h.stderr, beta.ID) {
		t.Errorf("human --verify: exit %d, stdout %q, stderr %q; want exit 1 naming %s", h.code, h.stdout, h.stderr, beta.ID)
	}
}
