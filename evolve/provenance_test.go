package evolve

import (
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestRecurrenceCountsNormalizedConversations: "c1", "C1" and "c1 " are one
// conversation, so the same lesson saved under the three never earns a
// promotion; a control character in a conversation id is refused (issue
// 19, item 1).
func TestRecurrenceCountsNormalizedConversations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lesson := "Check the error of every deferred Close"
	var res SaveResult
	for _, conv := range []string{"c1", "C1", "c1 ", "\u00a0C1"} {
		res = f.save(lesson, "judgment.code-review.heuristics", conv, agentKind)
	}
	if res.State != StateCandidate || res.Record.DistinctConversations() != 1 {
		t.Fatalf("after c1/C1/'c1 ': %+v (%d conversations), want a candidate of 1", res, res.Record.DistinctConversations())
	}
	if res.Record.Provenance.ConversationID != "c1" {
		t.Errorf("stored conversation %q, want the normalized c1", res.Record.Provenance.ConversationID)
	}
	_, err := f.eng.Save(f.ctx, SaveRequest{Content: lesson, Target: tgt(t, "judgment.code-review.heuristics"),
		Provenance: schema.Provenance{ConversationID: "c2\n"}, Actor: agentKind})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("conversation id with a line break: %v, want ErrInvalid", err)
	}
	if res = f.save(lesson, "judgment.code-review.heuristics", "c2", agentKind); res.State != StatePromoted {
		t.Errorf("a second real conversation: %+v, want promoted", res)
	}
}
