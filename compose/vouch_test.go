package compose_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// TestRenderRefusesUnvouchedBytes: a promoted record's content and an
// unpromoted candidate's content edited in the bbolt file (the ledger
// untouched) make the composition and the recall block fail naming the
// record, instead of delivering the edited line.
func TestRenderRefusesUnvouchedBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := bolt.Open(path, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &env{t: t, ctx: ctx, s: s, clk: clk}
	prom := e.write("background.teamContext.pager", "PagerDuty atlas-primary", "")
	e.promote(prom.ID, schema.TierAuto)
	cand := e.write("judgment.deploy.heuristics", "Canary for ten minutes first", "")
	req := compose.Request{AgentFile: deployAgent, Store: s, Scope: scope, Policy: overlay.DefaultPolicy(), Now: clk.Now}
	res, err := compose.Instantiate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Recall(ctx, ""); err != nil {
		t.Fatal(err)
	}
	edit := func(from, to string) {
		t.Helper()
		db, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Update(func(tx *bbolt.Tx) error {
			for _, name := range []string{"records", "pscope"} {
				b := tx.Bucket([]byte(name))
				c := b.Cursor()
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if bytes.Contains(v, []byte(from)) {
						if err := b.Put(append([]byte(nil), k...), bytes.Replace(v, []byte(from), []byte(to), 1)); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var ue *store.UnvouchedError
	edit("Canary for ten", "Canary for one")
	res, err = compose.Instantiate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Recall(ctx, ""); !errors.As(err, &ue) || ue.ID != cand.ID {
		t.Errorf("recall with an edited candidate: %v; want it refused naming %s", err, cand.ID)
	}
	edit("atlas-primary", "atlas-primarY")
	if _, err := compose.Instantiate(ctx, req); !errors.As(err, &ue) || ue.ID != prom.ID {
		t.Errorf("instantiate with an edited promoted record: %v; want it refused naming %s", err, prom.ID)
	}
}
