package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/textkernel"
)

func runGarden(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "garden", "[AGENT_FILE] [flags]",
		"Curate the memory: dedupe near-identical records, report fragmenting entries, conflicts and stale\ncurrentState facts, re-run evals on earned promotions, and print a health report. Gardening only opens\nproposals (as system:garden) and reports findings; it changes nothing a human has not approved.", false)
	if _, code, ok := c.parse(args, 0); !ok {
		return code
	}
	reports := []engine.HealthReport{}
	if code := c.eachAgent(ctx, func(_ string, eng *engine.Agent) error {
		h, err := eng.Garden(ctx)
		if err != nil {
			return err
		}
		reports = append(reports, h)
		return nil
	}); code != exitOK {
		return code
	}
	if c.format == "json" {
		return c.writeJSON(struct {
			Reports []engine.HealthReport `json:"reports"`
		}{reports})
	}
	for i, h := range reports {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		agent := h.Agent
		if agent == "" {
			agent = "(shared records)"
		}
		fmt.Fprintf(e.stdout, "agent %s: %d promoted, %s, %s, composition %d/%d chars (%d learned)\n",
			agent, h.Promoted, schema.Count(len(h.Candidates), "candidate"), schema.Count(h.PendingReviews, "pending review"), h.ComposedChars, h.Ceiling, h.ComposedChars-h.AuthoredChars)
		for _, p := range []string{"background", "judgment", "example", "awareness", "recovery", "manual"} {
			ph := h.Primitives[p]
			if ph.Promoted > 0 {
				fmt.Fprintf(e.stdout, "  %-10s %3d promoted  %5d/%d chars\n", p, ph.Promoted, ph.Chars, ph.Budget)
			}
		}
		for _, cp := range h.Candidates {
			prog := ""
			if cp.Need > 0 {
				prog = " " + schema.ConversationsOf(cp.Have, cp.Need)
			}
			if cp.Pending != "" {
				prog += " pending proposal " + cp.Pending
			}
			fmt.Fprintf(e.stdout, "  candidate %s %s (%s)%s: %s\n", cp.ID, cp.Target, cp.Tier, prog, textkernel.Clip(cp.Content, 80))
		}
		fmt.Fprintf(e.stdout, "  recall: %d candidates (%d never corroborated, %d unused), %d untargeted\n",
			h.Recall.Candidates, h.Recall.NeverCorroborated, h.Recall.Unused, h.Recall.Untargeted)
		for _, f := range h.Findings {
			line := fmt.Sprintf("  %s: %s", f.Kind, f.Message)
			if f.ProposalID != "" {
				line += " [proposal " + f.ProposalID + "]"
			}
			fmt.Fprintln(e.stdout, line)
			// The composition diff the proposal would make, indented.
			if f.ProposalID != "" && f.Diff == "" {
				fmt.Fprintln(e.stdout, "      (approving it changes no rendered line)")
			}
			for _, l := range strings.Split(strings.TrimRight(f.Diff, "\n"), "\n") {
				if l != "" {
					fmt.Fprintln(e.stdout, "      "+l)
				}
			}
		}
	}
	return exitOK
}
