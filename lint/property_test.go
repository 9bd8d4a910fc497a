package lint_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestRunNeverPanics: any mix of records, proposals and settings lints
// without panicking, deterministically, with every finding inside the file
// and carrying a known rule and severity.
func TestRunNeverPanics(t *testing.T) {
	t.Parallel()
	base := fixtureInput(t, lint.RuleCandidateProgress, "negative")
	known := map[string]bool{}
	for _, r := range lint.Rules() {
		known[r.ID] = true
	}
	lines := len(splitLines(string(base.Doc.Source())))
	targets := []string{"background.projectContext.deploy_window", "background.projectContext.x", "background.currentState.incident",
		"judgment.refunds.heuristics", "judgment.refunds.constraints", "judgment.billing.escalationTriggers",
		"example.refunds", "example.nope", "awareness", "recovery", "manual.search.workflows"}
	contents := []string{"Never refund an order older than 90 days", "Always refund an order older than 90 days", "Tuesdays", "",
		"Refund orders under 20 dollars without asking", "Ask for the order number"}
	payloads := []string{"", `{"scenario":"s","good":"g"}`, `{"name":"orders","description":"d","accessMethod":"a"}`, `{"name":"n"}`, `[1]`}
	rapid.Check(t, func(rt *rapid.T) {
		in := base
		n := rapid.IntRange(0, 12).Draw(rt, "n")
		for i := range n {
			tg, err := schema.ParseTarget(rapid.SampledFrom(targets).Draw(rt, "target"))
			if err != nil {
				rt.Fatal(err)
			}
			day := rapid.IntRange(1, 28).Draw(rt, "day")
			r := schema.MemoryRecord{ID: fmt.Sprintf("r%d", i), Scope: map[string]string{"agent": "support-bot"}, Kind: schema.KindFact,
				Content: rapid.SampledFrom(contents).Draw(rt, "content"), Target: &tg,
				CreatedAt:  fmt.Sprintf("2026-%02d-%02dT10:00:00.000Z", rapid.IntRange(1, 12).Draw(rt, "month"), day),
				Provenance: schema.Provenance{ConversationID: rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "conv")}}
			r.UpdatedAt = r.CreatedAt
			if p := rapid.SampledFrom(payloads).Draw(rt, "payload"); p != "" {
				r.Payload = json.RawMessage(p)
			}
			if rapid.Bool().Draw(rt, "promoted") {
				in.Facts.Promoted = append(in.Facts.Promoted, r)
			} else {
				in.Facts.Candidates = append(in.Facts.Candidates, r)
				if rapid.Bool().Draw(rt, "proposal") {
					in.Facts.Proposals = append(in.Facts.Proposals, store.Proposal{ID: "p" + r.ID, Kind: store.ProposePromote, RecordID: r.ID,
						State: store.ProposalPending, ExpiresAt: "2026-12-05T00:00:00.000Z"})
				}
			}
		}
		in.Facts.Now = rapid.SampledFrom([]string{"", "2026-12-01T12:00:00.000Z", "garbage"}).Draw(rt, "now")
		in.Settings.Ceiling = rapid.SampledFrom([]int{0, 10, 100000}).Draw(rt, "ceiling")
		in.Settings.Budgets.Background = rapid.SampledFrom([]int{0, 5}).Draw(rt, "budget")
		got := lint.Run(in)
		again, _ := json.Marshal(lint.Run(in))
		if first, _ := json.Marshal(got); string(first) != string(again) {
			rt.Fatalf("nondeterministic")
		}
		for _, f := range got {
			if !known[f.Rule] || f.Severity == "" || f.Message == "" {
				rt.Fatalf("finding %+v", f)
			}
			if f.Range.Start.Line < 0 || f.Range.Start.Line >= lines || f.Range.End.Line < f.Range.Start.Line {
				rt.Fatalf("range %+v outside %d lines: %+v", f.Range, lines, f)
			}
		}
		_ = lint.HealthOf(in)
	})
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
