package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// learningView is one learning with the agent it belongs to.
type learningView struct {
	engine.Learning
	Agent string `json:"agent,omitempty"`
}

func runLearnings(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "learnings", "[AGENT_FILE] [--since 7d|1h|RFC3339] [flags]",
		"What did the agent learn? The promote and demote events since a time, each with its content and provenance.", false)
	var since string
	c.fs.StringVar(&since, "since", "7d", "a duration back from now (`7d`, 1h, 2w) or an RFC 3339 time")
	if _, code, ok := c.parse(args, 0); !ok {
		return code
	}
	from, err := schema.ParseSince(since, e.now())
	if err != nil {
		c.errorf("%v", schema.Named("--since", err))
		return exitUsage
	}
	views := []learningView{}
	seen := map[string]bool{}
	c.snapshot = true
	if code := c.eachAgent(ctx, func(name string, eng *engine.Agent) error {
		ls, err := eng.Learnings(ctx, from)
		if err != nil {
			return err
		}
		for _, l := range ls {
			key := l.At + l.Op + l.RecordID
			if seen[key] {
				continue
			}
			seen[key] = true
			views = append(views, learningView{Learning: l, Agent: name})
		}
		return nil
	}); code != exitOK {
		return code
	}
	sort.SliceStable(views, func(i, j int) bool { return views[i].At < views[j].At })
	if c.format == "json" {
		return c.writeJSON(struct {
			Learnings []learningView `json:"learnings"`
		}{views})
	}
	if len(views) == 0 {
		fmt.Fprintf(e.stdout, "no learnings since %s\n", schema.FormatTime(from))
		return exitOK
	}
	for _, v := range views {
		verb := "learned"
		switch {
		case v.Op == "demote":
			verb = "unlearned"
		case v.Op == "expire":
			verb = "expired"
		case v.Status == engine.StatusDropped:
			verb = "promoted but dropped"
		}
		by := ""
		if v.Actor != "" {
			by = " by " + v.Actor
		}
		fmt.Fprintf(e.stdout, "%s %s %s %s (%s, %s tier)%s: %q", v.At, v.Agent, verb, v.RecordID, v.Target, v.Tier, by, v.Content)
		if v.ConversationID != "" {
			fmt.Fprintf(e.stdout, " from conversation %s", v.ConversationID)
		}
		if v.Reason != "" {
			fmt.Fprintf(e.stdout, " — %s", v.Reason)
		}
		fmt.Fprintln(e.stdout)
	}
	return exitOK
}
