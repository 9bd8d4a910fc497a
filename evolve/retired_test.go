package evolve

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// TestRetiredRecordSaysWhy: retargeting or superseding a record that is no
// longer live names why: invalidated (with its reason) or expired (with its
// time). An expired record was called "already invalidated ()", with an
// empty reason, which sent the user looking for an invalidation that never
// happened.
func TestRetiredRecordSaysWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		retire func(f *fixture, id string)
		want   string
	}{
		{"expired", func(f *fixture, id string) { f.clock.Advance(2 * time.Hour) }, "expired at 2026-11-03T15:00:00.000Z"},
		{"invalidated", func(f *fixture, id string) {
			if _, err := f.eng.Invalidate(f.ctx, id, "wrong day", human); err != nil {
				f.t.Fatal(err)
			}
		}, "already invalidated (wrong day)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Deploys go out on Tuesdays", Target: tgt(t, "background.projectContext.deploy_window"),
				ExpiresAt: schema.FormatTime(f.clock.Now().Add(time.Hour)), Actor: human, Provenance: schema.Provenance{ConversationID: "c1"}})
			if err != nil || res.Record == nil {
				t.Fatalf("save: %+v, %v", res, err)
			}
			id := res.Record.ID
			tc.retire(f, id)
			rt, err := f.eng.Retarget(f.ctx, id, *tgt(t, "background.projectContext.release_day"), human)
			if err != nil || rt.Status != SaveConflict || !strings.Contains(rt.Guidance, tc.want) || strings.Contains(rt.Guidance, "()") {
				t.Errorf("Retarget: %+v, %v; want a conflict saying %q", rt, err, tc.want)
			}
			sv, err := f.eng.Save(f.ctx, SaveRequest{Content: "Deploys go out on Thursdays", Target: tgt(t, "background.projectContext.deploy_window"),
				Supersedes: id, Actor: human, Provenance: schema.Provenance{ConversationID: "c2"}})
			if err != nil || sv.Status != SaveConflict || !strings.Contains(sv.Guidance, tc.want) || strings.Contains(sv.Guidance, "()") {
				t.Errorf("Save superseding it: %+v, %v; want a conflict saying %q", sv, err, tc.want)
			}
		})
	}
}
