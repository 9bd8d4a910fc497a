package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// runDiff prints the unified diff of two compositions of an agent: with or
// without one record, or at two points in time.
func runDiff(ctx context.Context, e *env, args []string) int {
	c := newCompCmd(e, "diff", "AGENT_FILE (--with RECORD_ID | --without RECORD_ID | --from T1 [--to T2]) [--scope k=v,...] [flags]",
		"Prints the unified diff of the rendered system prompt: the composition-diff preview\n"+
			"(\"this line would enter / leave your agent\"). --with adds a record to the current\n"+
			"composition (a candidate, say), --without takes one out, --from/--to compare the\n"+
			"compositions at two times (--to defaults to now). No output means no change.",
		[]string{"text", "json"})
	with := c.fs.String("with", "", "the composition with this record `id` added")
	without := c.fs.String("without", "", "the composition without this record `id`")
	from := c.fs.String("from", "", "compare the composition at `time` T1 (RFC 3339) ...")
	to := c.fs.String("to", "", "... with the one at `time` T2 (default: now)")
	file, code, ok := c.parse(args)
	if !ok {
		return code
	}
	modes := 0
	for _, set := range []bool{*with != "", *without != "", *from != ""} {
		if set {
			modes++
		}
	}
	if modes != 1 || *to != "" && *from == "" {
		c.errorf("want exactly one of --with ID, --without ID or --from T1 [--to T2]")
		return exitUsage
	}
	for _, f := range []struct{ name, id string }{{"--with", *with}, {"--without", *without}} {
		if f.id == "" {
			continue
		}
		if err := schema.CheckIDArg(f.name, f.id); err != nil {
			c.errorf("%v", err) // the id rule's message never carries the raw id
			return exitUsage
		}
	}
	k, err := c.open(file, false)
	if err != nil {
		return c.fail(err)
	}
	defer k.st.Close()

	var before, after string
	var fromName, toName string
	var added, removed []string
	err = k.consistent(ctx, false, func() error {
		if *from != "" {
			r1, err := k.instantiate(ctx, e, *from, "--from", false)
			if err != nil {
				return err
			}
			r2, err := k.instantiate(ctx, e, *to, "--to", false)
			if err != nil {
				return err
			}
			before, after = r1.Prompt.Text(), r2.Prompt.Text()
			fromName, toName = "at "+r1.At, "now"
			if r2.At != "" {
				toName = "at " + r2.At
			}
			added, removed = changedIDs(r1.Report, r2.Report)
		} else {
			res, err := k.instantiate(ctx, e, "", "", false)
			if err != nil {
				return err
			}
			recs := res.Records
			id := *with + *without
			if *with != "" {
				rec, err := k.view.Get(ctx, k.reads(), id)
				if err != nil {
					return err // the view names the record
				}
				if !slices.ContainsFunc(recs, func(r schema.MemoryRecord) bool { return r.ID == id }) {
					recs = append(slices.Clone(recs), rec)
				}
				toName = "with " + id
			} else {
				if _, err := k.view.Get(ctx, k.reads(), id); err != nil {
					return err // the view names the record
				}
				recs = slices.DeleteFunc(slices.Clone(recs), func(r schema.MemoryRecord) bool { return r.ID == id })
				toName = "without " + id
			}
			fromName = "current"
			cfg, rep := engine.Apply(res.Authored, recs, k.policy)
			before, after = res.Prompt.Text(), engine.Render(cfg, rep.Attribution).Text()
			added, removed = changedIDs(res.Report, rep)
		}
		return nil
	})
	if err != nil {
		return c.fail(err)
	}
	c.noteStore(k)
	diff := engine.UnifiedDiff(before, after, fromName, toName)
	if c.format == "json" {
		return writeJSONTo(e, c.name, struct {
			From    string   `json:"from"`
			To      string   `json:"to"`
			Diff    string   `json:"diff"`
			Added   []string `json:"added"`
			Removed []string `json:"removed"`
		}{fromName, toName, diff, nonNil(added), nonNil(removed)})
	}
	fmt.Fprint(e.stdout, diff)
	return exitOK
}

// changedIDs lists the records applied in b but not a (added) and in a but
// not b (removed).
func changedIDs(a, b engine.Report) (added, removed []string) {
	ia, ib := a.IDs(engine.PlacementApplied), b.IDs(engine.PlacementApplied)
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, id := range ia {
		inA[id] = true
	}
	for _, id := range ib {
		inB[id] = true
		if !inA[id] {
			added = append(added, id)
		}
	}
	for _, id := range ia {
		if !inB[id] {
			removed = append(removed, id)
		}
	}
	return added, removed
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
