package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// proposalView is one pending review with its composition-diff preview
// (the shape of agent-ls/proposals in docs/LSP-PROTOCOL.md).
type proposalView struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	RecordID    string `json:"recordId"`
	Tier        string `json:"tier"`
	Content     string `json:"content"`
	Target      string `json:"target,omitempty"`
	Agent       string `json:"agent,omitempty"`
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason,omitempty"`
	CreatedAt   string `json:"createdAt"`
	ExpiresAt   string `json:"expiresAt"`
	Diff        string `json:"diff"`
	// SupersededBy and MergedContent: a garden merge (the record merged
	// into, the merged entry's text).
	SupersededBy  string `json:"supersededBy,omitempty"`
	MergedContent string `json:"mergedContent,omitempty"`
}

func runProposals(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "proposals", "[AGENT_FILE] [flags]",
		"List the pending-review queue: promotions and demotions waiting for a human, each with the diff it would\nmake to the composed prompt. Expired proposals are closed first (they fail closed: nothing changes).", false)
	if _, code, ok := c.parse(args, 0); !ok {
		return code
	}
	views := []proposalView{}
	seen := map[string]bool{}
	c.snapshot = true
	// Overdue proposals close first, in a write of their own; the queue is
	// then read on the snapshot.
	c.beforeSnapshot = func(ctx context.Context) error {
		if _, err := c.st.ExpireProposals(ctx); err != nil {
			return fmt.Errorf("expire proposals: %w", err)
		}
		return nil
	}
	if code := c.eachAgent(ctx, func(name string, eng *engine.Agent) error {
		items, err := engine.PendingReviews(ctx, c.db(), eng, name, c.tx != nil, seen)
		if err != nil {
			return err
		}
		for _, it := range items {
			p := it.Proposal
			views = append(views, proposalView{ID: p.ID, Kind: string(p.Kind), RecordID: p.RecordID, Tier: string(p.Tier), Agent: name,
				RequestedBy: p.RequestedBy.String(), Reason: p.Reason, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
				Content: it.Content, Target: it.Target, Diff: it.Diff, SupersededBy: p.SupersededBy, MergedContent: p.MergedContent})
		}
		return nil
	}); code != exitOK {
		return code
	}
	if c.format == "json" {
		return c.writeJSON(struct {
			Proposals []proposalView `json:"proposals"`
		}{views})
	}
	if len(views) == 0 {
		fmt.Fprintln(e.stdout, "no pending proposals")
		return exitOK
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		if v.MergedContent != "" {
			fmt.Fprintf(e.stdout, "%s  merge %s into %s on %s (%s tier), requested by %s, expires %s\n", v.ID, v.RecordID, v.SupersededBy, v.Target, v.Tier, v.RequestedBy, v.ExpiresAt)
			fmt.Fprintf(e.stdout, "  %q\n  merged: %q (edit it with approve %s --content TEXT)\n", v.Content, v.MergedContent, v.ID)
		} else {
			fmt.Fprintf(e.stdout, "%s  %s %s (%s tier) of %s, requested by %s, expires %s\n", v.ID, v.Kind, v.Target, v.Tier, v.RecordID, v.RequestedBy, v.ExpiresAt)
			fmt.Fprintf(e.stdout, "  %q\n", v.Content)
		}
		if v.Reason != "" {
			fmt.Fprintf(e.stdout, "  reason: %s\n", v.Reason)
		}
		if v.Diff != "" {
			fmt.Fprint(e.stdout, indent("  ", v.Diff))
		}
	}
	return exitOK
}

func runApprove(ctx context.Context, e *env, args []string) int {
	return runDecide(ctx, e, args, true)
}

func runReject(ctx context.Context, e *env, args []string) int {
	return runDecide(ctx, e, args, false)
}

func runDecide(ctx context.Context, e *env, args []string, approve bool) int {
	name, line, summary := "approve", "PROPOSAL_ID [AGENT_FILE] [--reason TEXT] [flags]",
		"Approve a pending proposal: carry out its promotion or demotion. Only a human (actor human:NAME) approves;\n--actor agent:NAME is refused (exit 1). An expired or decided proposal cannot be approved."
	if !approve {
		name, line, summary = "reject", "PROPOSAL_ID [AGENT_FILE] --reason TEXT [flags]",
			"Reject a pending proposal: close it without effect. Only a human rejects."
	}
	c := newEvoCmd(e, name, line, summary, true)
	var reason, content string
	reasonUsage := "why you reject (required; kept with the decision)"
	if approve {
		reasonUsage = "why you approve (optional; kept with the decision)"
	}
	c.fs.StringVar(&reason, "reason", "", reasonUsage)
	if approve {
		c.fs.StringVar(&content, "content", "", "a merge proposal's merged `text`, edited (default: the text garden proposed)")
	}
	pos, code, ok := c.parse(args, 1)
	if !ok {
		return code
	}
	if !approve && strings.TrimSpace(reason) == "" {
		c.errorf("--reason is required")
		return exitUsage
	}
	if code, ok := c.open(); !ok {
		return code
	}
	defer c.close()
	a, ok := c.actor()
	if !ok {
		return exitUsage
	}
	if err := schema.CheckIDArg("ID", pos[0]); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if c.missing {
		return c.noStore()
	}
	return c.report(c.decide(ctx, pos[0], a, approve, reason, content))
}

// decide approves or rejects proposal id as actor a through the gates of
// its record's agent (c's store open): engine.Decide, what the lens does
// too.
func (c *evoCmd) decide(ctx context.Context, id string, a store.Actor, approve bool, reason, content string) (engine.Outcome, error) {
	return engine.Decide(ctx, c.st, viewOf(a, c.loc), a, id, approve, reason, content, func(recordID string) (*engine.Agent, error) {
		return c.engineForRecordAs(ctx, recordID, a)
	})
}
