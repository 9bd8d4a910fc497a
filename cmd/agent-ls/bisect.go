package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// runBisect finds the first ledger entry whose composition of an agent
// regresses on the workspace's eval (engine.Bisect).
func runBisect(ctx context.Context, e *env, args []string) int {
	c := newCompCmd(e, "bisect", "AGENT_FILE [--good T|SEQ] [--bad T|SEQ] [--scope k=v,...] [--format text|json] [flags]",
		"Which learning broke my agent? Runs the workspace's eval (eval.command of .agent-ls.yaml, the\n"+
			"eval gate's command and contract) on the agent composed as it was at ledger points between\n"+
			"good and bad (as render --at replays them), good and bad once each, then a binary search over\n"+
			"the entries that change this agent's composition: ⌈log₂ n⌉ + 2 runs at most. It prints the\n"+
			"first entry whose composition regresses against good (a lower score or fewer passed cases):\n"+
			"its record, content, target, provenance, who promoted it and the command that rolls it back.\n"+
			"T is an RFC 3339 time (the state after the last entry at or before it), SEQ a ledger sequence\n"+
			"number (0: before the first entry). An eval that cannot run fails the command.\n"+
			"Exit 0 found, 1 no regression (bad does not regress against good), 2 error.",
		[]string{"text", "json"})
	good := c.fs.String("good", "", "a known-good ledger point: `T|SEQ` (default: the first entry)")
	bad := c.fs.String("bad", "", "a known-bad ledger point: `T|SEQ` (default: the last entry)")
	file, code, ok := c.parse(args)
	if !ok {
		return code
	}
	// The points' form first: a mistyped one is the usage error, whatever
	// the eval and the store.
	for _, p := range []struct{ name, v string }{{"good", *good}, {"bad", *bad}} {
		if err := engine.CheckBisectPoint(p.name, p.v); err != nil {
			c.errorf("%v", schema.Named("--"+p.name, err))
			return exitUsage
		}
	}
	// The agent file is read before the store is opened (an invalid one
	// is the error, not the missing store).
	authored, err := loadAgent(file)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	k, err := c.open(file, false)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	defer k.st.Close()
	c.noteStore(k)
	suite, err := engine.SuiteRunnerFor(k.ws)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	// The ledger is read in one call (one snapshot); the evals run with no
	// transaction open.
	res, err := engine.Bisect(ctx, engine.BisectRequest{Agent: authored, Store: k.st, Scope: k.scope, Policy: k.policy,
		Good: *good, Bad: *bad, Suite: suite})
	if ve, ok := err.(*schema.ValueError); ok && (ve.Name == "good" || ve.Name == "bad") {
		err = schema.Named("--"+ve.Name, ve) // the engine names the points good and bad
	}
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if c.format == "json" {
		if code := writeJSONTo(e, c.name, res); code != exitOK {
			return code
		}
	} else {
		printBisect(e, res)
	}
	if !res.Found {
		return exitFindings
	}
	return exitOK
}

func printBisect(e *env, res *engine.BisectResult) {
	w := e.stdout
	desc := func(r engine.SuiteResult) string {
		s := "?"
		if r.Score != nil {
			s = fmt.Sprintf("%g", *r.Score)
		}
		return fmt.Sprintf("score %s, passed %d/%d", s, r.Passed, r.Passed+r.Failed)
	}
	searched := fmt.Sprintf("%s between entry %d and entry %d, %d eval runs (at most %d)",
		schema.Count(res.Changes, "change"), res.GoodSeq, res.BadSeq, res.Runs, res.MaxRuns)
	if !res.Found {
		fmt.Fprintf(w, "no regression: %s at entry %d does not regress against %s at entry %d\n", desc(res.Bad), res.BadSeq, desc(res.Good), res.GoodSeq)
		fmt.Fprintf(w, "searched %s\n", searched)
		return
	}
	cu := res.Culprit
	fmt.Fprintf(w, "first regression: ledger entry %d (%s by %s at %s)\n", cu.Seq, cu.Op, cu.Actor, cu.At)
	if r := cu.Record; r != nil {
		fmt.Fprintf(w, "  record      %s\n", r.ID)
		fmt.Fprintf(w, "  content     %s\n", oneLine(r.Content))
		if r.Target != "" {
			fmt.Fprintf(w, "  target      %s\n", r.Target)
		}
		var prov []string
		if p := r.Provenance; p.ConversationID != "" {
			prov = append(prov, "conversation "+p.ConversationID)
		}
		if p := r.Provenance; p.RunID != "" {
			prov = append(prov, "run "+p.RunID)
		}
		if p := r.Provenance; p.Author != "" {
			prov = append(prov, "saved by "+p.Author)
		}
		if len(prov) > 0 {
			fmt.Fprintf(w, "  provenance  %s\n", strings.Join(prov, ", "))
		}
		if r.PromotedBy != "" {
			by := r.PromotedBy
			if r.Approver != "" && r.Approver != r.PromotedBy {
				by += " (approved by " + r.Approver + ")"
			}
			fmt.Fprintf(w, "  promoted by %s\n", by)
		}
	}
	if cu.Reason != "" {
		fmt.Fprintf(w, "  reason      %s\n", oneLine(cu.Reason))
	}
	fmt.Fprintf(w, "  eval        %s → %s (good, entry %d)\n", desc(res.Good), desc(cu.Result), res.GoodSeq)
	fmt.Fprintf(w, "rollback: %s\n", cu.Rollback)
	fmt.Fprintf(w, "searched %s\n", searched)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
