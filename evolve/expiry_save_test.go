package evolve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestSaveRefusesPastExpiry: a save whose expiresAt is not after now is an
// invalid request, refused before the store is touched. It was written: an
// untargeted one answered "saved ... reaches the agent through recall"
// although it had already expired (and no listing showed it), and an
// auto-tier one failed its own promotion ("promote ID: conflict: record ID
// is invalidated or expired", naming a record rolled back).
func TestSaveRefusesPastExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		expires func(now time.Time) string
		target  string
		ok      bool
	}{
		{"past, untargeted", func(now time.Time) string { return "2000-01-01T00:00:00Z" }, "", false},
		{"past, auto tier", func(now time.Time) string { return schema.FormatTime(now.Add(-time.Hour)) }, "background.projectContext.deploy_window", false},
		{"now", func(now time.Time) string { return schema.FormatTime(now) }, "background.projectContext.deploy_window", false},
		{"a millisecond ahead", func(now time.Time) string { return schema.FormatTime(now.Add(time.Millisecond)) }, "background.projectContext.deploy_window", true},
		{"future, earned tier", func(now time.Time) string { return schema.FormatTime(now.Add(time.Hour)) }, "judgment.code-review.heuristics", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			req := SaveRequest{Content: "Deploys go out on Tuesdays", ExpiresAt: tc.expires(f.clock.Now()), Actor: human,
				Provenance: schema.Provenance{ConversationID: "c1"}}
			if tc.target != "" {
				req.Target = tgt(t, tc.target)
			}
			if _, err := f.eng.CheckSave(req); (err == nil) != tc.ok {
				t.Errorf("CheckSave: %v; want ok %v", err, tc.ok)
			}
			res, err := f.eng.Save(f.ctx, req)
			if tc.ok {
				if err != nil || res.Status != SaveSaved {
					t.Errorf("Save = %+v, %v; want saved", res, err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "is not after now") {
				t.Errorf("Save = %+v, %v; want an invalid request naming the expiry", res, err)
			}
			if entries, err := f.st.Ledger(f.ctx, store.LedgerFilter{}); err != nil || len(entries) != 0 {
				t.Errorf("the refused save left %d ledger entries (%v)", len(entries), err)
			}
		})
	}
}
