package evolve

import (
	"errors"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestRetarget: a memory stranded on a judgment domain the agent no longer
// has moves to an existing domain as a new record superseding the old one,
// with its evidence from other conversations carried (so an earned lesson
// with two conversations promotes at once), all in the ledger; a lesson the
// target already holds corroborates that record; bad requests are answers
// or errors as Save gives them.
func TestRetarget(t *testing.T) {
	t.Parallel()
	const lesson = "Ask for a benchmark when a change touches the hot path"
	tests := []struct {
		name     string
		supports []string // extra conversations of the stranded record
		existing bool     // the target already holds the lesson
		to       string
		id       string // "" = the stranded record
		status   string
		state    string
		wantErr  error
	}{
		{name: "earned evidence carried: promotes", supports: []string{"conv-2"}, to: "judgment.code-review.heuristics", status: string(SaveSaved), state: string(StatePromoted)},
		{name: "one conversation: candidate", to: "judgment.code-review.heuristics", status: string(SaveSaved), state: string(StateCandidate)},
		{name: "auto tier target", to: "background.projectContext.perf_rule", status: string(SaveSaved), state: string(StatePromoted)},
		{name: "same lesson already there: corroborates it", existing: true, to: "judgment.code-review.heuristics", status: string(SaveSaved), state: string(StatePromoted)},
		{name: "unknown domain", to: "judgment.nope.heuristics", status: string(SaveRefused)},
		{name: "same target", to: "judgment.review-old.heuristics", status: string(SaveRefused)},
		{name: "locked target", to: "manual.deploy.workflows", status: string(SaveRefused)},
		{name: "no such record", id: "01NOPE", to: "judgment.code-review.heuristics", status: string(SaveNotFound)},
		{name: "invalid target", to: "background.nosuch.k", wantErr: store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			old := f.write(lesson, "judgment.review-old.heuristics", "conv-1", false)
			for _, c := range tt.supports {
				if _, err := f.st.Corroborate(f.ctx, old.ID, schema.Support{ConversationID: c}, agentKind); err != nil {
					t.Fatal(err)
				}
			}
			var existing schema.MemoryRecord
			if tt.existing {
				existing = f.write(lesson, "judgment.code-review.heuristics", "conv-9", false)
			}
			id := old.ID
			if tt.id != "" {
				id = tt.id
			}
			var to schema.MemoryTarget
			if mt, err := schema.ParseTarget(tt.to); err == nil {
				to = mt
			} else {
				to = schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: "nosuch", Key: "k"}
			}
			res, err := f.eng.Retarget(f.ctx, id, to, human)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Status) != tt.status {
				t.Fatalf("status %q, want %q: %+v", res.Status, tt.status, res)
			}
			if tt.status != string(SaveSaved) {
				if tt.id == "" && !f.isValid(old.ID) {
					t.Error("a refused retarget retired the record")
				}
				return
			}
			if string(res.State) != tt.state {
				t.Errorf("state %q, want %q (%s)", res.State, tt.state, res.Guidance)
			}
			got, err := f.st.Get(f.ctx, old.ID)
			if err != nil {
				t.Fatal(err)
			}
			if f.isValid(old.ID) || res.SupersededID != old.ID {
				t.Errorf("old record: valid %v (answer supersededId %q)", f.isValid(old.ID), res.SupersededID)
			}
			if tt.existing {
				// The engine retires it as Supersede does: invalidated, the
				// reason naming the record kept.
				if res.Record.ID != existing.ID || !strings.Contains(got.InvalidReason, existing.ID) {
					t.Errorf("corroborated %s (want the existing %s); old record's reason %q", res.Record.ID, existing.ID, got.InvalidReason)
				}
				if ex, _ := f.st.Get(f.ctx, existing.ID); ex.DistinctConversations() != 2 {
					t.Errorf("the existing record has %d conversations, want 2", ex.DistinctConversations())
				}
				return
			}
			if got.SupersededBy != res.Record.ID {
				t.Errorf("old record superseded by %q, want %s", got.SupersededBy, res.Record.ID)
			}
			nw, err := f.st.Get(f.ctx, res.Record.ID)
			if err != nil {
				t.Fatal(err)
			}
			if nw.Target == nil || *nw.Target != to || nw.Content != old.Content || nw.Provenance != old.Provenance {
				t.Errorf("new record %+v", nw)
			}
			if n := nw.DistinctConversations(); n != 1+len(tt.supports) {
				t.Errorf("new record has %d conversations, want %d", n, 1+len(tt.supports))
			}
			ents, err := f.st.Ledger(f.ctx, store.LedgerFilter{RecordID: nw.ID})
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, e := range ents {
				ops = append(ops, string(e.Op))
			}
			// A write superseding a record is one supersede entry.
			want := "supersede"
			if len(tt.supports) > 0 {
				want = "supersede,corroborate"
			}
			if got := strings.Join(ops, ","); !strings.HasPrefix(got, want) || (tt.state == string(StatePromoted)) != strings.Contains(got, "promote") {
				t.Errorf("ledger of the new record: %s", got)
			}
		})
	}
}
